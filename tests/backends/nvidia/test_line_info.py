"""Source lines in both back ends' LLVM IR (backends/debug_info.py): DILocations at the
kernel's own lines, PTX `.loc` lines naming its file, nothing with NAIAD_DISABLE_LINE_INFO,
and the kernel's Python locals as DILocalVariables with NAIAD_EXTRACT_DI_LOCAL_VARIABLES."""

import inspect
import pathlib
import re
import subprocess

import numpy as np
import pytest
from test_toolchain import PTXAS, assemble, needs_ptxas, nvidia_tool

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.backends.cpu import elf_object
from naiad.backends.debug_info import python_name

LOCALS = ["pid", "block_start", "offsets", "mask", "x", "y", "output"]


NVDISASM = nvidia_tool("nvdisasm")


@naiad.jit
def _add(x_ptr, y_ptr, output_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK
    offsets = block_start + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x * y + 1.5
    tl.store(output_ptr + offsets, output, mask=mask)


_LINES, _FIRST = inspect.getsourcelines(_add.fn)
KERNEL_LINES = set(range(_FIRST, _FIRST + len(_LINES)))


def _compile(target, **settings):
    x = np.random.default_rng(3).random(300, dtype=np.float32)
    with knobs.override(NAIAD_ALWAYS_COMPILE=1, **settings):
        return _add.warmup(x, x, x, 300, grid=(3,), BLOCK=128, target=target)


def _located_lines(llir: str) -> set[int]:
    return {int(n) for n in re.findall(r"!DILocation\(line: (\d+)", llir)} - {0}


@pytest.mark.parametrize("target", ["cpu", "cuda:sm_90a"])
def test_llir_locates_the_kernels_lines(target):
    llir = _compile(target).asm["llir"]
    assert "emissionKind" in llir and "!dbg" in llir
    lines = _located_lines(llir)
    assert lines <= KERNEL_LINES and len(lines) >= 4  # the statements left after -O2
    assert 'filename: "test_line_info.py"' in llir
    assert "dbg_value" not in llir and "DILocalVariable" not in llir


@pytest.mark.parametrize("target", ["cpu", "cuda:sm_90a"])
def test_no_debug_info_with_line_info_off(target):
    llir = _compile(target, NAIAD_DISABLE_LINE_INFO=1, NAIAD_EXTRACT_DI_LOCAL_VARIABLES=1)
    assert "!dbg" not in llir.asm["llir"] and "DILocalVariable" not in llir.asm["llir"]
    if target != "cpu":
        assert ".loc" not in llir.asm["ptx"] and ".file" not in llir.asm["ptx"]


@needs_ptxas
def test_ptx_has_loc_lines_of_the_kernels_file(tmp_path):
    ptx = _compile("cuda:sm_90a").asm["ptx"]
    (number,) = re.findall(r'\.file\s+(\d+) ".*test_line_info\.py"', ptx)
    lines = {int(n) for n in re.findall(rf"\.loc\s+{number} (\d+) \d+", ptx)}
    assert lines <= KERNEL_LINES and len(lines) >= 6
    assert ", debug" not in ptx and ".debug_info" not in ptx  # line tables only
    assemble(ptx, "sm_90a", tmp_path)


@pytest.mark.skipif(NVDISASM is None, reason="nvdisasm not found (the `test` extra)")
@pytest.mark.parametrize("disabled", [False, True])
def test_cubin_line_table_maps_sass_to_the_kernels_lines(disabled, tmp_path):
    """What Nsight Compute's source view reads: the linker's `-lineinfo` line table, each SASS
    instruction's kernel line (nvdisasm -g); none with line info off."""
    compiled = _compile("cuda:sm_90a", NAIAD_DISABLE_LINE_INFO=int(disabled))
    if "cubin" not in compiled.asm:
        pytest.skip("no linker for PTX (nvJitLink or a driver)")
    path = tmp_path / "kernel.cubin"
    path.write_bytes(compiled.asm["cubin"])
    sass = subprocess.run([NVDISASM, "-g", str(path)], capture_output=True, text=True).stdout
    found = re.findall(r'## File "(.*)", line (\d+)', sass)
    if disabled:
        assert not found
        return
    assert {pathlib.Path(file).name for file, _ in found} == {"test_line_info.py"}
    lines = {int(line) for _, line in found}
    assert lines <= KERNEL_LINES and len(lines) >= 6


@pytest.mark.parametrize("target", ["cpu", "cuda:sm_90a"])
def test_local_variables_described(target, tmp_path):
    compiled = _compile(target, NAIAD_EXTRACT_DI_LOCAL_VARIABLES=1)
    llir = compiled.asm["llir"]
    assert "dbg_value" in llir
    for name in LOCALS:
        assert f'!DILocalVariable(name: "{name}"' in llir
    # the program id has a value on both (on the CPU an argument of the program function)
    (pid,) = re.findall(r'(![0-9]+) = !DILocalVariable\(name: "pid"', llir)
    assert re.search(rf"#dbg_value\([^,]+, {pid},", llir)
    if target != "cpu" and PTXAS is not None:
        assemble(compiled.asm["ptx"], "sm_90a", tmp_path)


@naiad.jit(noinline=True)
def _offset(pid, BLOCK: tl.constexpr):
    start = pid * BLOCK
    return start + 1


@naiad.jit
def _shifted(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    shift = _offset(tl.program_id(0), BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + shift)


@pytest.mark.parametrize("target", ["cpu", "cuda:sm_90a"])
def test_noinline_callee_has_its_own_subprogram(target):
    """The back ends inline a `noinline` function: its lines are located in a subprogram of
    its own name, inlined at its call."""
    x = np.random.default_rng(4).random(64, dtype=np.float32)
    with knobs.override(NAIAD_ALWAYS_COMPILE=1):
        llir = _shifted.warmup(x, x, grid=(1,), BLOCK=64, target=target).asm["llir"]
    (callee,) = re.findall(r'(![0-9]+) = distinct !DISubprogram\(name: "[^"]*_offset[^"]*"', llir)
    _, first = inspect.getsourcelines(_offset.fn)
    inlined = re.findall(
        rf"!DILocation\(line: (\d+), column: \d+, scope: {callee}, inlinedAt", llir
    )
    assert inlined and {int(line) for line in inlined} <= {first + 2, first + 3}


@naiad.jit
def _scaled(v, factor):
    w = v * factor
    return w + 1.0


@naiad.jit
def _difference(v):
    return _scaled(v, 2.0) - _scaled(v, 3.0)


@naiad.jit
def _nested(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, _difference(tl.load(x_ptr + offsets)))


def _subprogram(llir: str, name: str) -> tuple[str, int]:
    """The metadata id and `line` of the DISubprogram called `name`."""
    ((node, line),) = re.findall(
        rf'(![0-9]+) = distinct !DISubprogram\(name: "{name}", linkageName: "[^"]*", '
        rf"scope: ![0-9]+, file: ![0-9]+, line: (\d+)",
        llir,
    )
    return node, int(line)


@pytest.mark.parametrize("target", ["cpu", "cuda:sm_90a"])
def test_inlined_jit_helpers_have_their_own_subprograms(target, tmp_path):
    """Each inlined `@jit` helper is a DISubprogram of its Python name at its `def`, its
    lines inlined at its call: `_scaled`'s at `_difference`'s, inlined at the kernel's."""
    x = np.random.default_rng(6).random(64, dtype=np.float32)
    with knobs.override(NAIAD_ALWAYS_COMPILE=1):
        compiled = _nested.warmup(x, x, grid=(1,), BLOCK=64, target=target)
    llir = compiled.asm["llir"]
    inner, inner_def = _subprogram(llir, "_scaled")
    outer, outer_def = _subprogram(llir, "_difference")
    # the `def` line, below the decorator's
    assert inner_def == inspect.getsourcelines(_scaled.fn)[1] + 1
    assert outer_def == inspect.getsourcelines(_difference.fn)[1] + 1
    sites = re.findall(
        rf"!DILocation\(line: (\d+), column: \d+, scope: {inner}, inlinedAt: (![0-9]+)", llir
    )
    assert {int(line) for line, _ in sites} <= {inner_def + 1, inner_def + 2} and sites
    for _, site in sites:  # each call of `_scaled` lies in `_difference`, itself inlined
        (line,) = re.findall(
            rf"^{site} = (?:distinct )?!DILocation\(line: (\d+), column: \d+, scope: {outer}, "
            r"inlinedAt: ![0-9]+",
            llir,
            re.MULTILINE,
        )
        assert int(line) == outer_def + 1
    if target == "cpu":  # the object's DWARF names both (its inlined subroutines' origins)
        obj = elf_object.parse(compiled.binary)
        (strings,) = [obj.contents(s) for s in obj.sections if s.name == ".debug_str"]
        assert b"\0_scaled\0" in strings and b"\0_difference\0" in strings
    elif PTXAS is not None:
        assemble(compiled.asm["ptx"], "sm_90a", tmp_path)


@pytest.mark.parametrize(
    "symbol, name",
    [
        ("__main__.scale__fp32S64S_c2.0", "scale"),
        ("pkg.kernels.Outer.helper__i32_cNone", "helper"),
        ("__main__.no_arguments__", "no_arguments"),
        ("add_kernel", "add_kernel"),
    ],
)
def test_python_name_of_a_specialized_symbol(symbol, name):
    assert python_name(symbol) == name


def test_cpu_values_unchanged_by_debug_info():
    """Launched on the CPU (whose launcher reads the settings itself), each setting compiles
    its own kernel, and all compute the same values."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal(1000).astype(np.float32)
    y = rng.standard_normal(1000).astype(np.float32)
    expected = (x.astype(np.float64) * y + 1.5).astype(np.float32)
    cases = (
        ({}, True, False),
        ({"NAIAD_EXTRACT_DI_LOCAL_VARIABLES": 1}, True, True),
        ({"NAIAD_DISABLE_LINE_INFO": 1}, False, False),
    )
    for settings, lines, variables in cases:
        out = np.full_like(x, np.nan)
        with knobs.override(NAIAD_BACKEND="cpu", NAIAD_CPU_TIERING="off", **settings):
            _add.forget_compiled()
            llir = _add[(8,)](x, y, out, 1000, BLOCK=128).asm["llir"]
        np.testing.assert_allclose(out, expected, rtol=2e-7, atol=1e-6)
        assert ("!dbg" in llir, "DILocalVariable" in llir) == (lines, variables)
