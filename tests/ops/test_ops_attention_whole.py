"""The whole-block attention forward and backward (naiad/ops/attention/whole_blocks.py,
whole_backward.py) against torch on float64 copies: half precision, head dims 64 and 128, causal
and not, grouped heads, keys longer than queries, lengths the blocks do not divide; and which
calls take them. A Hopper GPU takes
them for long problems read by tensor copies; here the copies' condition is forced so that the
CPU back ends run the same kernels."""

import pytest
import torch
import torch.nn.functional as F
from ops_helpers import assert_matches, make

import naiad.ops as ops
from naiad.ops.attention import bound, flash
from naiad.ops.attention.backward import attention_delta
from naiad.ops.attention.sdpa import _Problem
from naiad.ops.attention.whole_backward import (
    attention_dkdv_whole,
    attention_dq_rounded,
    attention_dq_whole,
)
from naiad.ops.attention.whole_blocks import attention_forward_whole
from naiad.ops.kept import KeptTable
from naiad.runtime.tensor_descriptor import TensorDescriptor


@pytest.fixture
def copies(monkeypatch):
    """Tensor copies read every problem whose shapes allow them, on any device and length."""
    monkeypatch.setattr(flash, "_COPIES_FROM", 0)
    monkeypatch.setattr(flash, "_WHOLE_FROM", 0)
    monkeypatch.setattr(flash, "_by_tensor_copies", flash.rows_copyable)


def _kernel(q, k, v, causal):
    problem = _Problem(q, k, v, None, 0.0, causal, None)
    out, lse = torch.empty_like(q), torch.empty(q.shape[:-1])
    return flash.forward_launch(problem, out, lse)[0]


def _backward_kernels(q, k, v, causal):
    problem = _Problem(q, k, v, None, 0.0, causal, None)
    lse = torch.empty(q.shape[:-1])
    results = (torch.empty_like(q), torch.empty_like(k), torch.empty_like(v))
    dq_sum = torch.zeros(q.shape)
    launches = flash.backward_launches(problem, torch.empty_like(q), lse, lse, *results,
                                       dq_sum=dq_sum)  # fmt: skip
    return [launch[0] for launch in launches]


def _gpu_backward_kernels(E, causal):
    """The backward's kernels at the GPU's tiles: dK/dV then dQ, or the dK/dV walk adding dQ
    then its rounding where the table's dQ entry is None."""
    if flash._WHOLE_BACKWARD["cuda"][(E, causal)][1] is None:
        return [attention_dkdv_whole, attention_dq_rounded]
    return [attention_dkdv_whole, attention_dq_whole]


def _inputs(gen, dtype, H, HK, L, S, E):
    q = make((2, H, L, E), dtype, gen, -2, 2).requires_grad_()
    k, v = (make((2, HK, S, E), dtype, gen, -2, 2).requires_grad_() for _ in "kv")
    return q, k, v


def _at_the_gpu_tiles(monkeypatch, E, causal):
    """The CPU's tables set to the GPU's tiles (flash._WHOLE, _WHOLE_BACKWARD, _WHOLE_ROTATED)
    for head dim E, so that the CPU back ends run the kernels a Hopper GPU runs."""
    block_m, block_n, _ = flash._WHOLE["cuda"][(E, causal)]
    monkeypatch.setitem(flash._WHOLE["cpu"], (E, causal), (block_m, block_n, {}))
    tiles = tuple(
        None if t is None else (*t[:2], {}) for t in flash._WHOLE_BACKWARD["cuda"][(E, causal)]
    )
    monkeypatch.setitem(flash._WHOLE_BACKWARD["cpu"], (E, causal), tiles)
    monkeypatch.setitem(flash._WHOLE_ROTATED, "cpu", flash._WHOLE_ROTATED["cuda"])


def _check(gen, q, k, v, causal):
    """The output, its log-sum-exp (through the forward alone) and the three gradients."""
    kwargs = {"is_causal": causal, "enable_gqa": True}
    grad = make(q.shape, q.dtype, gen, -1, 1)
    out = ops.scaled_dot_product_attention(q, k, v, **kwargs)
    actual = [out, *torch.autograd.grad(out, (q, k, v), grad)]
    wide = [t.detach().double().requires_grad_() for t in (q, k, v)]
    out = F.scaled_dot_product_attention(*wide, **kwargs)
    expected = [out, *torch.autograd.grad(out, wide, grad.double())]
    for a, e in zip(actual, expected, strict=True):
        assert_matches(a, e.to(q.dtype), 16.0, normwise=True)
    problem = _Problem(q.detach(), k.detach(), v.detach(), None, 0.0, causal, None)
    _, lse = flash.forward(problem)
    scores = wide[0] @ wide[1].repeat_interleave(q.shape[1] // k.shape[1], 1).transpose(-1, -2)
    scores = scores * q.shape[-1] ** -0.5
    if causal:
        scores = scores.masked_fill(torch.ones_like(scores, dtype=bool).triu(1), float("-inf"))
    torch.testing.assert_close(lse.double(), scores.logsumexp(-1).detach(), rtol=0, atol=2e-2)


@pytest.mark.parametrize("dtype, E", [(torch.float16, 64), (torch.bfloat16, 128)])
@pytest.mark.parametrize("causal", [False, True])
def test_whole_blocks(dtype, E, causal, gen, interpreted, copies):
    """Two query blocks of a program's tile (64 on the CPU), so that a causal program walks
    blocks before its diagonal; more keys than queries; two query heads a key head."""
    q, k, v = _inputs(gen, dtype, H=4, HK=2, L=128, S=192, E=E)
    assert _kernel(q, k, v, causal) is attention_forward_whole
    assert _backward_kernels(q, k, v, causal) == [attention_dkdv_whole, attention_dq_whole]
    _check(gen, q, k, v, causal)


@pytest.mark.parametrize("E, S", [(64, 64), (64, 192), (128, 32), (128, 128)])
def test_whole_blocks_rotated(E, S, gen, interpreted, copies, monkeypatch):
    """The forward's rotated steps (taken on the GPU at D128), here at every head dim: one key
    block (the loop runs no iteration: the first block's softmax and the last block's P.V
    alone), and several."""
    monkeypatch.setitem(flash._WHOLE_ROTATED, "cpu", {(64, False), (128, False)})
    q, k, v = _inputs(gen, torch.float16, H=2, HK=1, L=64, S=S, E=E)
    problem = _Problem(q, k, v, None, 0.0, False, None)
    launch = flash.forward_launch(problem, torch.empty_like(q), torch.empty(q.shape[:-1]))
    assert launch[0] is attention_forward_whole and launch[2][-1] is True
    _check(gen, q, k, v, False)


def test_short_walks_take_their_tiles(gen, interpreted, copies, monkeypatch):
    """Keys up to SHORT_KEYS take the short table's tiles where it has them (the GPU's D128
    128x64, two programs an SM), more keys the long table's; the values match at both."""
    _at_the_gpu_tiles(monkeypatch, 128, False)
    short = flash._WHOLE_SHORT["cuda"][(128, False)][:2]
    monkeypatch.setitem(flash._WHOLE_SHORT, "cpu", {(128, False): (*short, {})})
    monkeypatch.setattr(flash, "_SHORT_KEYS", 128)
    for S, blocks in ((128, short), (256, flash._WHOLE["cuda"][(128, False)][:2])):
        q, k, v = _inputs(gen, torch.float16, H=2, HK=1, L=128, S=S, E=128)
        assert flash._whole_tiles(_Problem(q, k, v, None, 0.0, False, None))[:2] == blocks
        _check(gen, q, k, v, False)


@pytest.mark.parametrize("zeroed", [False, True])
def test_delta_kernel_zeroes_the_walks_dq_sum(zeroed, gen, compiled):
    """delta = rowsum(dO * O) in fp32; given the fp32 dQ sum of a walk adding dQ, the same
    launch writes its zeros (NaN before), so that no launch of its own clears it."""
    R, E = 100, 64
    o, do = (make((R, E), torch.float16, gen, -2, 2) for _ in "od")
    delta = torch.full((R,), float("nan"))
    dq_sum = torch.full((R, E), float("nan")) if zeroed else None
    attention_delta[((R + 63) // 64,)](o, do, delta, dq_sum, R, E, 64, E)
    expected = (o.double() * do.double()).sum(1)
    torch.testing.assert_close(delta.double(), expected, rtol=1e-5, atol=1e-5)
    if zeroed:
        assert torch.equal(dq_sum, torch.zeros(R, E))


@pytest.mark.parametrize("E, causal", list(flash._WHOLE_BACKWARD["cuda"]))
def test_whole_backward_at_the_gpu_tiles(E, causal, gen, interpreted, copies, monkeypatch):
    """The backward kernels at the GPU's tiles (flash._WHOLE_BACKWARD), run here: each pair
    keeps the kernels' rules (dK/dV's queries divide its keys, dQ's keys its queries), and the
    gradients match at those tiles (dQ added by the dK/dV walk where the table says so),
    grouped heads and more keys than queries included."""
    (m1, n1, _), dq_tiles = flash._WHOLE_BACKWARD["cuda"][(E, causal)]
    assert n1 % m1 == 0 and (dq_tiles is None or dq_tiles[0] % dq_tiles[1] == 0)
    _at_the_gpu_tiles(monkeypatch, E, causal)
    q, k, v = _inputs(gen, torch.float16, H=4, HK=2, L=128, S=256, E=E)
    assert _backward_kernels(q, k, v, causal) == _gpu_backward_kernels(E, causal)
    _check(gen, q, k, v, causal)


def test_halves_of_wide_heads(gen, interpreted, copies, monkeypatch):
    """Above HALVES_ABOVE each backward program takes half the head dims' gradients, the grid's
    third axis the halves; so does the dK/dV walk adding dQ, each half of it by its program."""
    q, k, v = _inputs(gen, torch.float16, H=2, HK=1, L=96, S=160, E=256)
    problem = _Problem(q, k, v, None, 0.0, True, None)
    results, lse = [torch.empty_like(t) for t in (q, k, v)], torch.empty(q.shape[:-1])
    grids = [launch[1] for launch in flash.backward_launches(problem, q, lse, lse, *results)]
    assert [grid[2] for grid in grids] == [2, 2]
    monkeypatch.setitem(flash._WHOLE_BACKWARD["cpu"], (256, True), ((32, 64, {}), None))
    assert _backward_kernels(q, k, v, True) == [attention_dkdv_whole, attention_dq_rounded]
    _check(gen, q, k, v, True)


@pytest.mark.parametrize(
    "dtype, E",
    [
        (torch.float16, 64),
        pytest.param(torch.bfloat16, 128, marks=pytest.mark.full),
        pytest.param(torch.float16, 256, marks=pytest.mark.full),
    ],
)
@pytest.mark.parametrize("causal", [False, True])
def test_whole_blocks_compiled(dtype, E, causal, gen, compiled, copies):
    q, k, v = _inputs(gen, dtype, H=2, HK=1, L=128, S=128, E=E)
    _check(gen, q, k, v, causal)


def test_whole_blocks_rotated_compiled(gen, compiled, copies, monkeypatch):
    monkeypatch.setitem(flash._WHOLE_ROTATED, "cpu", {(64, False)})
    q, k, v = _inputs(gen, torch.float16, H=2, HK=1, L=64, S=128, E=64)
    _check(gen, q, k, v, False)


def test_which_calls_take_whole_blocks(gen, copies):
    """Half precision, head dims 64, 128 and 256, lengths the tiles divide, no mask, and a
    causal diagonal inside the keys; the rest takes the general kernel."""
    half = [torch.empty(1, 2, 128, 64, dtype=torch.float16) for _ in "qkv"]
    assert _kernel(*half, causal=True) is attention_forward_whole
    wide = [t.float() for t in half]
    assert _kernel(*wide, causal=False) is not attention_forward_whole
    long_q = [torch.empty(1, 2, n, 64, dtype=torch.float16) for n in (128, 64, 64)]
    assert _kernel(*long_q, causal=False) is attention_forward_whole
    assert _kernel(*long_q, causal=True) is not attention_forward_whole  # L > S
    assert attention_dkdv_whole not in _backward_kernels(*long_q, causal=True)
    for E in (32, 96):
        other = [torch.empty(1, 2, 128, E, dtype=torch.float16) for _ in "qkv"]
        assert _kernel(*other, causal=False) is not attention_forward_whole
    wide = [torch.empty(1, 2, 128, 256, dtype=torch.float16) for _ in "qkv"]
    assert _kernel(*wide, causal=False) is attention_forward_whole
    assert _backward_kernels(*wide, causal=False) == [attention_dkdv_whole, attention_dq_whole]
    ragged = [torch.empty(1, 2, n, 64, dtype=torch.float16) for n in (100, 37, 37)]
    assert _kernel(*ragged, causal=False) is attention_forward_whole  # any length
    assert _backward_kernels(*ragged, causal=False) == [attention_dkdv_whole, attention_dq_whole]


# (head dim, causal, query heads, key heads, L, S): lengths no tile divides, a length below
# every tile, grouped heads, fewer queries than keys (and, not causal, more).
RAGGED = [
    (64, False, 4, 2, 100, 150),
    (64, True, 4, 2, 70, 130),
    (64, True, 2, 1, 100, 100),
    (128, False, 2, 1, 150, 37),
    (128, True, 2, 2, 20, 20),
    (64, False, 2, 1, 1, 1),
]


@pytest.mark.parametrize("E, causal, H, HK, L, S", RAGGED)
def test_ragged_lengths_at_the_gpu_tiles(E, causal, H, HK, L, S, gen, interpreted, copies,
                                         monkeypatch):  # fmt: skip
    """Lengths the GPU's tiles do not divide take the whole-block kernels, whose last key or
    query block is masked and whose blocks past a head's end read zeros and drop their
    stores: the output, log-sum-exp and gradients match."""
    _at_the_gpu_tiles(monkeypatch, E, causal)
    q, k, v = _inputs(gen, torch.float16, H=H, HK=HK, L=L, S=S, E=E)
    assert _kernel(q, k, v, causal) is attention_forward_whole
    assert _backward_kernels(q, k, v, causal) == _gpu_backward_kernels(E, causal)
    _check(gen, q, k, v, causal)


@pytest.mark.parametrize("E, causal, H, HK, L, S", RAGGED[:3])
def test_ragged_lengths_compiled(E, causal, H, HK, L, S, gen, compiled, copies):
    """The same on the CPU back end at its own tiles (64 queries, 64 or 32 keys)."""
    q, k, v = _inputs(gen, torch.bfloat16, H=H, HK=HK, L=L, S=S, E=E)
    _check(gen, q, k, v, causal)


def test_ragged_lengths_compiled_at_the_gpu_tiles(gen, compiled, copies, monkeypatch):
    """Compiled for the CPU at the GPU's D128 tiles, rotated steps and a masked last key block
    (S = 200 against 128-key blocks), grouped heads."""
    _at_the_gpu_tiles(monkeypatch, 128, False)
    q, k, v = _inputs(gen, torch.float16, H=2, HK=1, L=130, S=200, E=128)
    _check(gen, q, k, v, False)


def test_whole_blocks_from_their_own_work_threshold(copies, monkeypatch):
    """The whole-block kernels are taken from `_WHOLE_FROM` on (batches x heads x L x S x E),
    whatever the general kernels' threshold for tensor copies."""
    q, k, v = (torch.empty(1, 2, 128, 64, dtype=torch.float16) for _ in "qkv")
    work = 2 * 128 * 128 * 64
    monkeypatch.setattr(flash, "_COPIES_FROM", 2**40)
    monkeypatch.setattr(flash, "_WHOLE_FROM", work)
    assert _kernel(q, k, v, causal=False) is attention_forward_whole
    assert _backward_kernels(q, k, v, causal=False) == [attention_dkdv_whole, attention_dq_whole]
    monkeypatch.setattr(flash, "_WHOLE_FROM", work + 1)
    assert _kernel(q, k, v, causal=False) is not attention_forward_whole
    assert attention_dkdv_whole not in _backward_kernels(q, k, v, causal=False)


def test_a_problem_makes_each_input_descriptor_once(gen, copies):
    """The forward and both backward kernels of one problem read q, k and v through one
    descriptor per input and block (flash.Problem.input_rows): made once, each of its input's
    heads; the output's and the gradients' are their own."""
    q, k, v = _inputs(gen, torch.float16, H=4, HK=2, L=128, S=192, E=64)
    problem = _Problem(q, k, v, None, 0.0, False, None)
    lse = torch.empty(q.shape[:-1])
    out, grad, dq = (torch.empty_like(q) for _ in range(3))
    dk, dv = torch.empty_like(k), torch.empty_like(v)
    launches = [flash.forward_launch(problem, out, lse)]
    launches += flash.backward_launches(problem, grad, lse, lse, dq, dk, dv)
    inputs = {id(t): name for name, t in zip("qkv", (q, k, v))}
    found, others = {}, []
    for _, _, arguments, _ in launches:
        for desc in arguments:
            if not isinstance(desc, TensorDescriptor):
                continue
            if id(desc.base) not in inputs:
                others.append(desc.base)
                continue
            block = tuple(desc.block_shape)
            assert found.setdefault((inputs[id(desc.base)], block), desc) is desc
            heads, n = desc.base.shape[0] * desc.base.shape[1], desc.base.shape[2]
            assert desc.shape == [heads, n, 64] and desc.strides == [n * 64, 64, 1]
            assert desc.block_shape == [1, block[1], 64]
    assert {name for name, _ in found} == set("qkv")
    assert len(found) < 9  # the three kernels' 9 reads share descriptors
    assert all(any(b is t for b in others) for t in (out, grad, dq, dk, dv))


def test_calls_of_one_kind_share_their_bound_launches(gen, interpreted, copies, monkeypatch):
    """The whole-block launches are bound once per kind of call (attention/bound.py): calls of
    one kind on other tensors (a misaligned query among them) each get their own results, and
    the kind keeps its four launches (the delta kernel's too); another scale is another
    kind."""
    monkeypatch.setattr(bound, "_LAUNCHES", KeptTable(256))
    for offset in (0, 0, 8):
        q, k, v = _inputs(gen, torch.float16, H=4, HK=2, L=128, S=192, E=64)
        if offset:  # the same values 16 bytes off (the bound launch keys each alignment)
            storage = torch.empty(q.numel() + offset, dtype=q.dtype)
            q = storage[offset:].view(q.shape).copy_(q.detach()).requires_grad_()
        _check(gen, q, k, v, causal=False)
    assert sorted(key[0] for key in bound._LAUNCHES) == ["delta", "dkdv", "dq", "forward"]
    ops.scaled_dot_product_attention(q, k, v, scale=0.5, enable_gqa=True)
    assert len(bound._LAUNCHES) == 5


def test_the_whole_backward_takes_a_gradient_like_the_output_alone(copies):
    """The bound whole-block backward reads dO's rows as the output's (attention/bound.py): a
    gradient of another dtype or shape takes the general kernels."""
    q, k, v = (torch.empty(1, 2, 128, 64, dtype=torch.float16) for _ in "qkv")
    problem = _Problem(q, k, v, None, 0.0, False, None)
    assert flash._whole_backward_tiles(problem, torch.empty_like(q)) is not None
    assert flash._whole_backward_tiles(problem, torch.empty_like(q, dtype=torch.float32)) is None
    assert flash._whole_backward_tiles(problem, torch.empty(2, 2, 64, 64, dtype=q.dtype)) is None
