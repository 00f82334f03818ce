"""Kernels written by hand in LLVM IR for `nvptx64-nvidia-cuda`, and their trip to a cubin: the
toolchain is tested with them on any machine (tests/backends/nvidia) and run on the GPU
(tests/gpu/test_driver.py) without the compiler's front half.

Each kernel runs one element per thread, `i = ctaid.x * ntid.x + tid.x`, guarded by `i < n`.
"""

from naiad.backends.nvidia import link, ptx
from naiad.backends.nvidia import target as nv_target

_HEADER = """
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
"""

_INDEX = """
  %pid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %size = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %base = mul i32 %pid, %size
  %i = add i32 %base, %tid
  %inside = icmp slt i32 %i, %n
  br i1 %inside, label %body, label %done
"""

# out[i] = x[i] + y[i]
ADD = (
    _HEADER
    + """
define ptx_kernel void @add_kernel(ptr addrspace(1) %x, ptr addrspace(1) %y,
                                   ptr addrspace(1) %out, i32 %n) {
entry:"""
    + _INDEX
    + """
body:
  %px = getelementptr float, ptr addrspace(1) %x, i32 %i
  %py = getelementptr float, ptr addrspace(1) %y, i32 %i
  %vx = load float, ptr addrspace(1) %px, align 4
  %vy = load float, ptr addrspace(1) %py, align 4
  %sum = fadd float %vx, %vy
  %po = getelementptr float, ptr addrspace(1) %out, i32 %i
  store float %sum, ptr addrspace(1) %po, align 4
  br label %done
done:
  ret void
}
"""
)


def _unary(name: str, function: str) -> str:
    """out[i] = function(x[i]) for a libdevice `function` of one f32."""
    return (
        _HEADER
        + f"""
declare float @{function}(float)

define ptx_kernel void @{name}(ptr addrspace(1) %x, ptr addrspace(1) %out, i32 %n) {{
entry:"""
        + _INDEX
        + f"""
body:
  %px = getelementptr float, ptr addrspace(1) %x, i32 %i
  %vx = load float, ptr addrspace(1) %px, align 4
  %r = call float @{function}(float %vx)
  %po = getelementptr float, ptr addrspace(1) %out, i32 %i
  store float %r, ptr addrspace(1) %po, align 4
  br label %done
done:
  ret void
}}
"""
    )


EXP = _unary("exp_kernel", "__nv_expf")
SQRT = _unary("sqrt_kernel", "__nv_sqrtf")

# out[i] = x[i ^ 1], exchanged through dynamic shared memory above the 48 KB every block gets:
# the launch must ask for SHARED_BYTES, which needs the kernel's attribute raised.
SHARED_OFFSET = 64 * 1024
SHARED_BYTES = SHARED_OFFSET + 4 * 1024
SWAP_NEIGHBOURS = (
    _HEADER
    + f"""
@smem = external addrspace(3) global [0 x float], align 16
declare void @llvm.nvvm.barrier0()

define ptx_kernel void @swap_kernel(ptr addrspace(1) %x, ptr addrspace(1) %out, i32 %n) {{
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %pid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %size = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %pid, %size
  %i = add i32 %base, %tid
  %px = getelementptr float, ptr addrspace(1) %x, i32 %i
  %vx = load float, ptr addrspace(1) %px, align 4
  %slot = add i32 %tid, {SHARED_OFFSET // 4}
  %ps = getelementptr float, ptr addrspace(3) @smem, i32 %slot
  store float %vx, ptr addrspace(3) %ps, align 4
  call void @llvm.nvvm.barrier0()
  %other = xor i32 %slot, 1
  %pt = getelementptr float, ptr addrspace(3) @smem, i32 %other
  %vt = load float, ptr addrspace(3) %pt, align 4
  %po = getelementptr float, ptr addrspace(1) %out, i32 %i
  store float %vt, ptr addrspace(1) %po, align 4
  ret void
}}
"""
)

# A per-thread array indexed at run time lives in local memory: a stack frame to report.
LOCAL_ARRAY = (
    _HEADER
    + """
define ptx_kernel void @local_kernel(ptr addrspace(1) %x, ptr addrspace(1) %out, i32 %n) {
entry:
  %buffer = alloca [64 x float], align 4
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %px = getelementptr float, ptr addrspace(1) %x, i32 %tid
  %vx = load float, ptr addrspace(1) %px, align 4
  %a = and i32 %tid, 63
  %pa = getelementptr [64 x float], ptr %buffer, i32 0, i32 %a
  store volatile float %vx, ptr %pa, align 4
  %b = xor i32 %a, 5
  %pb = getelementptr [64 x float], ptr %buffer, i32 0, i32 %b
  %vb = load volatile float, ptr %pb, align 4
  %po = getelementptr float, ptr addrspace(1) %out, i32 %tid
  store float %vb, ptr addrspace(1) %po, align 4
  ret void
}
"""
)


def compile_cubin(ir: str, arch: str, cuda_version: int | None = None, **link_options):
    """(Ptx, Cubin) of a kernel above for `cuda:<arch>`."""
    target = nv_target.cuda_target(arch)
    code = ptx.compile_ptx(ir, target, cuda_version=cuda_version)
    return code, link.link(code.text, code.entry, target, **link_options)
