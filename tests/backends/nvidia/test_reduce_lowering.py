"""Reductions on the GPU, read from the PTX of real kernels (no GPU here; the values and the
combining order are checked on the GPU by tests/gpu/test_reduce_order_gpu.py):

- within a thread, registers combine as a tree of adjacent pairs (Triton's order): log2(n)
  dependent steps, not n - 1;
- across warps, the partials combine by halving (k with k + W/2 first), log2(W) steps;
- the barrier that frees a reduction's scratch (and a layout conversion's, an ldmatrix
  operand's, a scan step's) is paid just before the next write of shared memory
  (lowering/barriers.py): never at the kernel's end, never inside a loop that touches no shared
  memory, and in a loop before the branch back, so that no write of shared memory can follow a
  read of it without a barrier between them, along the code and around every loop.
"""

import re

import pytest
from fixture_kernels.reductions import branchy_kernel, column_stats_kernel, loop_then_if_kernel
from test_lowering_kernels import example

import naiad
import naiad.language as tl


def layer_norm(n: int):
    kernel = example("05_layer_norm")._layer_norm_fwd_fused
    warps = min(max(n // 256, 1), 8)
    args = ("*fp16", "*fp16", "*fp16", "*fp16", "*fp32", "*fp32", n, n, 1e-5)
    return kernel.warmup(*args, BLOCK_SIZE=n, num_warps=warps, grid=(1,), target="cuda:sm_90a")


def softmax(n: int):
    kernel = example("02_fused_softmax").softmax_kernel
    args = ("*fp32", "*fp32", n, n, 4096, n)
    return kernel.warmup(
        *args, BLOCK_SIZE=n, num_stages=1, num_warps=8, grid=(4096,), target="cuda:sm_90a"
    )


def column_stats():
    return column_stats_kernel.warmup(
        "*fp32", "*fp32", M=64, N=32, num_warps=8, grid=(1,), target="cuda:sm_90a"
    )


def branchy():
    return branchy_kernel.warmup(
        "*fp32", "*fp32", 3, N=2048, num_warps=8, grid=(1,), target="cuda:sm_90a"
    )


def loop_then_if():
    return loop_then_if_kernel.warmup(
        "*fp32", "*fp32", 7, N=2048, num_warps=8, grid=(1,), target="cuda:sm_90a"
    )


@naiad.jit
def scratch_users_kernel(x_ptr, y_ptr, N: tl.constexpr):
    """A scan across warps, a transposition, a reduction and an outer sum: each writes the
    scratch after another's reads."""
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs[:, None] * N + offs[None, :])
    scanned = tl.cumsum(x, axis=0)
    flipped = tl.trans(scanned)
    total = tl.sum(flipped, axis=1)
    tl.store(y_ptr + offs[:, None] * N + offs[None, :], flipped + total[None, :])


def scratch_users():
    return scratch_users_kernel.warmup(
        "*fp32", "*fp32", N=64, num_warps=8, grid=(1,), target="cuda:sm_90a"
    )


def matmul():
    """The tutorial's K loop (ldmatrix operands, written each step) and its epilogue."""
    kernel = example("03_matmul").matmul_kernel.fn
    args = ("*fp16", "*fp16", "*fp16", 512, 512, 512, 512, 1, 512, 1, 512, 1)
    sizes = {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}
    return kernel.warmup(
        *args, **sizes, ACTIVATION="", num_warps=4, grid=(1,), target="cuda:sm_90a"
    )


KERNELS = {
    "scan, transposition, reduction": scratch_users,
    "matmul": matmul,
    "layer norm 1024": lambda: layer_norm(1024),
    "layer norm 8192": lambda: layer_norm(8192),
    "softmax 1024": lambda: softmax(1024),
    "softmax 4096": lambda: softmax(4096),
    "column stats": column_stats,
    "if with a reduction": branchy,
    "loop ending with an if": loop_then_if,
}


def events(ptx: str) -> list[tuple[str, str]]:
    """The PTX's shared-memory accesses, barriers, labels and branches, in text order."""
    found = []
    for line in ptx.splitlines():
        text = re.sub(r"^@!?%p\d+\s+", "", line.strip())
        label = re.match(r"^(\$L__\w+):", text)
        if label:
            found.append(("label", label.group(1)))
        elif text.startswith("bar.sync"):
            found.append(("bar", ""))
        elif re.match(r"(ld|ldu)\.shared|ldmatrix", text):
            found.append(("read", ""))
        elif re.match(r"(st|atom|red)\.shared", text):
            found.append(("write", ""))
        elif text.startswith("bra"):
            found.append(("branch", text.split()[-1].rstrip(";")))
    return found


def unguarded_writes(sequence) -> int:
    """Writes of shared memory reached from a read with no barrier between them."""
    count, read = 0, False
    for kind, _ in sequence:
        if kind == "read":
            read = True
        elif kind == "bar":
            read = False
        elif kind == "write" and read:
            count += 1
    return count


def loop_spans(found) -> list[list]:
    """Each loop's code (from a label to the branch back to it), in text order."""
    spans = []
    for end, (kind, target) in enumerate(found):
        if kind != "branch":
            continue
        starts = [i for i, (k, name) in enumerate(found[:end]) if k == "label" and name == target]
        if starts:
            spans.append(found[starts[0] : end + 1])
    return spans


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_no_write_of_shared_memory_follows_a_read_without_a_barrier(name):
    found = events(KERNELS[name]().asm["ptx"])
    assert any(kind == "read" for kind, _ in found)
    assert unguarded_writes(found) == 0
    for span in loop_spans(found):  # around the loop: the end of one iteration, then the next
        assert unguarded_writes(span + span) == 0


@pytest.mark.parametrize("n", [1024, 8192])
def test_layer_norm_pays_no_barrier_after_its_last_reduction(n):
    """Two reductions: a barrier before each reads its partials, one before the second writes
    over the first's; nothing reads or writes shared memory after the second."""
    found = events(layer_norm(n).asm["ptx"])
    kinds = [kind for kind, _ in found if kind in ("bar", "read", "write")]
    assert kinds.count("bar") == 3
    assert kinds[-1] == "read"


def test_the_owed_barrier_is_carried_past_loops_without_shared_memory():
    found = events(layer_norm(1024).asm["ptx"])
    spans = loop_spans(found)
    assert len(spans) == 3  # the three passes over the row
    assert all(kind != "bar" for span in spans for kind, _ in span)


def test_a_reduction_in_a_loop_pays_before_the_branch_back():
    found = events(softmax(1024).asm["ptx"])
    (span,) = loop_spans(found)
    kinds = [kind for kind, _ in span if kind in ("bar", "read", "write")]
    runs = [kind for i, kind in enumerate(kinds) if i == 0 or kinds[i - 1] != kind]
    assert runs == ["write", "bar", "read", "bar", "write", "bar", "read", "bar"]


def _fadd_depths(llir: str) -> dict[str, int]:
    """Each `fadd`'s longest chain of fadds back to a value that is not one."""
    depth: dict[str, int] = {}
    for line in llir.splitlines():
        match = re.match(r"\s*(%[\w.]+) = fadd \w* ?float (%[\w.]+), (%[\w.]+)", line)
        if match:
            result, left, right = match.groups()
            depth[result] = 1 + max(depth.get(left, 0), depth.get(right, 0))
    return depth


@naiad.jit
def row_sum_kernel(x_ptr, y_ptr, N: tl.constexpr):
    tl.store(y_ptr, tl.sum(tl.load(x_ptr + tl.arange(0, N)), axis=0))


@pytest.mark.parametrize(("n", "per_thread"), [(1024, 4), (8192, 32)])
def test_registers_of_a_thread_combine_as_a_tree(n, per_thread):
    """8 warps, 4 f32 per thread per tile: the fadd chain from the loaded registers to the
    value the first lane shuffle reads is log2(per_thread) long, not per_thread - 1."""
    compiled = row_sum_kernel.warmup(
        "*fp32", "*fp32", N=n, num_warps=8, grid=(1,), target="cuda:sm_90a"
    )
    llir = compiled.asm["llir"]
    depth = _fadd_depths(llir)
    shuffled = re.search(r"shfl\.sync\.bfly\.i32\(i32 -1, i32 (%[\w.]+)", llir).group(1)
    source = re.search(rf"{re.escape(shuffled)} = bitcast float (%[\w.]+) to i32", llir)
    assert depth[source.group(1)] == per_thread.bit_length() - 1


def test_partials_of_warps_combine_by_halving():
    """Softmax 1024 over 8 warps: the row sum after the partials are read is a 3-deep tree."""
    llir = softmax(1024).asm["llir"]
    depth = _fadd_depths(llir)
    reads = [m.start() for m in re.finditer(r"load <4 x float>, ptr addrspace\(3\)", llir)]
    after = llir[reads[-1] :]
    last = [m.group(1) for m in re.finditer(r"(%[\w.]+) = fadd", after)][-1]
    assert depth[last] == 3
