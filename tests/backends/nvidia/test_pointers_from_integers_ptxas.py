"""Pointers made from integers and integers made from pointers, compiled for sm_80 and sm_90a:
`tt.int_to_ptr` / `tt.ptr_to_int` become LLVM's `inttoptr` / `ptrtoint` on global pointers,
and the PTX assembles. The kernels (fixture_kernels/pointers.py) are those that
tests/language/test_pointers_from_integers.py runs in the interpreter and on the CPU, a grouped
GEMM over a table of addresses among them."""

import re

import numpy as np
import pytest
from fixture_kernels.pointers import grouped_matmul, lanes_of_many_arrays, round_trip, walk
from test_lowering import ARCHES, assemble
from test_toolchain import needs_ptxas

_I32, _I64, _F32 = np.zeros(4, np.int32), np.zeros(4, np.int64), np.zeros(64, np.float32)

CASES = {
    "grouped_matmul": (
        grouped_matmul,
        (_I64, _I64, _I64, _I32, _I32, 3),
        {"NUM_SM": 4, "BM": 64, "BN": 64, "BK": 32},
    ),
    "round_trip": (round_trip, (_F32, 1 << 40, _I64, _F32), {"N": 64}),
    "lanes_of_many_arrays": (lanes_of_many_arrays, (_I64, _F32), {"N": 32, "ROWS": 4}),
    "walk": (walk, (_I64, _F32, _F32, 3, True), {"N": 16}),
}


def _global_casts(llir: str, kind: str) -> int:
    pattern = (
        rf"{kind} i64 %\S+ to ptr addrspace\(1\)"
        if kind == "inttoptr"
        else rf"{kind} ptr addrspace\(1\)"
    )
    return len(re.findall(pattern, llir))


@needs_ptxas
@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_pointers_from_integers_assemble(name, arch, tmp_path):
    kernel, args, constexprs = CASES[name]
    compiled = kernel.warmup(*args, grid=(4,), target=f"cuda:{arch}", **constexprs)
    assemble(compiled.asm["ptx"], arch, tmp_path)
    assert _global_casts(compiled.asm["llir"], "inttoptr") > 0
    if name == "round_trip":
        assert _global_casts(compiled.asm["llir"], "ptrtoint") > 0
