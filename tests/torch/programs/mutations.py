"""Which tensors torch.compile takes a Naiad kernel to write, under `python -m naiad.run`: torch's
own analysis walks the kernel's TTIR (`triton._C.libtriton.ir`), so a functionalized launch
clones only the tensors written. Prints, per kernel, the tensors torch finds written and read,
the tensors the compiled graph clones, and whether compiled matches eager."""

import logging

import torch
import triton
import triton.language as tl
from torch._dynamo.backends.common import aot_autograd
from torch._higher_order_ops import triton_kernel_wrap
from torch.library import wrap_triton

_warnings = []


class _Collect(logging.Handler):
    def emit(self, record):
        _warnings.append(record.getMessage())


logging.getLogger(triton_kernel_wrap.__name__).addHandler(_Collect(level=logging.WARNING))


@triton.jit
def axpy_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit(noinline=True)
def _accumulate(ptr, offset, value):
    tl.atomic_add(ptr + offset, value)


@triton.jit
def scatter_sum_kernel(src_ptr, index_ptr, table_ptr, sums_ptr, n, BLOCK: tl.constexpr):
    """Writes `sums` through a noinline callee's atomic and `table` only under a branch and in
    a loop; reads `src`, `index` and `table`."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    value = tl.load(src_ptr + offs, mask=mask, other=0.0)
    target = tl.load(index_ptr + offs, mask=mask, other=0)
    _accumulate(sums_ptr, tl.max(target, axis=0), tl.sum(value, axis=0))
    pointer = table_ptr + offs
    for _ in range(2):
        if tl.program_id(0) >= 0:
            tl.store(pointer, tl.load(pointer, mask=mask) + 1.0, mask=mask)


def axpy(x, y, alpha):
    out = torch.empty_like(x)
    n = x.numel()
    wrap_triton(axpy_kernel)[(triton.cdiv(n, 64),)](x, y, out, n, alpha, BLOCK=64)
    return out


def scatter_sum(src, index, table, sums):
    n = src.numel()
    wrap_triton(scatter_sum_kernel)[(triton.cdiv(n, 64),)](src, index, table, sums, n, BLOCK=64)
    return table + sums.sum()


def _names(deps) -> str:
    return ",".join(sorted(dep.name for dep in deps))


def analysed(kernel, **kwargs):
    """The tensors torch finds `kernel` writes, then those it reads."""
    accesses = triton_kernel_wrap.identify_accessed_tensors(kernel, kwargs, {})
    return f"{_names(accesses.read_writes.writes)} | {_names(accesses.read_writes.reads)}"


cloned = []


def _record_clones(graph_module, _inputs):
    for node in graph_module.graph.nodes:
        if "triton_kernel_wrapper_functional" in str(node.target):
            cloned.append(",".join(sorted(node.kwargs["tensors_to_clone"])))
    return graph_module


backend = aot_autograd(fw_compiler=_record_clones)
torch.manual_seed(0)
x, y = torch.randn(300), torch.randn(300)
src, index = torch.randn(300), torch.randint(0, 8, (300,))
table, sums = torch.randn(300), torch.zeros(8)

print(
    "axpy analysis:", analysed(axpy_kernel, x_ptr=x, y_ptr=y, out_ptr=x, n=300, alpha=2.0, BLOCK=64)
)
print(
    "scatter_sum analysis:",
    analysed(
        scatter_sum_kernel,
        src_ptr=src,
        index_ptr=index,
        table_ptr=table,
        sums_ptr=sums,
        n=300,
        BLOCK=64,
    ),
)
got = torch.compile(axpy, fullgraph=True, backend=backend)(x, y, 2.0)
print("axpy matches eager:", torch.allclose(got, axpy(x, y, 2.0)))
eager = scatter_sum(src, index, table.clone(), sums.clone())
got = torch.compile(scatter_sum, fullgraph=True, backend=backend)(
    src, index, table.clone(), sums.clone()
)
print("scatter_sum matches eager:", torch.allclose(got, eager, rtol=1e-5, atol=1e-4))
print("cloned:", " ; ".join(cloned))
print("assumed all mutated:", sum("assuming every input is mutated" in w for w in _warnings))
