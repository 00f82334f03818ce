"""Naiad kernels inside torch.compile(fullgraph=True) under `python -m naiad.run` (so `import
triton` is Naiad): launched through torch.library.wrap_triton and inside a triton_op with a
registered backward, compiled by the backend named on the command line (and the mode after it:
`reduce-overhead` replays CUDA graphs), on the device NAIAD_TORCH_DEVICE names (default: the CPU);
prints what it checks."""

import os
import sys

import torch
from kernels import launches, reference, scale_kernel
from torch._dynamo.utils import counters
from torch._higher_order_ops import triton_kernel_wrap

backend = sys.argv[1] if len(sys.argv) > 1 else "inductor"
mode = sys.argv[2] if len(sys.argv) > 2 else None
torch.set_default_device(os.environ.get("NAIAD_TORCH_DEVICE", "cpu"))
torch.manual_seed(0)
x = torch.randn(1000, requires_grad=True)
y = torch.randn(1000)
compiled = torch.compile(launches, fullgraph=True, backend=backend, mode=mode)
for _ in range(3):  # under CUDA graphs: recorded, then replayed
    x.grad = None
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
# tensors (tests/torch/programs/mutations.py goes further). torch 2.11 has no such function.
if hasattr(triton_kernel_wrap, "identify_accessed_tensors"):
    arguments = dict(x_ptr=x.detach(), out_ptr=torch.empty_like(y), n=1000, alpha=2.0)
    accesses = triton_kernel_wrap.identify_accessed_tensors(scale_kernel, arguments, {})
    written = ",".join(sorted(dep.name for dep in accesses.read_writes.writes))
    print("scale_kernel writes:", written)
else:
    print("scale_kernel writes: not analysed by this torch")
