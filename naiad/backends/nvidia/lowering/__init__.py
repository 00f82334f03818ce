"""TTGIR -> LLVM IR text for `nvptx64-nvidia-cuda` (docs/gpu.md, "Lowering").

    llir = lower_module(module, target)      # the LLVM IR of the module's one public tt.func
    module.attributes["ttg.shared"]           # i32: bytes of dynamic shared memory it needs

The contract with the compiler (`naiad/backends/nvidia/compiler.py`):

- `module` is TTGIR after the TTGIR pipeline: one public `tt.func` (calls inlined), every tensor
  carrying a distributed encoding, module attributes `ttg.num-warps` (and `ttg.threads-per-warp`
  = 32). It is not changed, except that `ttg.shared` is set on it, as Triton's
  allocate-shared-memory sets it: the launch passes that many bytes of dynamic shared memory.
- `target` is a `target.CudaTarget` (or its name, `cuda:sm_90a`).
- The kernel is named as the `tt.func`; its parameters are the `tt.func`'s arguments in order
  (pointers as `ptr addrspace(1)`, integers and floats by width), i.e. the non-constexpr
  entries of the launch signature. It is marked with `nvvm.reqntid` = 32 * num_warps (a launch
  of any other block size is the driver's error, never a partial tile computed). With
  `debug`, two hidden `i64` parameters per pointer argument follow: its extent (bounds.py).
- An op the lowering does not handle is a `KernelNotImplementedError` at the user's line,
  naming the op.

Each thread's values of a tensor are a list of LLVM scalars, one per `register` of the tensor's
linear layout (layouts/): the element register r of thread (lane, warp) holds is
`layout.apply(register=r, lane=lane, warp=warp)`. One file per family of ops.
"""

from .function import lower_module

__all__ = ["lower_module"]
