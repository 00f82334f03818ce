"""Software pipelining (passes/pipeline_loads.py) without a GPU: the pipelined TTGIR computes
what the TTIR did for every trip count (none, fewer than the stages, ragged K), in the
evaluator, which runs the ring of buffers, its slots and the masks of the copies past the
loop's end; the tutorial matmul's K loop holds its copies and no conversion but its dot
operands'; and it assembles without spills. Values on the GPU: tests/gpu/test_dot_gpu.py.
"""

import re

import numpy as np
import pytest
from fixture_kernels.chained_dots import chained_products
from test_dot_lowering import DOT_KERNELS, ROOT, _load

import naiad
import naiad.language as tl
from naiad.backends.nvidia import link
from naiad.backends.nvidia import target as nv_target
from naiad.backends.nvidia.compiler import ttgir_pipeline
from naiad.dialects import scf, tt
from naiad.ir.locations import FileLineColLoc, NameLoc
from naiad.ir.printer import print_module
from naiad.passes.combine import is_zero
from naiad.passes.pipeline import run_pipeline
from naiad.runtime.compiler import build_ttir
from naiad.runtime.evaluator import evaluate


def _modules(kernel, args, kwargs, stages: int, arch="sm_90a", num_warps=4):
    """(TTIR, TTGIR pipelined with `stages`) of one specialization."""
    bound = kernel._bind(args, kwargs)
    before = build_ttir(kernel, bound, f"cuda:{arch}").module
    after = build_ttir(kernel, bound, f"cuda:{arch}").module
    target = nv_target.cuda_target(f"cuda:{arch}")
    passes = ttgir_pipeline(
        num_warps, target.capability, num_stages=stages, arch_specific=target.arch_specific
    )
    run_pipeline(passes, after)
    return before, after


def _loop_ops(module) -> list[str]:
    loop = next(op for op in module.walk() if isinstance(op, scf.ForOp))
    return [op.name for op in loop.body.ops]


def _run(module, k: int, seed: int) -> np.ndarray:
    gen = np.random.default_rng(seed)
    a = (gen.standard_normal(64 * 256)).astype(np.float16)
    b = (gen.standard_normal(256 * 64)).astype(np.float16)
    c = np.full(64 * 64, 7.0, dtype=np.float16)
    func = next(op for op in module.walk() if isinstance(op, tt.FuncOp))
    evaluate(module, func.sym_name.value, [a, b, c, k], grid=(1,))
    return c


@pytest.mark.parametrize(
    "stages", [pytest.param(2, marks=pytest.mark.full), 3, pytest.param(4, marks=pytest.mark.full)]
)
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_pipelined_loop_keeps_the_values_for_every_trip_count(stages, arch):
    """On sm_90a wgmma reads `stages` slots (one more while a dot runs on); on sm_80 the
    mma.sync loop refills the slot it has just read, at its end: `stages - 1` slots from 3
    stages on."""
    args = ("*fp16", "*fp16", "*fp16")
    kwargs = {"M": 64, "N": 64, "K": 128, "BK": 32}  # K divisible by 16: 16-byte copies
    before, after = _modules(DOT_KERNELS.matmul_loop, args, kwargs, stages, arch)
    body = _loop_ops(after)
    assert "ttg.async_copy_global_to_local" in body
    assert "tt.load" not in body
    assert body[0] == "ttg.async_wait"
    rings = {op.result.type.shape[0] for op in after.walk() if op.name == "ttg.local_alloc"}
    if arch == "sm_80":
        assert rings == {stages - 1 if stages >= 3 else stages}
        last_dot = max(i for i, name in enumerate(body) if name == "tt.dot")
        assert (body.index("ttg.async_copy_global_to_local") > last_dot) == (stages >= 3)
    else:
        assert min(rings) >= stages
    # 0 trips, 1, fewer than the stages, a ragged last tile, many
    for k in (0, 16, 32, 48, 96, 160, 256):
        got, want = _run(after, k, seed=k), _run(before, k, seed=k)
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2e-3)


def test_one_stage_does_not_pipeline():
    args = ("*fp16", "*fp16", "*fp16")
    kwargs = {"M": 64, "N": 64, "K": 128, "BK": 32}
    _, after = _modules(DOT_KERNELS.matmul_loop, args, kwargs, 1)
    assert "tt.load" in _loop_ops(after)
    assert "ttg.async_copy_global_to_local" not in _loop_ops(after)


@pytest.mark.parametrize(("zero_b", "pipelined"), [(False, True), (True, False)])
def test_a_loop_with_stores_pipelines_when_they_write_elsewhere(zero_b, pipelined):
    """A loop that stores through another argument than its loads read is pipelined (C's
    partial products); one that writes through an argument it loads from (B, zeroed after
    each read) is not: a copy issued ahead could read what the loop has yet to write. The
    values of the TTIR either way."""
    args = ("*fp16", "*fp16", "*fp16")
    kwargs = {"M": 64, "N": 64, "K": 128, "BK": 32, "ZERO_B": zero_b}
    before, after = _modules(DOT_KERNELS.matmul_loop_storing, args, kwargs, 3)
    body = _loop_ops(after)
    assert "tt.store" in body
    assert ("ttg.async_copy_global_to_local" in body) == pipelined
    for k in (0, 32, 96, 160):
        got, want = _run(after, k, seed=k), _run(before, k, seed=k)
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2e-3)


# The tutorial's configs for CUDA GPUs: (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages)
TUTORIAL_CONFIGS = [
    (128, 256, 64, 8, 3),
    (64, 256, 32, 4, 4),
    (128, 128, 32, 4, 4),
    (128, 64, 32, 4, 4),
    (64, 128, 32, 4, 4),
    (128, 32, 32, 4, 4),
    (64, 32, 32, 2, 5),
    (32, 64, 32, 2, 5),
]


def _tutorial_matmul(config, arch):
    tutorial = _load(ROOT / "examples" / "03_matmul.py", "pipeline_matmul")
    bm, bn, bk, warps, stages = config
    args = ("*fp16", "*fp16", "*fp16", 4096, 4096, 4096, 4096, 1, 4096, 1, 4096, 1)
    sizes = {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": 8}
    kwargs = {**sizes, "ACTIVATION": ""}
    return _modules(tutorial.matmul_kernel.fn, args, kwargs, stages, arch, warps)[1]


def test_tutorial_matmul_loop_converts_only_dot_operands():
    """The K loop carries its pointers in the layout of their copies: no conversion in it
    (the dot operands are read from the buffers by `ttg.local_load`; sm_90a's wgmma reads
    them itself, test_wgmma.py)."""
    module = _tutorial_matmul(TUTORIAL_CONFIGS[0], "sm_80")
    body = _loop_ops(module)
    assert "ttg.convert_layout" not in body
    assert body.count("ttg.async_copy_global_to_local") == 2
    assert body.count("ttg.local_load") == 2 * 64 // 16


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_copies_keep_their_loads_source_lines(arch):
    """Each copy, in the prologue and in the loop, and the address arithmetic cloned for the
    prologue stand at the source line of what they copy (the two tl.load of the K loop), not
    at the loop's: a profile or a TTGIR side by side with Triton's finds them there."""
    module = _tutorial_matmul(TUTORIAL_CONFIGS[2], arch)
    source = (ROOT / "examples" / "03_matmul.py").read_text().splitlines()
    load_lines = {i + 1 for i, text in enumerate(source) if "= tl.load(" in text}
    copies = [op for op in module.walk() if op.name == "ttg.async_copy_global_to_local"]
    assert len(copies) == 2 * TUTORIAL_CONFIGS[2][4]  # S - 1 stages ahead, and the loop's
    assert {_line(copy.location) for copy in copies} == load_lines


def _line(location) -> int:
    """The source line of a location (through names and call sites)."""
    while not isinstance(location, FileLineColLoc):
        location = location.child if isinstance(location, NameLoc) else location.callee
    return location.line


@pytest.mark.skipif(link.linker_version() is None, reason="nvJitLink is not installed")
@pytest.mark.parametrize(
    ("config", "arch"),
    [
        (TUTORIAL_CONFIGS[0], "sm_90a"),
        pytest.param(TUTORIAL_CONFIGS[0], "sm_80", marks=pytest.mark.full),
        pytest.param(TUTORIAL_CONFIGS[6], "sm_80", marks=pytest.mark.full),
        pytest.param(TUTORIAL_CONFIGS[6], "sm_90a", marks=pytest.mark.full),
    ],
)
def test_tutorial_matmul_assembles_without_spills(config, arch):
    """The largest tile (128 accumulator registers a thread) and a two-warp one, with their
    stages of copies in flight: no register spills."""
    tutorial = _load(ROOT / "examples" / "03_matmul.py", "pipeline_matmul")
    bm, bn, bk, warps, stages = config
    compiled = tutorial.matmul_kernel.fn.warmup(
        "*fp16",
        "*fp16",
        "*fp16",
        4096,
        4096,
        4096,
        4096,
        1,
        4096,
        1,
        4096,
        1,
        BLOCK_SIZE_M=bm,
        BLOCK_SIZE_N=bn,
        BLOCK_SIZE_K=bk,
        GROUP_SIZE_M=8,
        ACTIVATION="",
        num_warps=warps,
        num_stages=stages,
        grid=(1,),
        target=f"cuda:{arch}",
    )
    ptx = compiled.asm["ptx"]
    assert "cp.async.cg.shared.global" in ptx
    assert compiled.n_spills == 0
    # One barrier an iteration after its wait, one after the loop's last wait, one in the
    # epilogue's conversion; an mma.sync loop one more, before it refills the slot it read.
    wgmma = arch == "sm_90a" and warps % 4 == 0
    assert ("wgmma.mma_async" in ptx) == wgmma
    assert ptx.count("bar.sync") == (3 if wgmma else 4)


def _attention_kernel():
    path = ROOT / "bench" / "gpu" / "tensor_core_kernels.py"
    return _load(path, "pipeline_attention").attention_fwd_pointers


@pytest.mark.parametrize("arch", ["sm_90a", pytest.param("sm_80", marks=pytest.mark.full)])
def test_a_load_reaching_the_dot_through_other_ops_is_pipelined(arch):
    """The column scales multiply A before the dot: their load gets a buffer of its own and is
    copied ahead with the operands (buffered_loads.py), its one-element-per-thread vectors
    copied only by the threads that own them; the values are the TTIR's for every trip
    count."""
    args = ("*fp16", "*fp32", "*fp16", "*fp16")
    kwargs = {"M": 64, "N": 64, "K": 128, "BK": 32}
    before, after = _modules(DOT_KERNELS.scaled_matmul_loop, args, kwargs, 3, arch)
    body = _loop_ops(after)
    assert body.count("ttg.async_copy_global_to_local") == 3 and "tt.load" not in body
    assert body.count("ttg.local_load") >= 1
    for k in (0, 32, 96, 160):
        outs = []
        for module in (after, before):
            gen = np.random.default_rng(k)
            a = gen.standard_normal(64 * 256).astype(np.float16)
            scales = gen.standard_normal(256).astype(np.float32)
            b = gen.standard_normal(256 * 64).astype(np.float16)
            c = np.full(64 * 64, 7.0, dtype=np.float16)
            func = next(op for op in module.walk() if isinstance(op, tt.FuncOp))
            evaluate(module, func.sym_name.value, [a, scales, b, c, k], grid=(1,))
            outs.append(c.astype(np.float32))
        np.testing.assert_allclose(outs[0], outs[1], rtol=2e-3, atol=2e-3)
    compiled = DOT_KERNELS.scaled_matmul_loop.warmup(
        *args, **kwargs, grid=(1,), target=f"cuda:{arch}", num_stages=3
    )
    ptx = compiled.asm["ptx"]  # nvJitLink assembled it; the scales' copies are predicated
    assert re.search(r"@%p\d+ cp\.async\.c[ag]\.shared\.global", ptx) and compiled.n_spills == 0


@pytest.mark.parametrize(
    ("arch", "d", "block_n", "warps", "slots"),
    [
        ("sm_80", 64, 64, 4, 3),  # 3 slots and Q: 64 KiB of the A100's 163
        ("sm_80", 128, 128, 8, 2),  # 3 slots would take 224 KiB
        ("sm_86", 128, 64, 4, 2),  # 3 slots 128 KiB, of 99
    ],
)
def test_attention_rings_fit_the_targets_shared_memory(arch, d, block_n, warps, slots):
    """The mma.sync attention loop keeps a slot per stage where that fits the target's shared
    memory a block, else refills the slot it read at its end (Triton's ring there); the
    values are the TTIR's either way (a 2-slot loop run in the evaluator)."""
    n_ctx = 256
    args = ("*fp16", "*fp16", "*fp16", "*fp16", 0.3, n_ctx * d, d, n_ctx)
    kwargs = {"HEAD_DIM": d, "BLOCK_M": 128, "BLOCK_N": block_n, "CAUSAL": False}
    before, after = _modules(_attention_kernel(), args, kwargs, 3, arch, warps)
    allocs = [op.result.type.shape for op in after.walk() if op.name == "ttg.local_alloc"]
    assert [shape[0] for shape in allocs if len(shape) == 3] == [slots, slots]  # K's, V's
    if slots == 3:
        return
    gen = np.random.default_rng(d)
    q, k, v = (gen.standard_normal(n_ctx * d).astype(np.float16) for _ in range(3))
    outs = []
    for module in (after, before):
        out = np.full(n_ctx * d, 7.0, dtype=np.float16)
        func = next(op for op in module.walk() if isinstance(op, tt.FuncOp))
        values = [q, k, v, out, 0.3, n_ctx * d, d, n_ctx]
        evaluate(module, func.sym_name.value, values, grid=(n_ctx // 128, 1))
        outs.append(out.astype(np.float32))
    np.testing.assert_allclose(outs[0], outs[1], rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("causal", [False, pytest.param(True, marks=pytest.mark.full)])
def test_pipelined_attention_keeps_the_values(causal):
    """K read transposed from its ring (`ttg.memdesc_trans` of the slot its copy filled), V
    from its own, Q sliced from a buffer outside the loop: the values of the TTIR. P.V runs
    on across the back edge (asynchronous_dots.py): the next iteration's Q.K^T retires it,
    the copies are issued after that dot and a barrier, into rings of as many slots as
    stages, and the accumulator is waited for before it is rescaled."""
    kernel = _attention_kernel()
    n_ctx, d = 128, 32
    args = ("*fp16", "*fp16", "*fp16", "*fp32", 0.3, n_ctx * d, d, n_ctx)
    kwargs = {"HEAD_DIM": d, "BLOCK_M": 64, "BLOCK_N": 32, "CAUSAL": causal}
    before, after = _modules(kernel, args, kwargs, 3)
    body = _loop_ops(after)
    assert body.count("ttg.async_copy_global_to_local") == 2
    assert "ttg.memdesc_trans" in body
    first_dot = body.index("ttng.warp_group_dot")
    assert body[first_dot + 1] == "ttg.barrier"
    assert first_dot < body.index("ttg.async_copy_global_to_local")
    assert body.index("ttng.warp_group_dot_wait") < body.index("ttng.warp_group_dot", first_dot + 1)
    loop = next(op for op in after.walk() if isinstance(op, scf.ForOp))
    dots = [op for op in loop.body.ops if op.name == "ttng.warp_group_dot"]
    assert [dot.attributes.get("isAsync") is not None for dot in dots] == [False, True]
    rings = [op.result.type.shape[0] for op in after.walk() if op.name == "ttg.local_alloc"]
    assert rings.count(3) == 2
    gen = np.random.default_rng(7)
    q, k, v = (gen.standard_normal(n_ctx * d).astype(np.float16) for _ in range(3))
    outs = []
    for module in (after, before):
        out = np.full(n_ctx * d, 7.0, dtype=np.float32)
        func = next(op for op in module.walk() if isinstance(op, tt.FuncOp))
        values = [q, k, v, out, 0.3, n_ctx * d, d, n_ctx]
        evaluate(module, func.sym_name.value, values, grid=(n_ctx // 64, 1))
        outs.append(out)
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("kernel", ["persistent_matmul", "persistent_matmul_offsets"])
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_fused_persistent_loop_pipelines_across_tiles(arch, kernel):
    """A persistent matmul's nest, fused by fuse-nested-loops, is pipelined as one loop: the
    copies of the next tile's first K steps are issued while the current tile finishes (the
    prologue's condition that steps the tile is copied ahead with them), and the epilogue's
    store, through another argument than the loads', stays in the loop. The values of the
    TTIR, with tiles not a multiple of the programs, ragged M, one K step, and programs with
    no tile. (N and K are specialized as multiples of 16, as a launch with such values does:
    the copies are then 16 bytes wide.) The kernel in tutorial 09's shape carries its tile's
    offsets, 1-D, from the branch that starts a tile, never converted in the loop."""
    from fixture_kernels import flattened_loops

    persistent_matmul = getattr(flattened_loops, kernel)
    args = ("*fp16", "*fp16", "*fp32", 130, 48, 64)
    kwargs = {"PROGRAMS": 4, "BM": 64, "BN": 32, "BK": 16}
    bound = persistent_matmul._bind(args, kwargs)
    before = build_ttir(persistent_matmul, bound, f"cuda:{arch}").module
    after = build_ttir(persistent_matmul, bound, f"cuda:{arch}").module
    target = nv_target.cuda_target(f"cuda:{arch}")
    passes = ttgir_pipeline(4, target.capability, num_stages=3, arch_specific=target.arch_specific)
    run_pipeline(["fuse-nested-loops", *passes], after)
    # (the pass keeps the nest for a K of no steps, decided once before the loops)
    loops = [[o.name for o in op.walk()] for op in after.walk() if isinstance(op, scf.ForOp)]
    (inside,) = [names for names in loops if "ttg.async_copy_global_to_local" in names]
    assert inside.count("ttg.async_copy_global_to_local") == 2 and "tt.store" in inside
    assert "tt.load" not in inside and inside.count("scf.for") == 1
    if kernel == "persistent_matmul_offsets":
        (loop,) = [op for op in after.walk() if isinstance(op, scf.ForOp) and op.body.ops and any(
            o.name == "ttg.async_copy_global_to_local" for o in op.body.ops)]  # fmt: skip
        offsets = [a.type.shape for a in loop.region_iter_args if str(a.type).startswith("tensor<")]
        assert (64,) in offsets and (32,) in offsets
        assert not any(
            o.name == "ttg.convert_layout" and "xi32" in str(o.result.type) for o in loop.walk()
        )
    func = next(op for op in after.walk() if isinstance(op, tt.FuncOp))
    for m, n, k in ((130, 48, 64), (64, 32, 16), (70, 96, 48)):
        gen = np.random.default_rng(m + n + k)
        a = gen.standard_normal(m * k).astype(np.float16)
        b = gen.standard_normal(k * n).astype(np.float16)
        outs = []
        for module in (after, before):
            c = np.full(m * n, 7.0, dtype=np.float32)
            evaluate(module, func.sym_name.value, [a, b, c, m, n, k], grid=(4,))
            outs.append(c)
        np.testing.assert_allclose(outs[0], outs[1], rtol=1e-3, atol=1e-3)


def test_fused_persistent_wgmma_dot_runs_on_across_tiles():
    """On sm_90a the fused persistent matmul's dot runs on as a K loop's does, as Triton
    pipelines tutorial 09's persistent kernel: a new tile's fresh accumulator is the dot's
    useC (no select reads the registers of a dot in flight), a wait right after it lets it run
    on, the epilogue's branch waits for it, the next iteration (a new tile's first) gets zeros
    where the branch ran (the select canonicalize makes of its yield: Triton's form; LLVM sinks
    it back into the branch), and the copies, issued after the first wait and a barrier, fill
    S slots. The values: the test above."""
    from fixture_kernels.flattened_loops import persistent_matmul

    args = ("*fp16", "*fp16", "*fp32", 130, 48, 64)
    kwargs = {"PROGRAMS": 4, "BM": 64, "BN": 32, "BK": 16}
    _, after = _modules(persistent_matmul, args, kwargs, 3)
    (loop,) = [
        op
        for op in after.walk()
        if isinstance(op, scf.ForOp) and "ttng.warp_group_dot" in [o.name for o in op.body.ops]
    ]
    body = list(loop.body.ops)
    (dot,) = [op for op in body if op.name == "ttng.warp_group_dot"]
    assert dot.attributes["isAsync"].value and dot.useC is not None
    assert dot.c in loop.body.arguments and dot.c.has_one_use
    wait = body[body.index(dot) + 1]
    assert wait.name == "ttng.warp_group_dot_wait" and wait.pendings.value == 1
    copies = [i for i, op in enumerate(body) if op.name == "ttg.async_copy_global_to_local"]
    assert body[body.index(wait) + 1].name == "ttg.barrier" and min(copies) > body.index(wait)
    (epilogue,) = [op for op in body if isinstance(op, scf.IfOp) and "tt.store" in _names(op)]
    last = epilogue.then_block.first_op
    assert last.name == "ttng.warp_group_dot_wait" and last.pendings.value == 0
    assert last.inputs[0] is wait.outputs[0]
    carried = loop.body.terminator.operands[dot.c.index - 1].defining_op
    assert carried.name == "arith.select" and carried.condition is epilogue.condition
    assert is_zero(carried.true_value) and carried.false_value is wait.outputs[0]
    rings = [op.result.type for op in after.walk() if op.name == "ttg.local_alloc"]
    assert [t.shape[0] for t in rings if len(t.shape) == 3] == [3, 3]


@pytest.mark.parametrize(("stages", "slots"), [(2, 2), (4, 2)])
def test_a_fused_loop_takes_the_stages_that_fit_beside_its_epilogue(stages, slots):
    """128x256x64 fp16 operands, an fp32 tile stored: the epilogue's 128 KB stay live beside
    the rings, so 4 stages would not fit in 227 KB; the pipeliner takes 2, still asynchronous."""
    from fixture_kernels.flattened_loops import persistent_matmul

    args = ("*fp16", "*fp16", "*fp32", 1024, 1024, 1024)
    kwargs = {"PROGRAMS": 132, "BM": 128, "BN": 256, "BK": 64}
    _, after = _modules(persistent_matmul, args, kwargs, stages, num_warps=8)
    rings = [op.result.type for op in after.walk() if op.name == "ttg.local_alloc"]
    assert [t.shape[0] for t in rings if len(t.shape) == 3] == [slots, slots]
    (dot,) = [op for op in after.walk() if op.name == "ttng.warp_group_dot"]
    assert dot.attributes["isAsync"].value


def _names(op) -> list[str]:
    return [inner.name for inner in op.walk()]


def test_an_asynchronous_dot_whose_carried_result_the_loop_never_reads():
    """No wait is needed in the body (the first dot retires the last iteration's second); the
    one after the loop gives the last value."""
    args = ("*fp16", "*fp16", "*fp16", "*fp32")
    kwargs = {"K": 256, "BLOCK": 64, "RESCALE": False}
    before, after = _modules(chained_products, args, kwargs, 3)
    body = _loop_ops(after)
    assert "ttng.warp_group_dot_wait" not in body and body.count("ttng.warp_group_dot") == 2
    check_chain_values(before, after, seed=11)


def check_chain_values(before, after, seed: int) -> None:
    """A 64 x 64 chain of two dots over K = 256 (fixture_kernels/chained_dots.py) computes
    the same in the evaluator after the pipeliner (`after`) as before it, on random fp16."""
    gen = np.random.default_rng(seed)
    a, b, v = (gen.uniform(-1, 1, 64 * 256).astype(np.float16) for _ in range(3))
    outs = []
    for module in (after, before):
        out = np.full(64 * 64, 7.0, dtype=np.float32)
        func = next(op for op in module.walk() if isinstance(op, tt.FuncOp))
        evaluate(module, func.sym_name.value, [a, b, v, out, 256], grid=(1,))
        outs.append(out)
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-3, atol=1e-3)


@naiad.jit
def _block_sums(a_ptr, b_ptr, out_ptr, n, blocks, BLOCK: tl.constexpr, STAGES: tl.constexpr):
    """out = a + b over `blocks` consecutive blocks of this program, no dot in the loop."""
    offsets = tl.program_id(0) * BLOCK * blocks + tl.arange(0, BLOCK)
    for _ in tl.range(0, blocks, num_stages=STAGES):
        mask = offsets < n
        tl.store(
            out_ptr + offsets,
            tl.load(a_ptr + offsets, mask=mask) + tl.load(b_ptr + offsets, mask=mask),
            mask=mask,
        )
        offsets += BLOCK


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_a_loop_given_stages_pipelines_its_loads_without_a_dot(arch):
    """`tl.range(..., num_stages=3)` asks for its loads to be copied ahead even where no dot
    reads them, as Triton's pipeliner does: both loads by `cp.async` into rings of their own
    (three copies each: two ahead of the loop, one in it); the values are the loop's as
    written for every trip count, past the end of the array included."""
    args = ("*fp16", "*fp16", "*fp16", 1008, "i32")  # n a multiple of 16: 16-byte vectors
    _, after = _modules(_block_sums, args, {"BLOCK": 256, "STAGES": 3}, 3, arch)
    text = print_module(after)
    assert text.count("ttg.async_copy_global_to_local") == 6 and text.count("ttg.local_alloc") == 2
    gen = np.random.default_rng(5)
    a, b = (gen.standard_normal(1008).astype(np.float16) for _ in range(2))
    func = next(op for op in after.walk() if isinstance(op, tt.FuncOp)).sym_name.value
    for blocks in (0, 1, 2, 4, 5):  # 5 blocks of 256 run past the 1008 elements
        out = np.full(1008, 7.0, dtype=np.float16)
        evaluate(after, func, [a, b, out, 1008, blocks], grid=(1,))
        covered = min(1008, 256 * blocks)
        np.testing.assert_array_equal(out[:covered], a[:covered] + b[:covered])
        np.testing.assert_array_equal(out[covered:], 7.0)


def test_a_loop_without_given_stages_leaves_loads_without_a_dot_alone():
    """The launch's num_stages alone pipelines only the loads that feed dots."""
    args = ("*fp16", "*fp16", "*fp16", 1008, "i32")
    _, after = _modules(_block_sums, args, {"BLOCK": 256, "STAGES": None}, 3)
    assert "ttg.async_copy_global_to_local" not in print_module(after)


@naiad.jit
def _product_sums(a_ptr, b_ptr, total_ptr, K, SEM: tl.constexpr, READ_OLD: tl.constexpr):
    """A K loop of dots that adds each step's product into `total` by atomics."""
    rows, ks = tl.arange(0, 64), tl.arange(0, 32)
    acc = tl.zeros((64, 64), tl.float32)
    for k in range(0, K, 32):
        a = tl.load(a_ptr + rows[:, None] * K + (k + ks)[None, :])
        b = tl.load(b_ptr + (k + ks)[:, None] * 64 + rows[None, :])
        product = tl.dot(a, b)
        old = tl.atomic_add(total_ptr + rows[:, None] * 64 + rows[None, :], product, sem=SEM)
        acc += old if READ_OLD else product
    tl.store(total_ptr + 64 * 64 + rows[:, None] * 64 + rows[None, :], acc)


@pytest.mark.parametrize(
    ("sem", "read_old", "pipelined"),
    [("relaxed", False, True), ("acq_rel", False, False), ("relaxed", True, False)],
)
def test_a_loop_of_relaxed_atomic_adds_pipelines(sem, read_old, pipelined):
    """Relaxed atomic adds whose old values go unread order nothing (attention backward's dQ
    sums): the loop's loads are copied ahead. An acquire-release add, or one whose old value
    the loop reads, keeps the loop as written."""
    args = ("*fp16", "*fp16", "*fp32", 256)
    _, after = _modules(_product_sums, args, {"SEM": sem, "READ_OLD": read_old}, 3)
    assert ("ttg.async_copy_global_to_local" in print_module(after)) == pipelined
