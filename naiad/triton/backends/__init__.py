"""`triton.backends` while Naiad stands in for Triton: `backends`, Triton's table of back ends by
name, here Naiad's (`cuda` and `cpu`), each a compiler class and a driver class."""

from __future__ import annotations

from dataclasses import dataclass

from ...runtime.driver import CpuDriver, CudaDriver
from . import compiler
from .compiler import BaseBackend, NaiadBackend


@dataclass(frozen=True)
class Backend:
    """A back end as Triton lists it: its compiler class and its driver class."""

    compiler: type
    driver: type


backends = {
    "cuda": Backend(compiler=NaiadBackend, driver=CudaDriver),
    "cpu": Backend(compiler=NaiadBackend, driver=CpuDriver),
}

__all__ = ["Backend", "BaseBackend", "backends", "compiler"]
