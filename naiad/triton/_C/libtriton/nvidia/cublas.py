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
(torch's half GEMM, so tutorial 09's cuBLAS row times cuBLAS), the rest is multiplied in
float32 (torch's matmul takes fp8 only through scaled kernels). Unlike Triton's, which runs
float32 inputs as TF32, float32 stays float32 here. The workspace fixes the device: every
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
    operands' dtype at once, cuBLAS's half GEMM for float16 and bfloat16 CUDA operands; else
    float32 products (fp8/fp16/bf16 values are exact in float32)."""
    import torch

    if rounded and A.is_cuda and A.dtype in (torch.float16, torch.bfloat16):
        return torch.matmul(A, B.t())
    return torch.matmul(A.float(), B.float().t())


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
