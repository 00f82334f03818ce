"""TTGIR as Triton 3.6 prints it, which Naiad's NVIDIA back end compiles from the file
(runtime/ir_files.py): the printed files under ttgir/triton36/ (locations dropped), and kernels
written by hand in Triton's syntax for what those files hold that Naiad's own IR does not
(rounded divisions, asynchronous tokens through loops and branches, a wgmma wait of several
values). tests/backends/nvidia/test_triton_ttgir_files.py compiles them without a GPU;
.device scripts launch them.

The printed files, each with the options Triton compiled it with (num_warps is also the
module's `ttg.num-warps`; sm_90a):
- vector_add: out = x + y, fp32, 1024 a program, masked;
- softmax: a persistent row softmax (each program strides over rows), fp32 rows of up to
  1024, the row's load pipelined through `cp.async`;
- matmul: C = A @ B, fp16 in, fp32 accumulation, fp16 out, 128x128x64 tiles, K a multiple of
  64, A row-major (stride_am), B row-major (stride_bk), wgmma pipelined over 3 stages;
- attention: non-causal attention forward, fp16, head dim 64, 128 queries a program, keys in
  blocks of 64, Q K^T and P V on wgmma; grid (N_CTX / 128, heads);
- persistent_matmul: tutorial 09's persistent matmul (fp16, 128x256x64, 8 warps, 3 stages),
  A row-major, B given as its transpose (stride_bn), grid = the SMs (132);
- persistent_matmul_tma: tutorial 09's persistent matmul through host tensor descriptors (the
  same tiles and options, `!tt.tensordesc<tensor<...>>` parameters, each followed by its
  shape (i32) and strides (i64), TMA copies in and out; the parameters keep their name
  locations, by which the compile names the descriptors);
- persistent_matmul_descriptors: the same matmul through descriptors made in the kernel
  (`tl.make_tensor_descriptor`: a global scratch slot a map, `ttng.tensormap_create`), A
  M x K, B N x K, C M x N, all row-major; launched with the same grid, global scratch given;
- attention_tma_causal: tutorial 06's causal attention forward through host descriptors (fp16,
  head dim 64, 128 queries and 64 keys a step, 4 warps, 3 stages): its off-band and on-band
  loops, K and V by TMA.
A launch gives each host descriptor parameter a TensorDescriptor, and its shape and strides
after it as numbers.
"""

from pathlib import Path

import numpy as np

TRITON36 = Path(__file__).resolve().parent / "ttgir" / "triton36"

# file -> (num_warps, the kernel's parameters as Triton's signature spells them)
PRINTED = {
    "vector_add": (4, ["*fp32", "*fp32", "*fp32", "i32"]),
    "softmax": (8, ["*fp32", "*fp32", "i32", "i32", "i32", "i32"]),
    "matmul": (8, ["*fp16", "*fp16", "*fp16", "i32", "i32", "i32", "i32", "i32", "i32"]),
    "attention": (8, ["*fp16", "*fp16", "*fp16", "*fp16", "fp32", "i32", "i32", "i32"]),
    "persistent_matmul": (
        8,
        ["*fp16", "*fp16", "*fp16", "i32", "i32", "i32", "i32", "i32", "i32"],
    ),
}

# out[i] = ceildivsi(a, b), out[128 + i] = floordivsi(a, b), out[256 + i] = ceildivui(a, b)
# over 128 elements: Triton's `tl.cdiv` and flattened loops print these; Naiad's frontend never
# makes them.
ROUNDED_DIVISIONS = """
#b = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func public @rounded(%a: !tt.ptr<i32>, %d: !tt.ptr<i32>, %out: !tt.ptr<i32>) {
    %offs = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #b>
    %as = tt.splat %a : !tt.ptr<i32> -> tensor<128x!tt.ptr<i32>, #b>
    %ap = tt.addptr %as, %offs : tensor<128x!tt.ptr<i32>, #b>, tensor<128xi32, #b>
    %x = tt.load %ap : tensor<128x!tt.ptr<i32>, #b>
    %ds = tt.splat %d : !tt.ptr<i32> -> tensor<128x!tt.ptr<i32>, #b>
    %dp = tt.addptr %ds, %offs : tensor<128x!tt.ptr<i32>, #b>, tensor<128xi32, #b>
    %y = tt.load %dp : tensor<128x!tt.ptr<i32>, #b>
    %ceil = arith.ceildivsi %x, %y : tensor<128xi32, #b>
    %floor = arith.floordivsi %x, %y : tensor<128xi32, #b>
    %uceil = arith.ceildivui %x, %y : tensor<128xi32, #b>
    %c128 = arith.constant dense<128> : tensor<128xi32, #b>
    %os = tt.splat %out : !tt.ptr<i32> -> tensor<128x!tt.ptr<i32>, #b>
    %o0 = tt.addptr %os, %offs : tensor<128x!tt.ptr<i32>, #b>, tensor<128xi32, #b>
    tt.store %o0, %ceil : tensor<128x!tt.ptr<i32>, #b>
    %o1 = tt.addptr %o0, %c128 : tensor<128x!tt.ptr<i32>, #b>, tensor<128xi32, #b>
    tt.store %o1, %floor : tensor<128x!tt.ptr<i32>, #b>
    %o2 = tt.addptr %o1, %c128 : tensor<128x!tt.ptr<i32>, #b>, tensor<128xi32, #b>
    tt.store %o2, %uceil : tensor<128x!tt.ptr<i32>, #b>
    tt.return
  }
}
"""

# out = x over 128 elements, copied through a buffer by `cp.async`, the copy's token carried
# out of an scf.if and through an scf.for (`n` iterations, each waiting on it) before the read.
TOKENS = """
#b = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#s = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func public @tokens(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %offs = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #b>
    %xs = tt.splat %x : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>, #b>
    %xp = tt.addptr %xs, %offs : tensor<128x!tt.ptr<f32>, #b>, tensor<128xi32, #b>
    %buf = ttg.local_alloc : () -> !ttg.memdesc<128xf32, #s, #smem, mutable>
    %copy = ttg.async_copy_global_to_local %xp, %buf : tensor<128x!tt.ptr<f32>, #b> -> <128xf32, #s, #smem, mutable>
    %group = ttg.async_commit_group tokens %copy
    %some = arith.cmpi sgt, %n, %c0 : i32
    %t0 = scf.if %some -> (!ttg.async.token) {
      %w = ttg.async_wait %group {num = 0 : i32}
      scf.yield %w : !ttg.async.token
    } else {
      scf.yield %group : !ttg.async.token
    }
    %t1 = scf.for %i = %c0 to %n step %c1 iter_args(%t = %t0) -> (!ttg.async.token) : i32 {
      %w = ttg.async_wait %t {num = 0 : i32}
      scf.yield %w : !ttg.async.token
    }
    %done = ttg.async_wait %t1 {num = 0 : i32}
    %v = ttg.local_load %buf token %done : !ttg.memdesc<128xf32, #s, #smem, mutable> -> tensor<128xf32, #b>
    %os = tt.splat %out : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>, #b>
    %op = tt.addptr %os, %offs : tensor<128x!tt.ptr<f32>, #b>, tensor<128xi32, #b>
    tt.store %op, %v : tensor<128x!tt.ptr<f32>, #b>
    ttg.local_dealloc %buf : !ttg.memdesc<128xf32, #s, #smem, mutable>
    tt.return
  }
}
"""  # noqa: E501


def rounded_reference(a, d):
    """ceildivsi, floordivsi and ceildivui of int32 arrays with Naiad's division (every back
    end's): x / 0 is all ones, x % 0 is x, INT_MIN / -1 wraps to INT_MIN (remainder 0)."""
    x, y = a.astype(np.int64), d.astype(np.int64)
    safe = np.where(y == 0, 1, y)
    exact = np.where((x < 0) != (y < 0), -1, 1) * (np.abs(x) // np.abs(safe))
    q = np.where(y == 0, -1, exact)
    inexact = np.where(y == 0, x, x - exact * safe) != 0
    differ = (x < 0) != (y < 0)
    ceil = q + (inexact & ~differ)
    floor = q - (inexact & differ)
    ux, uy = x % 2**32, y % 2**32
    uq = np.where(uy == 0, 2**32 - 1, ux // np.where(uy == 0, 1, uy))
    uceil = uq + (np.where(uy == 0, ux, ux % np.where(uy == 0, 1, uy)) != 0)
    return [(v % 2**32).astype(np.uint32).view(np.int32) for v in (ceil, floor, uceil)]
