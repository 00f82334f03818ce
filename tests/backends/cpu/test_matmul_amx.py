"""bf16 and int8 dots on AMX tiles (codegen/lower_matmul_amx.py) are chosen only where the CPU
has AMX, NAIAD_CPU_AMX asks for them and the OS grants the process the tile state
(tile_state.py).

Nothing here executes an AMX instruction: a process without the grant dies of SIGILL on one,
and this suite runs on CPUs without AMX. The code for a Sapphire Rapids (NAIAD_HOST_CPU) is
compiled in a child process, the OS's answer faked there, and only read; the packing of B in
AMX's layout runs here (vector code only). The values of the tiles' products are checked on a
CPU with AMX, against a float64 reference, by a script run there.
"""

import ctypes
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import amx_kernels
import numpy as np
import pytest
from llvmlite import ir

from naiad import knobs
from naiad.backends.cpu import llvm_tools, target, tile_state
from naiad.backends.cpu.codegen import amx_panels, lower_matmul_bf16
from naiad.backends.cpu.codegen.function import FunctionLowering
from naiad.backends.cpu.codegen.views import View

AMX = "+avx512f,+avx512bf16,+amx-tile,+amx-bf16,+amx-int8"
# what the child prints, by kernel and instruction (amx_kernels.instruction_counts)
_NAMES = [f"{kernel}.{word}" for kernel in amx_kernels.KERNELS for word in amx_kernels.WORDS]
# what it prints of each K loop, by C's block and instruction (amx_kernels.k_loop_counts)
_LOOP_NAMES = [
    f"{m}x{n}.{word}" for m, n in amx_kernels.LOOP_BLOCKS for word in amx_kernels.LOOP_WORDS
]


def _refuse():
    raise AssertionError("the OS was asked for the tiles where no feature needs them")


@pytest.mark.parametrize("asked,granted", [(False, True), (True, False), (False, False)])
def test_amx_features_off_unless_asked_and_granted(monkeypatch, asked, granted):
    monkeypatch.setattr(tile_state, "tiles_granted", lambda: granted)
    with knobs.override(NAIAD_CPU_AMX="1" if asked else "0"):
        features = target._granted(AMX).split(",")
    assert "-amx-tile" in features and "-amx-bf16" in features and "-amx-int8" in features
    assert not any(f.startswith("+amx-") for f in features)
    assert "+avx512bf16" in features


def test_amx_features_kept_where_asked_and_granted(monkeypatch):
    monkeypatch.setattr(tile_state, "tiles_granted", lambda: True)
    with knobs.override(NAIAD_CPU_AMX="1"):
        assert target._granted(AMX) == AMX


def test_the_os_is_not_asked_without_amx(monkeypatch):
    monkeypatch.setattr(tile_state, "tiles_granted", _refuse)
    with knobs.override(NAIAD_CPU_AMX="1"):
        assert target._granted("+avx512f,+avx512bf16") == "+avx512f,+avx512bf16"


def test_no_grant_on_a_cpu_without_amx():
    """The request itself is a system call, safe anywhere; on a CPU without AMX it fails. (On
    one with AMX the suite leaves the process's state alone: a grant cannot be taken back.)"""
    if "+amx-tile" in llvm_tools.host_cpu_features().split(","):
        pytest.skip("this CPU has AMX")
    assert tile_state.tiles_granted() is False


_CHILD = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {folder!r})
    from naiad import knobs
    from naiad.backends.cpu import target, tile_state
    import amx_kernels as k
    for granted in (True, False):
        tile_state.tiles_granted = lambda granted=granted: granted
        target.host_target.cache_clear()
        with knobs.override(NAIAD_BACKEND="cpu", NAIAD_CPU_AMX="1"):
            print("@@", granted, *k.instruction_counts())
            if granted:
                print("@@loop", *k.k_loop_counts())
    """
)


def test_sapphire_rapids_dots_on_tiles_only_where_granted(tmp_path):
    """Compiled for a Sapphire Rapids: `tdpbf16ps` with `ldtilecfg` and `tilerelease` where
    the OS grants the tiles (faked), `vdpbf16ps` where it does not, for a dot of one block and
    a dot in a K loop on a transposed A; `tdpbssd` for int8 only where granted. The tile
    instructions of one step of the K loop, with C in tile registers and in its buffer."""
    folder = str(Path(__file__).parent)
    env = {**os.environ, "NAIAD_HOST_CPU": "sapphirerapids", "NAIAD_CACHE_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD.format(folder=folder)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    rows = [line.split()[1:] for line in lines if line.startswith("@@ ")]
    counts = {granted: dict(zip(_NAMES, map(int, rest))) for granted, *rest in rows}
    tiles, vectors = counts["True"], counts["False"]
    for kernel in ("block", "looped"):
        assert tiles[f"{kernel}.tdpbf16ps"] > 0 and tiles[f"{kernel}.vdpbf16ps"] == 0, tiles
        assert tiles[f"{kernel}.ldtilecfg"] > 0 and tiles[f"{kernel}.tilerelease"] > 0, tiles
        assert vectors[f"{kernel}.tdpbf16ps"] == 0 and vectors[f"{kernel}.ldtilecfg"] == 0
        assert vectors[f"{kernel}.vdpbf16ps"] > 0, vectors
    # 64 x 64 x 32 (x 64 on int8): four blocks of 2 x 2 tiles of 16 x 16, one step of k each
    assert tiles["block.tdpbf16ps"] == 16 and tiles["int8.tdpbssd"] == 16, tiles
    assert tiles["int8.ldtilecfg"] > 0 and vectors["int8.tdpbssd"] == 0, vectors
    assert tiles["block.tdpbssd"] == tiles["int8.tdpbf16ps"] == 0, tiles
    (loop,) = [line.split()[1:] for line in lines if line.startswith("@@loop ")]
    per_step = dict(zip(_LOOP_NAMES, map(int, loop)))
    # C of 32 x 32 stays in four tile registers through the K loop (amx_carried.py): a step
    # loads two tiles of A and two of B and stores nothing. C of 64 x 64 (16 tiles) does not
    # fit: STEPS steps gather their operands into panels (amx_panels.py), whose product
    # (its k loop unrolled by LLVM, at most STEPS tile steps) loads and stores C's 16 tiles
    # once, with 4 tiles of A and B per 4 tdpbf16ps; per step it was 16 loads and 16 stores
    # of C for 16 tdpbf16ps.
    assert per_step["32x32.tdpbf16ps"] == 4 and per_step["32x32.tileloadd"] == 4, per_step
    assert per_step["32x32.tilestored"] == 0, per_step
    product = 16 * amx_panels.STEPS
    assert per_step["64x64.tdpbf16ps"] == product and per_step["64x64.tilestored"] == 16
    assert per_step["64x64.tileloadd"] == 16 + product, per_step


def _two_pointer_function(name: str, emit) -> tuple:
    """The library (kept while used) and compiled function `pack(src, dst)` whose body
    `emit(fl, src, dst)` writes (its FunctionLowering, the two pointer arguments)."""
    module = ir.Module(name)
    module.triple = target.host_target().triple
    ptr = ir.PointerType()
    function = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr, ptr]), "pack")
    fl = FunctionLowering(module, None)
    fl.builder = ir.IRBuilder(function.append_basic_block("entry"))
    emit(fl, *function.args)
    fl.builder.ret_void()
    machine = target.host_target().machine
    code = llvm_tools.compile_ir(str(module), machine, name)
    library = llvm_tools.link_object(llvm_tools.create_jit(machine), name, code, {}, ["pack"])
    kind = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
    return library, kind(library["pack"])


def _packed_b(k: int, n: int, transposed: bool) -> tuple:
    """`_two_pointer_function` of lower_matmul_bf16.pack_b (AMX's order, the rows
    interleaved) of a [k, n] bf16 matrix (stored transposed where asked) into [k/2, n] dwords."""

    def emit(fl, b_ptr, scratch):
        fl.scratch = scratch
        i16 = ir.IntType(16)
        b = (
            View(b_ptr, i16, 0, [k, n], [1, k])
            if transposed
            else View.contiguous(b_ptr, i16, [k, n])
        )
        lower_matmul_bf16.pack_b(fl, b, n, k)

    return _two_pointer_function("pack", emit)


@pytest.mark.parametrize("transposed", [False, True])
def test_b_packed_for_tiles_as_interleaved_rows(transposed):
    """AMX's B: dword (p, j) holds B[2p, j] in its low half and B[2p + 1, j] in its high half
    (the rows interleaved); rows of unit stride take the vector shuffle, strided ones the
    element loop. Only the packing runs here (no AMX instruction)."""
    k, n = 64, 48
    bits = np.random.default_rng(7).integers(0, 1 << 16, (k, n), dtype=np.uint16)
    stored = np.ascontiguousarray(bits.T) if transposed else bits
    out = np.full((k // 2, n), 0xDEADBEEF, np.uint32)
    _library, pack = _packed_b(k, n, transposed)
    pack(stored.ctypes.data, out.ctypes.data)
    assert np.array_equal(out & 0xFFFF, bits[0::2]) and np.array_equal(out >> 16, bits[1::2])


def test_b_packed_into_panel_slots():
    """amx_panels.py packs each K step's B into its slot of one panel: here a [k, n] B into
    slots 1 and 3 of a panel of STEPS slots (k/2 rows of n dwords each); the other slots are
    left as they were. Only the packing runs here (no AMX instruction)."""
    k, n, steps = 32, 48, amx_panels.STEPS

    def emit(fl, b_ptr, panel_ptr):
        b = View.contiguous(b_ptr, ir.IntType(16), [k, n])
        for slot in (1, 3):
            into = View(panel_ptr, ir.IntType(32), slot * (k // 2) * n, [k // 2, n], [n, 1])
            lower_matmul_bf16.pack_b(fl, b, n, k, into=into)

    _library, pack = _two_pointer_function("panel", emit)
    bits = np.random.default_rng(11).integers(0, 1 << 16, (k, n), dtype=np.uint16)
    panel = np.full((steps, k // 2, n), 0xDEADBEEF, np.uint32)
    pack(bits.ctypes.data, panel.ctypes.data)
    for slot in range(steps):
        if slot in (1, 3):
            assert np.array_equal(panel[slot] & 0xFFFF, bits[0::2])
            assert np.array_equal(panel[slot] >> 16, bits[1::2])
        else:
            assert (panel[slot] == 0xDEADBEEF).all()
