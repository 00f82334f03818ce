"""Hand-written IR of kernels split by `ttg.warp_specialize` into partitions of their own warps,
in Triton's text (dialects/ttg/partitions.py), compiled as files by the CPU checks
(tests/backends/nvidia/test_warp_partitions.py) and launched on the GPU
(tests/gpu/test_warp_partitions_gpu.py).

- `SCALARS` (TTIR): out[0] = base + 7 on the default region's 4 warps, out[1] = base * base on
  a partition of 2 warps, out[2] = base on one of 1 warp; barriers in the kernel, the default
  region and the 2-warp partition.
- `reductions()` (TTGIR): region r of `REGION_WARPS` reduces x[256 r : 256 (r + 1)] (a sum,
  a maximum on odd regions) with a layout of its own warps and stores it to out[r]. Their
  scratch and barriers must stay apart, as they run at once.
"""

SCALARS = """
module {
  tt.func public @scalars(%out: !tt.ptr<i32>, %base: i32) {
    %c7 = arith.constant 7 : i32
    gpu.barrier
    ttg.warp_specialize(%out, %base)
    default {
      %v = arith.addi %base, %c7 : i32
      tt.store %out, %v : !tt.ptr<i32>
      gpu.barrier
      ttg.warp_yield
    }
    partition0(%p: !tt.ptr<i32>, %b: i32) num_warps(2) {
      %c1 = arith.constant 1 : i32
      %q = tt.addptr %p, %c1 : !tt.ptr<i32>, i32
      %v = arith.muli %b, %b : i32
      gpu.barrier
      tt.store %q, %v : !tt.ptr<i32>
      ttg.warp_return
    }
    partition1(%p: !tt.ptr<i32>, %b: i32) num_warps(1) {
      %c2 = arith.constant 2 : i32
      %q = tt.addptr %p, %c2 : !tt.ptr<i32>, i32
      tt.store %q, %b : !tt.ptr<i32>
      ttg.warp_return
    } : (!tt.ptr<i32>, i32) -> ()
    tt.return
  }
}
"""

# The default region's warps (the module's), then each partition's: placed largest first,
# the partitions start at warps 4 (4 warps), 8 (2) and 10 (1), 11 in all.
REGION_WARPS = (4, 2, 1, 4)


def _region(r: int, warps: int, x: str, out: str) -> str:
    combine = "arith.maxsi" if r % 2 else "arith.addi"
    layout = f"#w{warps}"
    return f"""
      %offs = tt.make_range {{end = {256 * (r + 1)} : i32, start = {256 * r} : i32}} : tensor<256xi32, {layout}>
      %xs = tt.splat {x} : !tt.ptr<i32> -> tensor<256x!tt.ptr<i32>, {layout}>
      %ptrs = tt.addptr %xs, %offs : tensor<256x!tt.ptr<i32>, {layout}>, tensor<256xi32, {layout}>
      %vals = tt.load %ptrs : tensor<256x!tt.ptr<i32>, {layout}>
      %folded = "tt.reduce"(%vals) <{{axis = 0 : i32}}> ({{
      ^bb0(%a: i32, %b: i32):
        %c = {combine} %a, %b : i32
        tt.reduce.return %c : i32
      }}) : (tensor<256xi32, {layout}>) -> i32
      %at = arith.constant {r} : i32
      %dst = tt.addptr {out}, %at : !tt.ptr<i32>, i32
      tt.store %dst, %folded : !tt.ptr<i32>
"""  # noqa: E501


def reductions() -> str:
    """The TTGIR text of the reductions kernel (module doc)."""
    layouts = "\n".join(
        f"#w{w} = #ttg.blocked<{{sizePerThread = [1], threadsPerWarp = [32], "
        f"warpsPerCTA = [{w}], order = [0]}}>"
        for w in sorted(set(REGION_WARPS))
    )
    partitions = "".join(
        f"""
    partition{i}(%x{i}: !tt.ptr<i32>, %out{i}: !tt.ptr<i32>) num_warps({w}) {{
{_region(i + 1, w, f"%x{i}", f"%out{i}")}
      ttg.warp_return
    }}"""
        for i, w in enumerate(REGION_WARPS[1:])
    )
    return f"""{layouts}
module attributes {{"ttg.num-warps" = {REGION_WARPS[0]} : i32}} {{
  tt.func public @reductions(%x: !tt.ptr<i32>, %out: !tt.ptr<i32>) {{
    ttg.warp_specialize(%x, %out)
    default {{
{_region(0, REGION_WARPS[0], "%x", "%out")}
      ttg.warp_yield
    }}{partitions} : (!tt.ptr<i32>, !tt.ptr<i32>) -> ()
    tt.return
  }}
}}
"""
