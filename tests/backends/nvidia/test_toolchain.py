"""The NVIDIA toolchain without a GPU: targets and PTX ISA selection, LLVM IR → PTX (libdevice
linked), PTX checked by NVIDIA's assembler (`ptxas`, from the nvidia-cuda-nvcc wheel of the
`test` extra), and PTX → cubin with its resource counts.

Kernels are written by hand in LLVM IR (ir_kernels.py), so the toolchain is tested apart from the
compiler's front half. Tests needing ptxas or nvJitLink skip, saying why, where they are missing.
"""

import pathlib
import re
import shutil
import subprocess
import sys

import ir_kernels
import llvmlite.binding as llvm
import pytest

from naiad.backends.nvidia import libdevice, link, ptx
from naiad.backends.nvidia import target as nv_target
from naiad.errors import InternalError
from naiad.runtime import driver as runtime_driver

ARCHES = ("sm_80", "sm_90a", "sm_100a")
# The cubin's counts are compared with the linker's report where they were checked against a
# device's: on sm_100a the linker reports 0 bytes of shared memory for a kernel whose cubin
# reserves a 1 KiB `.nv.shared` section (dynamic shared memory and a barrier), and no
# Blackwell device has said which one its driver counts.
LINKED_ARCHES = ("sm_80", "sm_90a")
KERNELS = {
    "add": ir_kernels.ADD,
    "exp": ir_kernels.EXP,
    "sqrt": ir_kernels.SQRT,
    "swap": ir_kernels.SWAP_NEIGHBOURS,
    "local": ir_kernels.LOCAL_ARRAY,
}


def nvidia_tool(name: str) -> str | None:
    """The NVIDIA tool `name` (ptxas, nvdisasm) from an `nvidia-*` wheel of this interpreter
    (the `test` extra installs them), else one on PATH."""
    for entry in sys.path:
        found = sorted(pathlib.Path(entry or ".").glob(f"nvidia/*/bin/{name}"))
        if found:
            return str(found[-1])
    return shutil.which(name)


PTXAS = nvidia_tool("ptxas")
needs_ptxas = pytest.mark.skipif(
    PTXAS is None, reason="ptxas not found (pip install nvidia-cuda-nvcc: the `test` extra)"
)


def _has_libdevice() -> bool:
    try:
        libdevice.path()
    except libdevice.LibdeviceNotFound:
        return False
    return True


needs_libdevice = pytest.mark.skipif(
    not _has_libdevice(), reason="libdevice not found (pip install nvidia-nvvm)"
)
needs_linker = pytest.mark.skipif(
    link.linker_version() is None, reason="no nvJitLink (pip install nvidia-nvjitlink) nor driver"
)


def _kernels(*names: str) -> list:
    """Kernel names as parameters; those calling libdevice skip where it is missing."""
    return [pytest.param(n, marks=needs_libdevice) if n in ("exp", "sqrt") else n for n in names]


def assemble(text: str, arch: str, tmp_path) -> None:
    """Run ptxas on `text` for `arch`: it must assemble (test_passes_tutorials.py uses it too)."""
    source = tmp_path / f"kernel_{arch}.ptx"
    source.write_text(text)
    command = [PTXAS, f"--gpu-name={arch}", str(source), "-o", str(tmp_path / "k.cubin")]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# -- targets and the ISA version ---------------------------------------------------------------
def test_target_names_and_capabilities():
    assert nv_target.target_names() == [
        f"cuda:{a}" for a in ("sm_80", "sm_86", "sm_89", "sm_90")
    ] + ["cuda:sm_90a", "cuda:sm_100", "cuda:sm_100a"]
    assert nv_target.cuda_target("cuda:sm_90a") == nv_target.cuda_target("sm_90a")
    assert nv_target.target_for_capability(9, 0).arch == "sm_90a"
    assert nv_target.target_for_capability(10, 0).arch == "sm_100a"
    assert nv_target.target_for_capability(8, 6).arch == "sm_86"
    with pytest.raises(ValueError, match="unknown CUDA target"):
        nv_target.cuda_target("cuda:sm_75")
    with pytest.raises(ValueError, match=r"compute capability 7\.5"):
        nv_target.target_for_capability(7, 5)


@pytest.mark.parametrize(
    "arch, isa",
    [
        ("sm_80", (7, 0)),
        ("sm_86", (7, 1)),
        ("sm_89", (7, 8)),
        ("sm_90", (7, 8)),
        ("sm_90a", (8, 0)),
        ("sm_100", (8, 6)),
        ("sm_100a", (8, 6)),
    ],
)
def test_least_isa_of_each_arch(arch, isa):
    """A kernel using nothing special declares its arch's minimum, as LLVM's table says."""
    code = ptx.compile_ptx(ir_kernels.ADD, nv_target.cuda_target(arch))
    assert code.isa == isa
    assert f"\n.version {isa[0]}.{isa[1]}\n" in code.text
    assert f"\n.target {arch}\n" in code.text


def _with_asm(instruction: str) -> str:
    """The add kernel with one inline-assembly instruction in its body."""
    call = f'  call void asm sideeffect "{instruction};", ""()\n  br label %done\ndone:'
    return ir_kernels.ADD.replace("  br label %done\ndone:", call)


@pytest.mark.parametrize(
    "instruction, arch, isa",
    [
        ("fence.proxy.async.shared::cta", "sm_90a", (8, 0)),
        ("fence.proxy.async.shared::cta", "sm_90", (8, 0)),
        ("wgmma.fence.sync.aligned", "sm_90a", (8, 0)),
        ("griddepcontrol.wait", "sm_90", (7, 8)),
        ("cvt.rn.f16x2.e4m3x2 %r1, %rs1", "sm_90", (7, 8)),
        ("cvt.rn.f16x2.e4m3x2 %r1, %rs1", "sm_89", (8, 1)),  # later on sm_89 (ptxas says)
        (
            "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu"
            ".sync.aligned [%rd1], [%rd2], 128",
            "sm_90a",
            (8, 3),
        ),
    ],
)
def test_instructions_raise_the_isa(instruction, arch, isa):
    assert nv_target.required_isa(nv_target.cuda_target(arch), _with_asm(instruction)) == isa


@pytest.mark.parametrize(
    "instruction, arch", [("wgmma.fence.sync.aligned", "sm_90"), ("stmatrix.sync", "sm_80")]
)
def test_instruction_the_arch_lacks_is_an_internal_error(instruction, arch):
    with pytest.raises(InternalError, match=f"which {arch} lacks"):
        nv_target.required_isa(nv_target.cuda_target(arch), _with_asm(instruction))


@pytest.mark.parametrize(
    "cuda, isa",
    [
        (11000, (7, 0)),
        (11080, (7, 8)),
        (12000, (8, 0)),
        (12040, (8, 4)),
        (12050, (8, 5)),
        (12060, (8, 5)),
        (12080, (8, 7)),
        (12090, (8, 8)),
        (13000, (9, 0)),
        (13010, (9, 1)),
    ],
)
def test_max_isa_of_each_cuda_version(cuda, isa):
    assert nv_target.max_isa_for_cuda(cuda) == isa


def test_a_driver_too_old_is_a_clear_error():
    sm_90a = nv_target.cuda_target("sm_90a")
    assert nv_target.select_isa(sm_90a, ir_kernels.ADD, 12000) == (8, 0)
    with pytest.raises(nv_target.PtxIsaError, match=r"needs PTX ISA 8\.0.*CUDA 11\.8.*7\.8"):
        ptx.compile_ptx(ir_kernels.ADD, sm_90a, cuda_version=11080)
    with pytest.raises(nv_target.PtxIsaError, match=r"CUDA 10\.2 is too old"):
        nv_target.max_isa_for_cuda(10020)


# -- LLVM IR → PTX -------------------------------------------------------------------------------
def test_invalid_ir_is_an_internal_error_not_an_abort():
    broken = ir_kernels.ADD.replace("%sum = fadd float %vx, %vy", "%sum = fadd float %vx, %nowhere")
    with pytest.raises(InternalError, match="LLVM IR of `add` is invalid"):
        ptx.compile_ptx(broken, nv_target.cuda_target("sm_80"), name="add")


@needs_libdevice
def test_libdevice_only_when_called_and_only_what_is_called():
    """The add kernel links nothing; the exp kernel keeps __nv_expf's code, inlined, and none of
    libdevice's other ~350 functions."""
    assert libdevice.path().name == "libdevice.10.bc"
    add = ptx.compile_ptx(ir_kernels.ADD, nv_target.cuda_target("sm_80"))
    exp = ptx.compile_ptx(ir_kernels.EXP, nv_target.cuda_target("sm_80"))
    assert "__nv_" not in add.llir
    assert "ex2.approx" in exp.text
    for code in (add, exp):
        assert ".func" not in code.text and "__nvvm_reflect" not in code.text
    assert len(re.findall(r"^define ", exp.llir, re.MULTILINE)) == 1


@needs_libdevice
def test_a_kernel_links_the_libdevice_functions_it_declares_and_their_callees():
    """The subset linked for __nv_log2f holds it and the reflect query it makes, nothing else of
    the library; a second kernel of the same declarations reuses it."""
    declaration = "declare float @__nv_log2f(float)"
    subset = llvm.parse_bitcode(libdevice._subset((declaration,), libdevice.path()))
    defined = {f.name for f in subset.functions if not f.is_declaration}
    assert defined == {"__nv_log2f"}
    assert libdevice._subset((declaration,), libdevice.path()) is libdevice._subset(
        (declaration,), libdevice.path()
    )


@needs_libdevice
@pytest.mark.parametrize("ftz", [True, False])
def test_reflect_ftz_follows_the_kernel(ftz):
    """libdevice's __nv_sqrtf asks __CUDA_FTZ (flush) and __CUDA_PREC_SQRT (0: approximate), as
    in Triton, which sets only the first."""
    code = ptx.compile_ptx(ir_kernels.SQRT, nv_target.cuda_target("sm_80"), ftz=ftz)
    instruction = "sqrt.approx.ftz.f32" if ftz else "sqrt.approx.f32"
    assert re.search(rf"\s{re.escape(instruction)}\s", code.text), code.text


@needs_ptxas
@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("kernel", _kernels(*sorted(KERNELS)))
def test_ptx_assembles_with_ptxas(kernel, arch, tmp_path):
    code = ptx.compile_ptx(KERNELS[kernel], nv_target.cuda_target(arch))
    assemble(code.text, arch, tmp_path)


@needs_ptxas
def test_inline_asm_needing_a_newer_isa_assembles(tmp_path):
    """fence.proxy.async needs PTX 8.0 on sm_90: the declared version follows the instruction."""
    code = ptx.compile_ptx(
        _with_asm("fence.proxy.async.shared::cta"), nv_target.cuda_target("sm_90")
    )
    assert code.isa == (8, 0) and "\n.version 8.0\n" in code.text
    assemble(code.text, "sm_90", tmp_path)


# -- PTX → cubin -------------------------------------------------------------------------------
@needs_linker
@pytest.mark.parametrize("arch", LINKED_ARCHES)
@pytest.mark.parametrize("kernel", _kernels("add", "exp", "local", "swap"))
def test_cubin_resources_match_the_linker_report(kernel, arch):
    """The counts read from the cubin's ELF agree with the linker's own summary line
    ("used N registers, ..., N stack, N bytes smem"; a standalone ptxas may allocate
    differently, so only the linker's report counts)."""
    _, cubin = ir_kernels.compile_cubin(KERNELS[kernel], arch)
    assert cubin.data[:4] == b"\x7fELF"
    report = re.search(r"used (\d+) registers, .*?(\d+) stack, (\d+) bytes smem", cubin.log)
    registers, stack, shared = map(int, report.groups())
    assert (cubin.n_regs, cubin.local_bytes, cubin.static_shared) == (registers, stack, shared)
    assert cubin.n_spills == stack // 4
    if kernel == "local":
        assert cubin.local_bytes >= 256  # the 64-float array
    if kernel == "add":
        assert cubin.static_shared == 0


@needs_linker
@needs_libdevice
def test_maxnreg_caps_registers():
    _, free = ir_kernels.compile_cubin(ir_kernels.EXP, "sm_90a")
    _, capped = ir_kernels.compile_cubin(ir_kernels.EXP, "sm_90a", maxnreg=24)
    assert capped.n_regs <= 24 and free.n_regs > 0


def test_no_linker_is_a_clear_error():
    code = ptx.compile_ptx(ir_kernels.ADD, nv_target.cuda_target("sm_80"))
    with pytest.raises(link.LinkerNotFound, match="'nowhere'"):
        link.link(code.text, code.entry, nv_target.cuda_target("sm_80"), linker="nowhere")


# -- the runtime driver without CUDA ---------------------------------------------------------------
def test_cpu_driver_answers_the_tutorials_questions():
    cpu = runtime_driver.CpuDriver()
    target = cpu.get_current_target()
    assert (target.backend, target.warp_size) == ("cpu", 1)
    properties = cpu.utils.get_device_properties(cpu.get_current_device())
    assert properties["multiprocessor_count"] >= 1
    assert {"max_shared_mem", "max_num_regs", "warpSize"} <= properties.keys()
    assert cpu.get_benchmarker() is runtime_driver.do_bench
    with pytest.raises(ValueError, match="one device"):
        cpu.set_current_device(1)


def test_active_driver_is_chosen_once_and_replaceable():
    active = runtime_driver.active
    expected = "cuda" if runtime_driver.CudaDriver.is_active() else "cpu"
    assert active.backend == expected
    try:
        active.set(runtime_driver.CpuDriver())
        assert active.backend == "cpu"
    finally:
        active.reset()
    assert active.backend == expected
