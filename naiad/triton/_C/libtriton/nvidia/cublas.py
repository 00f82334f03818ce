"""`triton._C.libtriton.nvidia.cublas.CublasLt`: the reference GEMM of Triton's tests and
tutorials (test_warp_specialization, tutorial 09's cuBLAS row), through torch's own matmul
(cuBLAS underneath for CUDA tensors).

    cublas = CublasLt(torch.empty(32 * 1024 * 1024, device="cuda", dtype=torch.uint8))
    cublas.matmul(A, B, C)                  # C = A @ B.T
    cublas.gemm(A, B, C, D, alpha, beta)    # D = alpha * A @ B.T + beta * C

As Triton's: A is [M, K], B is [N, K] (B is given transposed), the output [M, N]; A, B and the
output share one dtype of float8_e4m3fn, float16, bfloat16 and float32, and `gemm`'s C is
float16 whatever that dtype. The products accumulate in float32 and are rounded once to the
output's dtype: `matmul` of float16 and bfloat16 CUDA operands goes to cuBLAS as they are
(torch's half GEMM, so tutorial 09's cuBLAS row times cuBLAS); fp8 CUDA operands go to cuBLAS's
fp8 GEMM with fast accumulation, as Triton's binding asks for (torch's `_scaled_mm` with unit
scales): the tensor cores' fp8 sums are not exact float32 sums, and Triton's tests compare a
kernel's `tl.dot` with this reference after rounding to fp8, where exact sums differ in one
element of two hundred. Sides that cuBLAS's fp8 kernels refuse (not multiples of 16), older
GPUs and CPU operands are multiplied in float32. Unlike Triton's, which runs float32 inputs as
TF32, float32 stays float32 here. The workspace fixes the device: every
operand must be on it (a CPU workspace runs the same arithmetic on the CPU); cuBLAS's scratch is
torch's own.
"""

from __future__ import annotations

_DTYPES = ("float8_e4m3fn", "float16", "bfloat16", "float32")


class CublasLt:
    """cuBLASLt's GEMM as Triton's bindings expose it (module doc)."""

    def __init__(self, workspace):
        import torch

        if not isinstance(workspace, torch.Tensor) or workspace.dtype != torch.uint8:
            raise TypeError(f"CublasLt's workspace must be a torch.uint8 tensor, got {workspace!r}")
        self.workspace = workspace
        self.device = workspace.device

    def matmul(self, A, B, C) -> None:
        """C = A @ B.T, in place."""
        _check_operands(self.device, A, B, C)
        C.copy_(_product(A, B, rounded=True).to(C.dtype))

    def gemm(self, A, B, C, D, alpha: float, beta: float) -> None:
        """D = alpha * A @ B.T + beta * C, in place; C is float16 and of D's shape."""
        import torch

        _check_operands(self.device, A, B, D)
        _check_device(self.device, "C", C)
        if C.dtype != torch.float16:
            raise TypeError(f"C dtype must be float16, got {C.dtype}")
        if tuple(C.shape) != tuple(D.shape):
            raise ValueError(f"C and D shapes must match: {list(C.shape)} and {list(D.shape)}")
        result = float(alpha) * _product(A, B) + float(beta) * C.float()
        D.copy_(result.to(D.dtype))


def _product(A, B, rounded: bool = False):
    """A @ B.T with float32 sums (module doc): where the result may be `rounded` to the
    operands' dtype at once, cuBLAS's half GEMM for float16 and bfloat16 CUDA operands; fp8
    through cuBLAS's fp8 GEMM where it takes them; else float32 products (fp8/fp16/bf16 values
    are exact in float32)."""
    import torch

    if rounded and A.is_cuda and A.dtype in (torch.float16, torch.bfloat16):
        return torch.matmul(A, B.t())
    if _takes_fp8(A, B):
        one = torch.ones((), device=A.device)
        return torch._scaled_mm(
            A, B.t(), scale_a=one, scale_b=one, out_dtype=torch.float32, use_fast_accum=True
        )
    return torch.matmul(A.float(), B.float().t())


def _takes_fp8(A, B) -> bool:
    """Whether cuBLAS's fp8 GEMM multiplies these: fp8 e4m3 CUDA operands on sm_89+, every
    side a multiple of 16."""
    import torch

    if A.dtype != torch.float8_e4m3fn or not A.is_cuda or not hasattr(torch, "_scaled_mm"):
        return False
    if torch.cuda.get_device_capability(A.device) < (8, 9):
        return False
    return all(side % 16 == 0 for side in (*A.shape, B.shape[0]))


def _check_device(device, name: str, tensor) -> None:
    if tensor.device != device:
        raise ValueError(f"{name} is on {tensor.device}, the workspace on {device}")


def _check_operands(device, A, B, C) -> None:
    """Triton's rules: one dtype of four, 2-D, A [M, K], B [N, K], C [M, N]."""
    for name, tensor in (("A", A), ("B", B), ("C", C)):
        _check_device(device, name, tensor)
    if not A.dtype == B.dtype == C.dtype:
        raise TypeError(f"Data types do not match: A {A.dtype}, B {B.dtype}, C {C.dtype}")
    if str(A.dtype).rpartition(".")[2] not in _DTYPES:
        raise TypeError(f"Unsupported data type {A.dtype}: one of {', '.join(_DTYPES)}")
    if A.dim() != 2 or B.dim() != 2 or C.dim() != 2:
        raise ValueError("Only 2D matrices are supported")
    (m, k), (n, k_b), (m_c, n_c) = A.shape, B.shape, C.shape
    if k != k_b:
        raise ValueError(
            f"A is {list(A.shape)}, B is {list(B.shape)}: expected A.shape[1] == B.shape[1] "
            "(B is given transposed)"
        )
    if (m, n) != (m_c, n_c):
        raise ValueError(
            f"A is {list(A.shape)}, B is {list(B.shape)}, C is {list(C.shape)}: expected C "
            f"of [{m}, {n}]"
        )
