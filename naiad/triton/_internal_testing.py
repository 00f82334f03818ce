"""`triton._internal_testing` while Naiad stands in for Triton: the helpers Triton's own test
suite imports (dtype name lists, device predicates, random inputs, conversions between NumPy
arrays and kernel arguments), so that its tests collect and run against Naiad unchanged.

The device predicates answer for the driver Naiad has active: `is_cuda()` on a machine with an
NVIDIA GPU, and every AMD / XPU predicate False. Tests that need Triton's process pool or
compilation listeners get a pool of None and run in this process.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np
import pytest
from numpy.random import RandomState

from .. import knobs as naiad_knobs
from .. import language as tl
from ..runtime.driver import active
from ..runtime.host_arrays import TensorWrapper, reinterpret
from ..runtime.launch_mode import interpreting

int_dtypes = ["int8", "int16", "int32", "int64"]
uint_dtypes = ["uint8", "uint16", "uint32", "uint64"]
integral_dtypes = int_dtypes + uint_dtypes
float_dtypes = ["float16", "float32", "float64"]
float_dtypes_with_bfloat16 = [*float_dtypes, "bfloat16"]
dtypes = integral_dtypes + float_dtypes
dtypes_with_bfloat16 = [*dtypes, "bfloat16"]
torch_float8_dtypes = ["float8_e4m3fn", "float8_e5m2"]
torch_dtypes = ["bool", *int_dtypes, "uint8", *float_dtypes, "bfloat16"]
tma_dtypes = sorted(set(dtypes_with_bfloat16) - {"int64", "uint64", "float64"})

_WARMUP = ContextVar("naiad_compile_warmup", default=False)
# NumPy / torch spellings -> language types (Triton's type_canonicalisation_dict, in effect).
_NAMED_TYPES = {
    "bool": tl.int1,
    "bool_": tl.int1,
    "int1": tl.int1,
    "float8_e4m3fn": tl.float8e4nv,
    "float8e4nv": tl.float8e4nv,
    "float8_e5m2": tl.float8e5,
    "float8e5": tl.float8e5,
    "float8_e4m3fnuz": tl.float8e4b8,
    "float8_e5m2fnuz": tl.float8e5b16,
    "float8e4b15": tl.float8e4b15,
    "bfloat16": tl.bfloat16,
}


def _torch():
    import torch

    return torch


def is_interpreter() -> bool:
    """Whether kernels run in the interpreter: TRITON_INTERPRET=1 as in Triton, or Naiad's
    NAIAD_BACKEND=interpreter (a launch then returns no compiled kernel to read)."""
    return interpreting()


def is_compile_warmup() -> bool:
    return _WARMUP.get()


def random_int(low, high, *, warmup_value=None, **kwargs) -> int:
    if is_compile_warmup():
        return low if warmup_value is None else warmup_value
    return int(_torch().randint(low, high, size=(), **kwargs).item())


def random_float(*, warmup_value=0.5, **kwargs) -> float:
    if is_compile_warmup():
        return warmup_value
    return float(_torch().rand((), **kwargs).item())


def get_current_target():
    """The active driver's target, None in the interpreter."""
    return None if is_interpreter() else active.get_current_target()


def is_cuda() -> bool:
    target = get_current_target()
    return target is not None and target.backend == "cuda"


def _capability() -> int:
    return _torch().cuda.get_device_capability()[0] if is_cuda() else 0


def is_ampere_or_newer() -> bool:
    return _capability() >= 8


def is_hopper_or_newer() -> bool:
    return _capability() >= 9


def is_hopper() -> bool:
    return _capability() == 9


def is_blackwell() -> bool:
    return _capability() == 10


def is_blackwell_ultra() -> bool:
    return False


def is_rubin() -> bool:
    return _capability() >= 11 and _capability() != 12


def is_sm12x() -> bool:
    return _capability() == 12


def _never() -> bool:
    return False


is_hip = is_hip_cdna = is_hip_cdna2 = is_hip_cdna3 = is_hip_cdna4 = _never
is_hip_cdna3_or_newer = is_hip_rdna = is_hip_rdna3 = is_hip_rdna4 = is_hip_rdna4m = _never
is_hip_gfx11 = is_hip_gfx12 = is_hip_gfx1250 = is_xpu = _never


def get_arch() -> str:
    """The active target's arch (an int capability on CUDA, as Triton's), "" in the
    interpreter."""
    target = get_current_target()
    return "" if target is None else str(target.arch)


def get_hip_lds_size() -> int:
    return 65536


def numpy_random(shape, dtype_str, rs: RandomState | None = None, low=None, high=None):
    """Random values of `dtype_str` (integers never 0, so divisions are defined; fp8 as small
    int8 bit patterns; bfloat16 as float32 with its low half cleared)."""
    shape = (shape,) if isinstance(shape, int) else shape
    rs = RandomState(seed=17) if rs is None else rs
    if dtype_str in integral_dtypes:
        info = np.iinfo(getattr(np, dtype_str))
        low = info.min if low is None else max(low, info.min)
        high = info.max if high is None else min(high, info.max)
        values = rs.randint(low, high, shape, dtype=getattr(np, dtype_str))
        values[values == 0] = 1
        return values
    if dtype_str and "float8" in dtype_str:
        return rs.randint(20, 40, shape, dtype=np.int8)
    if dtype_str in float_dtypes:
        return rs.normal(0, 1, shape).astype(dtype_str)
    if dtype_str == "bfloat16":
        bits = rs.normal(0, 1, shape).astype("float32").view("uint32")
        return (bits & np.uint32(0xFFFF0000)).view("float32")
    if dtype_str in ("bool", "int1", "bool_"):
        return rs.normal(0, 1, shape) > 0.0
    raise RuntimeError(f"Unknown dtype {dtype_str}")


def to_triton(x: np.ndarray, device, dst_type=None):
    """`x` as a torch tensor on `device`; unsigned and fp8 data as a TensorWrapper of the
    language type over a signed tensor of the same bits."""
    torch = _torch()
    name = x.dtype.name
    if name in uint_dtypes:
        signed = x.astype(getattr(np, name[1:]))
        return reinterpret(torch.tensor(signed, device=device), getattr(tl, name))
    if dst_type and "float8" in dst_type:
        return reinterpret(torch.tensor(x, device=device), str_to_triton_dtype(dst_type))
    if name == "float32" and dst_type == "bfloat16":
        return torch.tensor(x, device=device).bfloat16()
    return torch.tensor(x, device=device)


def str_to_triton_dtype(x: str):
    if x in _NAMED_TYPES:
        return _NAMED_TYPES[x]
    return getattr(tl, x)


def torch_dtype_name(dtype) -> str:
    if isinstance(dtype, tl.dtype):
        return dtype.name
    torch = _torch()
    if isinstance(dtype, torch.dtype):
        return str(dtype).removeprefix("torch.")
    raise TypeError(f"not a triton or torch dtype: {type(dtype)}")


def to_numpy(x):
    if isinstance(x, TensorWrapper):
        return x.base.cpu().numpy().astype(getattr(np, torch_dtype_name(x.dtype)))
    torch = _torch()
    if isinstance(x, torch.Tensor):
        if x.dtype is torch.bfloat16:
            return x.cpu().float().numpy()
        return x.cpu().numpy()
    raise ValueError(f"Not a triton-compatible tensor: {x}")


def supports_tma(byval_only=False) -> bool:
    return is_interpreter() or is_hopper_or_newer()


def supports_ws() -> bool:
    return is_interpreter() or is_hopper_or_newer()


def supports_clc() -> bool:
    return _capability() >= 10


def tma_skip_msg(byval_only=False) -> str:
    return "Requires TMA support (NVIDIA Hopper or newer)"


requires_tma = pytest.mark.skipif(not supports_tma(), reason=tma_skip_msg())


def default_alloc_fn(size: int, align: int, _):
    return _torch().empty(size, dtype=_torch().int8, device="cuda")


def unwrap_tensor(t):
    return t.base if isinstance(t, TensorWrapper) else t


@contextlib.contextmanager
def use_process_pool(preload_module=None):
    """Triton's tests may run kernels in a pool of processes; under Naiad they run here."""
    yield None


@dataclass
class ProcessResult:
    """What `run_in_process` gives, as Triton's: the exception the call raised (None when it
    returned) and what was written to stderr meanwhile."""

    exc: BaseException | None
    driver_stderr_output: str


def run_in_process(client_fn, args=(), kwargs=None, env=None) -> ProcessResult:
    """Run `client_fn(*args, **kwargs)` with `env` set and report it as Triton's helper does;
    here in this process (a failed kernel assertion on the CPU is an exception, not a lost
    device), stderr captured at its file descriptor and as Python's `sys.stderr`."""
    saved = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    exc = None
    try:
        with tempfile.TemporaryFile("w+") as captured, _stderr_into(captured):
            try:
                client_fn(*args, **(kwargs or {}))
            except Exception as error:  # reported, as Triton's helper reports it
                exc = error
            sys.stderr.flush()
            captured.seek(0)
            output = captured.read()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return ProcessResult(exc, output)


@contextlib.contextmanager
def _stderr_into(file):
    """Send file descriptor 2 and `sys.stderr` into `file` for the block."""
    sys.stderr.flush()
    kept = os.dup(2)
    os.dup2(file.fileno(), 2)
    try:
        with contextlib.redirect_stderr(file):
            yield
    finally:
        os.dup2(kept, 2)
        os.close(kept)


def _fresh_knobs_impl(skipped_attr=None):
    """(fresh, reset) for Triton's knob fixtures. `fresh()` puts a reset copy of every group of
    triton.knobs (but those named in `skipped_attr`) in the group's place, removes the groups'
    environment variables, turns `propagate_env` on and gives the module; `reset()` puts the
    groups (and so Naiad's settings they map), the variables and `propagate_env` back."""
    from . import knobs

    groups = {
        name: group
        for name, group in vars(knobs).items()
        if isinstance(group, knobs.base_knobs) and name not in set(skipped_attr or ())
    }
    saved_environment: dict[str, str | None] = {}
    saved_propagate = knobs.propagate_env

    def fresh():
        for name, group in groups.items():
            setattr(knobs, name, group.copy().reset())
            for knob in group.knob_descriptors.values():
                if knob.key and knob.key not in saved_environment:
                    saved_environment[knob.key] = naiad_knobs.read_environment(knob.key)
                    naiad_knobs.write_environment(knob.key, None)
        knobs.propagate_env = True
        return knobs

    def reset():
        for name, group in groups.items():
            setattr(knobs, name, group)
        for key, text in saved_environment.items():
            naiad_knobs.write_environment(key, text)
        knobs.propagate_env = saved_propagate

    return fresh, reset
