"""Naiad kernels inside torch.compile(fullgraph=True) under `python -m naiad.run` (so `import
triton` is Naiad): launched through torch.library.wrap_triton and inside a triton_op with a
registered backward, compiled by the backend named on the command line; prints what it checks."""

import sys

import torch
from kernels import launches, reference, scale_kernel
from torch._dynamo.utils import counters
from torch._higher_order_ops.triton_kernel_wrap import identify_accessed_tensors

backend = sys.argv[1] if len(sys.argv) > 1 else "inductor"
torch.manual_seed(0)
x = torch.randn(1000, requires_grad=True)
y = torch.randn(1000)
compiled = torch.compile(launches, fullgraph=True, backend=backend)
got = compiled(x, y)
got.backward()
grad = x.grad.clone()
expected = reference(x.detach(), y)
# The kernels' product is not differentiated (no backward was registered for it): the gradient
# flows through the custom op only, 3 * x * (x + y).
print("forward:", torch.allclose(got, expected, rtol=1e-4, atol=1e-3))
print("backward:", torch.allclose(grad, 3 * x.detach() * (x.detach() + y), rtol=1e-4, atol=1e-4))
print("graph breaks:", sum(counters["graph_break"].values()))
print("eager:", torch.allclose(launches(x.detach(), y), expected, rtol=1e-4, atol=1e-3))

# torch's own analysis of what an autotuned kernel writes: torch.compile clones only those
# tensors (tests/torch/programs/mutations.py goes further).
arguments = dict(x_ptr=x.detach(), out_ptr=torch.empty_like(y), n=1000, alpha=2.0)
written = identify_accessed_tensors(scale_kernel, arguments, {}).read_writes.writes
print("scale_kernel writes:", ",".join(sorted(dep.name for dep in written)))
