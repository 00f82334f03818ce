"""Debug mode's bounds checks in the NVIDIA lowering (lowering/bounds.py), without a GPU: which
argument each accessed pointer is traced to, the hidden extent parameters and the checks in the
LLVM IR, PTX that ptxas assembles for sm_80 and sm_90a, and the extents the launcher passes.
Their values on the GPU (out of bounds by one on either side, masked-off lanes, identical
results) are tests/gpu/test_debug_gpu.py's.
"""

import re
import subprocess

import pytest
import torch
from test_lowering import ARCHES
from test_toolchain import PTXAS, needs_ptxas

import naiad
import naiad.language as tl
from naiad.backends.nvidia.lowering.bounds import trace_bases
from naiad.dialects import tt
from naiad.dialects.tt.types import PointerType
from naiad.ir.locations import file_line_col
from naiad.ir.parser import parse_module
from naiad.runtime.cuda_launcher import _extents

_ACCESSES = ("tt.load", "tt.store", "tt.atomic_rmw", "tt.atomic_cas")
_MESSAGE = re.compile(r"out-of-bounds (load|store|atomic) through argument `(\w+)`")


@naiad.jit
def _paths(x, y, out, n, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = x + offs
    q = y + offs
    acc = tl.zeros((BLOCK,), tl.float32)
    for _ in range(n):
        acc += tl.load(p)  # x, carried by the loop
        p += BLOCK
        q = tl.where(flag > 0, q, x + offs)  # y or x: not traced
        acc += tl.load(q)
    r = x + offs if flag > 0 else x + offs + 1  # both arms from x
    acc += tl.load(r)
    acc += tl.load(tl.where(flag > 0, x + offs, y + offs))  # two arguments: not traced
    address = tl.load(y.to(tl.pointer_type(tl.int64), bitcast=True))  # y, retyped
    acc += tl.load(address.to(tl.pointer_type(tl.float32)))  # from an integer: not traced
    tl.atomic_add(out + offs, acc)
    tl.atomic_cas(out, 0.0, 1.0)
    block = tl.make_block_ptr(x, (n, BLOCK), (BLOCK, 1), (0, 0), (4, BLOCK), (1, 0))
    for _ in range(n):
        tl.store(block, tl.load(block, boundary_check=(0,)) * 2, boundary_check=(0,))
        block = tl.advance(block, (4, 0))
    tl.store(out + n, tl.sum(acc))  # a scalar pointer


# The argument each access is traced to (0: x, 1: y, 2: out; None: not traced), by its line
# within `_paths`.
_EXPECTED = {
    7: [0],
    10: [None],
    12: [0],
    13: [None],
    14: [1],
    15: [None],
    16: [2],
    17: [2],
    20: [0, 0],
    22: [2],
}
_SIGNATURE = ("*fp32", "*fp32", "*fp32", "i32", "i32")


def _compile(kernel, signature, arch="sm_90a", debug=True, **constexprs):
    return kernel.warmup(*signature, grid=(1,), target=f"cuda:{arch}", debug=debug, **constexprs)


def _kernel_function(compiled):
    module = parse_module(compiled.asm["ttgir"])
    return next(op for op in module.body.ops if isinstance(op, tt.FuncOp))


def test_each_access_is_traced_to_its_argument():
    func = _kernel_function(_compile(_paths, _SIGNATURE, BLOCK=64))
    arguments = [a for a in func.body.block.arguments if isinstance(a.type, PointerType)]
    bases = trace_bases(func, arguments)
    first = _paths.fn.__code__.co_firstlineno
    found: dict[int, list] = {}
    for op in func.walk():
        if op.name in _ACCESSES:
            line = file_line_col(op.location).line - first
            found.setdefault(line, []).append(bases.get(op.ptr))
    assert found == _EXPECTED


def _bounds_messages(llir: str) -> list[tuple[str, str]]:
    return sorted(_MESSAGE.findall(llir))


@needs_ptxas
@pytest.mark.parametrize("arch", ARCHES)
def test_debug_kernel_assembles_and_checks_each_traced_access(arch, tmp_path):
    compiled = _compile(_paths, _SIGNATURE, arch, BLOCK=64)
    plain = _compile(_paths, _SIGNATURE, arch, debug=False, BLOCK=64)
    source = tmp_path / "paths.ptx"
    source.write_text(compiled.asm["ptx"])
    command = [PTXAS, f"--gpu-name={arch}", str(source), "-o", str(tmp_path / "paths.cubin")]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # Two hidden i64 extents per pointer argument, after the kernel's five parameters.
    entry = re.search(r"\.entry _paths\((.*?)\)", compiled.asm["ptx"], re.S).group(1)
    params = [p.strip() for p in entry.split(",")]
    assert len(params) == 5 + 2 * 3
    assert all(p.startswith(".param .u64 _paths_param_") for p in params[5:])
    assert "_paths_param_5" not in plain.asm["ptx"]
    # One message per traced access (the global strings are shared between accesses).
    traced = {("load", "x"), ("load", "y"), ("store", "x"), ("atomic", "out"), ("store", "out")}
    assert set(_bounds_messages(compiled.asm["llir"])) == traced
    assert not _bounds_messages(plain.asm["llir"])
    assert compiled.asm["ptx"].count("call.uni __assertfail") >= len(traced)


@naiad.jit
def _copy(x, out, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs) + 1.0)


def test_vector_accesses_stay_vectors_and_check_each_vector():
    """16-byte accesses keep their width in debug mode; each vector is checked once, from its
    first byte to the end of its last element."""
    compiled = _compile(_copy, ("*fp32", "*fp32"), BLOCK=1024)
    plain = _compile(_copy, ("*fp32", "*fp32"), debug=False, BLOCK=1024)
    for stage in (compiled, plain):
        assert stage.asm["ptx"].count("ld.global.v4.b32") == 2
        assert stage.asm["ptx"].count("st.global.v4.b32") == 2
    llir = compiled.asm["llir"]
    assert sorted(_MESSAGE.findall(llir)) == [("load", "x"), ("store", "out")]
    # The last element of a vector must end inside the extent: its offset is compared with
    # `high - 4` (f32), once per argument.
    assert len(re.findall(r"add i64 %extent\.high\.[01], -4", llir)) == 2


def test_launcher_extents_are_the_storage_around_each_pointer():
    gen = torch.Generator().manual_seed(5)
    base = torch.randn(40, generator=gen)
    view = base[5:9]  # a view: the extent is its storage, as in the interpreter
    ints = torch.randint(-9, 9, (3, 4), generator=gen, dtype=torch.int16)
    args = (view, 7, ints.t()[1:])
    assert _extents(args, (0, 2)) == (-5 * 4, 35 * 4, -1 * 2, 11 * 2)
