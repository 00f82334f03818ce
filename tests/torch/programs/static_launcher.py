"""Inductor's static CUDA launcher takes kernels compiled by Naiad (under `python -m naiad.run`,
TRITON_CACHE_DIR set by the caller): an Inductor-style pointwise kernel compiled for sm_90a
with Inductor's options is found where Triton's compile leaves its cubin, with the argument
types its parameters have; a kernel taking a host tensor descriptor is not. Prints
`key: value` lines (no GPU is needed: nothing is loaded or launched)."""

import re

import torch._inductor.config as inductor_config
import triton
import triton.language as tl
from torch._inductor.runtime.hints import HeuristicType
from torch._inductor.runtime.triton_heuristics import StaticTritonCompileResult
from triton.backends.compiler import GPUTarget
from triton.compiler.compiler import ASTSource
from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: F401  (the switch has it)

HOPPER = GPUTarget("cuda", 90, 32)
INDUCTOR_OPTIONS = {"num_warps": 4, "num_stages": 1, "debug": True, "sanitize_overflow": False}


@triton.jit
def triton_poi_fused_mul_add_0(in_ptr0, out_ptr0, scale, xnumel, XBLOCK: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    tmp0 = tl.load(in_ptr0 + xindex, xmask)
    tl.store(out_ptr0 + xindex, tmp0 * scale + tmp0, xmask)


@triton.jit
def copy_block(desc, out_ptr0, XBLOCK: tl.constexpr):
    block = desc.load([tl.program_id(0) * XBLOCK])
    tl.store(out_ptr0 + tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK), block)


def static_kernel(fn, signature, constexprs):
    source = ASTSource(fn, signature, constexprs, attrs={(0,): [["tt.divisibility", 16]]})
    compiled = triton.compile(source, target=HOPPER, options=INDUCTOR_OPTIONS)
    meta = {"device_type": "cuda", "device": 0}
    found = StaticTritonCompileResult.can_statically_launch(
        compiled, {}, meta, HeuristicType.POINTWISE
    )
    return compiled, found


def main():
    inductor_config.use_static_cuda_launcher = True
    signature = {"in_ptr0": "*fp32", "out_ptr0": "*fp32", "scale": "fp32", "xnumel": "i32"}
    compiled, found = static_kernel(
        triton_poi_fused_mul_add_0, {**signature, "XBLOCK": "constexpr"}, {"XBLOCK": 256}
    )
    print(f"pointwise static: {found is not None}")
    print(f"pointwise arg types: {found.arg_tys}")
    with open(compiled._cubin_path, "rb") as cubin:
        print(f"pointwise cubin is the kernel's: {cubin.read() == compiled.asm['cubin']}")
    entry = re.search(r"\.entry\s+(\w+)\(([^)]*)\)", compiled.asm["ptx"])
    print(f"pointwise entry: {entry.group(1)}")
    print(f"pointwise parameters: {entry.group(2).count('.param')}")
    print(f"pointwise scratch: {found.has_global_scratch or found.has_profile_scratch}")
    print(f"pointwise warps, shared: {found.num_warps}, {found.shared}")
    descriptor = {"desc": "tensordesc<fp32[64]>", "out_ptr0": "*fp32", "XBLOCK": "constexpr"}
    _, found = static_kernel(copy_block, descriptor, {"XBLOCK": 64})
    print(f"descriptor static: {found is not None}")


main()
