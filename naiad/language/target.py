"""What the semantic layer needs to know about the target it type-checks for.

The interpreter checks against the strictest target, CUDA on Hopper, so a kernel that runs in the
interpreter also compiles for the GPU (Triton's own interpreter accepts more: any dot shape, for
one).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import dtypes as t


@dataclass(frozen=True)
class GPUTarget:
    """What a compiled kernel is for, as Triton names it: backend, arch, warp size."""

    backend: str
    arch: int | str  # the compute capability as an int (90) on CUDA; the triple on the CPU
    warp_size: int


@dataclass(frozen=True)
class TargetInfo:
    """The facts of one compilation target the language rules depend on."""

    name: str = "cuda:sm_90a"
    backend: str = "cuda"
    arch: int = 90
    num_warps: int = 4
    warp_size: int = 32
    debug: bool = False
    sanitize_overflow: bool = True
    default_dot_input_precision: str = "tf32"
    allowed_dot_input_precisions: tuple = ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")
    supported_fp8_dtypes: tuple = ("fp8e5", "fp8e4b15", "fp8e4nv")
    deprecated_fp8_dot_operand_dtypes: tuple = ("fp8e4b15",)
    # K elements an fp8 dot may sum in the tensor cores' reduced-precision accumulator before
    # adding into its f32 one, when `tl.dot` names none: all of them on Hopper, whose fp8
    # wgmma accumulates that way (Triton's default there), none elsewhere.
    max_num_imprecise_acc_default: int = 0
    max_tensor_numel: int = 1048576
    # Hopper's bulk tensor reduction (`cp.reduce.async.bulk.tensor`): Triton takes a tensor
    # descriptor's fp16/bf16 `atomic_min`/`atomic_max` on CUDA from sm_90 on, and nowhere else.
    bulk_tensor_reduce: bool = True
    # What `tl.target_info` answers in a kernel (target_info.py): the machine the kernel is
    # compiled for. Not `backend`: the interpreter type-checks by CUDA's rules, the strictest,
    # but runs the kernel on the host, and says so (`is_cuda()` False there).
    gpu_target: GPUTarget = GPUTarget("cuda", 90, 32)
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    def min_dot_size(self, lhs: t.dtype, rhs: t.dtype) -> tuple[int, int, int]:
        """Smallest (M, N, K) of a `tl.dot` on this target (NVIDIA: K >= 16 for 16-bit inputs)."""
        if self.backend != "cuda":
            return (1, 1, 1)
        bits = max(lhs.primitive_bitwidth, rhs.primitive_bitwidth)
        if bits <= 8:
            return (1, 1, 32)
        if bits == 16:
            return (1, 1, 16)
        if bits == 32:
            return (1, 1, 8)
        return (1, 1, 4)

    def fp_conversion_supported(self, src: t.dtype, dst: t.dtype, rounding: str) -> bool:
        """Whether the target lowers the `tt.fp_to_fp` from `src` to `dst` with `rounding`.

        NVIDIA converts fp8 only to and from fp16, bf16 and fp32, never fp8 to fp8, and rounds
        toward zero only from fp32 to fp16, bf16 and fp8e5.
        """
        if self.backend != "cuda":
            return True
        if src.is_fp8() and dst.is_fp8():
            return False
        if (src.is_fp8() and dst.is_fp64()) or (src.is_fp64() and dst.is_fp8()):
            return False
        if rounding == "rtz":
            return src.is_fp32() and dst.name in ("fp16", "bf16", "fp8e5")
        return True

    def with_options(self, **changes) -> TargetInfo:
        values = {f: getattr(self, f) for f in self.__dataclass_fields__}
        values.update(changes)
        return TargetInfo(**values)


CUDA_HOPPER = TargetInfo()
