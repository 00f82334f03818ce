"""`triton.backends.compiler`: `GPUTarget` (Naiad's own, runtime/driver.py), `Language`, and
`BaseBackend`, here the one class that answers for Naiad's back ends by target.

    backend = make_backend(GPUTarget("cuda", 90, 32))   # triton.compiler.make_backend
    backend.target_name                                  # 'cuda:sm_90a'
    backend.parse_options({"num_warps": 8})             # CompileOptions(num_warps=8, ...)

Triton's stage table (`add_stages`) and its MLIR dialects are Triton's C++ compiler's; a
program that adds its own stages through them gets an error that says so.
"""

from __future__ import annotations

import hashlib
from enum import Enum

from ...backends.registry import CompileOptions
from ...runtime.driver import GPUTarget

__all__ = ["BaseBackend", "GPUTarget", "Language"]


class Language(Enum):
    """The language a source is written in (Triton also has Gluon, which Naiad does not)."""

    TRITON = 0
    GLUON = 1


def target_name(target: GPUTarget) -> str:
    """Naiad's target name for a GPUTarget: `cuda:sm_NN` by its compute capability (9.0 is
    sm_90a, as launches on Hopper compile), `cpu`."""
    from ...backends.nvidia.target import target_for_capability

    if target.backend == "cuda":
        arch = int(str(target.arch).removeprefix("sm_").rstrip("a"))
        return target_for_capability(arch // 10, arch % 10).name
    if target.backend == "cpu":
        return "cpu"
    raise NotImplementedError(
        f"GPUTarget backend {target.backend!r}: Naiad compiles for 'cuda' and 'cpu' only"
    )


class BaseBackend:
    """A Naiad back end seen through Triton's BaseBackend: made for one GPUTarget."""

    supports_native_tensor_specialization = True

    def __init__(self, target: GPUTarget):
        if not self.supports_target(target):
            raise NotImplementedError(f"no Naiad back end compiles for {target}")
        self.target = target
        self.target_name = target_name(target)

    @staticmethod
    def supports_target(target: GPUTarget) -> bool:
        return target.backend in ("cuda", "cpu")

    def hash(self) -> str:
        """What identifies the back end and its target (it enters Triton's cache keys)."""
        return hashlib.sha256(f"naiad-{self.target_name}".encode()).hexdigest()

    def parse_options(self, options: dict) -> CompileOptions:
        """The options Naiad's stages read; the others (another vendor's) are ignored."""
        known = CompileOptions.__dataclass_fields__
        return CompileOptions(**{k: v for k, v in options.items() if k in known})

    def add_stages(self, stages: dict, options, language=None) -> None:
        raise NotImplementedError(
            "BaseBackend.add_stages: Naiad's stages are not Triton's; add passes with "
            "naiad.add_pass instead (docs/passes.md)"
        )

    def load_dialects(self, context) -> None:
        """Naiad's IR needs no MLIR context."""

    def get_module_map(self) -> dict:
        return {}

    def get_codegen_implementation(self, options) -> dict:
        return {}

    def get_arg_specialization(self, arg, ty, **kwargs):
        """No back end of Naiad's specializes an argument beyond Triton's common rules."""
        return None

    @staticmethod
    def parse_attr(desc) -> list:
        """The attributes of an argument's specialization key (`native_specialize_impl`'s):
        `"D"` is divisible by 16."""
        return [["tt.divisibility", 16]] if isinstance(desc, str) and "D" in desc else []


# Triton's back ends are subclasses of BaseBackend; Naiad's one class is the class itself.
NaiadBackend = BaseBackend
