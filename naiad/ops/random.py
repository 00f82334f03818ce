"""Random numbers: uniform_, normal_, bernoulli, rand/randn and dropout, from the language's
counter-based generator (Philox: tl.rand, tl.randn).

Each call draws one seed from torch's generator (the one passed, else the default CPU one, so
`torch.manual_seed` makes runs repeat) and element i of the result is a pure function of (seed,
i): no state lives in the kernels, and dropout's mask is stored for the backward. Results are
computed contiguous; a strided target receives them through a copy. The streams are Naiad's,
not torch's: the same seed gives other (equally distributed) numbers than torch's kernels.
"""

from __future__ import annotations

import torch

from .. import language as tl
from ..runtime.jit import jit
from .device_kind import device_kind
from .differentiable import apply
from .dtypes import Unsupported, tl_dtype
from .pointwise import pointwise
from .registry import aten
from .second_derivatives import differentiable_once

__all__ = ["bernoulli", "dropout", "normal_", "rand", "randn", "uniform_"]

# Elements per program: long runs on the CPU, where a program is a loop; a thread per element
# on a GPU.
_BLOCK = {"cpu": 4096, "cuda": 1024}
# Seeds are drawn from [2**32, 2**62): always a 64-bit kernel argument, so one compile serves
# every seed (an int below 2**31 would specialize the kernel on a 32-bit seed).
_SEED_RANGE = (2**32, 2**62)


def draw_seed(generator) -> int:
    """One seed for a call's Philox streams, drawn from `generator` (torch's default CPU one
    where None); the ops that draw random numbers in their kernels (attention's dropout,
    multinomial) take theirs here too."""
    device = "cpu" if generator is None else generator.device
    drawn = torch.randint(*_SEED_RANGE, (1,), generator=generator, device=device)
    return int(drawn.item())


def _grid(n: int, device: torch.device) -> tuple[tuple[int], int]:
    """(grid, BLOCK) for n elements."""
    block = _BLOCK[device_kind(device)]
    return ((n + block - 1) // block,), block


@jit(do_not_specialize=["n", "seed", "low", "high"])
def _uniform_kernel(out, n, seed, low, high, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    u = tl.rand(seed, offs)
    tl.store(out + offs, (low + (high - low) * u).to(out.dtype.element_ty), mask=offs < n)


@jit(do_not_specialize=["n", "seed", "mean", "std"])
def _normal_kernel(out, n, seed, mean, std, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    z = tl.randn(seed, offs)
    tl.store(out + offs, (mean + std * z).to(out.dtype.element_ty), mask=offs < n)


@jit(do_not_specialize=["n", "seed", "p"])
def _bernoulli_kernel(out, probabilities, n, seed, p, PER_ELEMENT: tl.constexpr,
                      BLOCK: tl.constexpr):  # fmt: skip
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if PER_ELEMENT:
        p = tl.load(probabilities + offs, mask=mask, other=0).to(tl.float32)
    u = tl.rand(seed, offs)
    tl.store(out + offs, (u < p).to(out.dtype.element_ty), mask=mask)


@jit(do_not_specialize=["n", "seed", "p", "scale"])
def _dropout_kernel(x, out, keep, n, seed, p, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    kept = tl.rand(seed, offs) >= p
    v = tl.load(x + offs, mask=mask).to(tl.float32)
    tl.store(out + offs, tl.where(kept, v * scale, 0.0).to(out.dtype.element_ty), mask=mask)
    tl.store(keep + offs, kept, mask=mask)


def _filled(target, launch):
    """Run `launch(contiguous)` to fill a contiguous tensor like `target`, then `target`."""
    if not target.dtype.is_floating_point:
        raise Unsupported("naiad.ops draws floating-point random numbers only")
    tl_dtype(target.dtype)
    dense = target if target.is_contiguous() else torch.empty_like(target.contiguous())
    if dense.numel():
        launch(dense)
    return target if dense is target else target.copy_(dense)


@aten("uniform_.default")
def uniform_(self, low=0.0, high=1.0, *, generator=None):
    """self filled with numbers uniform in [low, high)."""
    seed = draw_seed(generator)
    n = self.numel()
    grid, block = _grid(n, self.device)
    return _filled(self, lambda t: _uniform_kernel[grid](t, n, seed, low, high, block))


@aten("normal_.default")
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """self filled with normally distributed numbers."""
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    seed = draw_seed(generator)
    n = self.numel()
    grid, block = _grid(n, self.device)
    return _filled(self, lambda t: _normal_kernel[grid](t, n, seed, mean, std, block))


def _bernoulli_into(target, p, generator):
    """target filled with 1 where a uniform draw falls below p (a float or a tensor of target's
    shape), else 0."""
    per_element = isinstance(p, torch.Tensor)
    if per_element:
        if p.numel() and not ((p >= 0) & (p <= 1)).all():  # NaN fails both, as torch's check
            raise RuntimeError("bernoulli: every probability must lie in [0, 1]")
    elif not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    seed = draw_seed(generator)
    n = target.numel()
    probabilities = p.expand(target.shape).contiguous() if per_element else target
    scalar = 0.0 if per_element else float(p)
    grid, block = _grid(n, target.device)

    def launch(t):
        _bernoulli_kernel[grid](t, probabilities, n, seed, scalar, per_element, block)

    return _filled(target, launch)


@aten("bernoulli.default")
def bernoulli(input, *, generator=None):
    """0 or 1 for each element, 1 with the probability the element holds."""
    return _bernoulli_into(torch.empty_like(input), input, generator)


@aten("bernoulli_.float")
def bernoulli_float_(self, p=0.5, *, generator=None):
    return _bernoulli_into(self, p, generator)


@aten("bernoulli_.Tensor")
def bernoulli_tensor_(self, p, *, generator=None):
    return _bernoulli_into(self, p, generator)


def rand(*size, generator=None, dtype=None, device=None):
    """torch.rand: numbers uniform in [0, 1)."""
    shape = size[0] if len(size) == 1 and isinstance(size[0], (list, tuple)) else size
    return uniform_(torch.empty(shape, dtype=dtype, device=device), generator=generator)


def randn(*size, generator=None, dtype=None, device=None):
    """torch.randn: standard normal numbers."""
    shape = size[0] if len(size) == 1 and isinstance(size[0], (list, tuple)) else size
    return normal_(torch.empty(shape, dtype=dtype, device=device), generator=generator)


@aten("native_dropout.default")
def native_dropout(input, p, train):
    """(output, keep mask): each element zeroed with probability p, the rest scaled by
    1 / (1 - p) (in training; the identity otherwise)."""
    tl_dtype(input.dtype)
    if train is False or p == 0:  # train=None is training, as in ATen
        return input.clone(), torch.ones_like(input, dtype=torch.bool)
    x = input.contiguous()
    out = torch.empty_like(x)
    keep = torch.empty(x.shape, dtype=torch.bool, device=x.device)
    if p == 1:
        return out.zero_(), keep.zero_()
    n, seed = x.numel(), draw_seed(None)
    if n:
        grid, block = _grid(n, x.device)
        _dropout_kernel[grid](x, out, keep, n, seed, float(p), 1.0 / (1.0 - p), block)
    return out, keep


@pointwise(promote=(0, 2))
@jit
def _masked_scale(grad, keep, scale):
    return tl.where(keep, grad * scale, 0.0)


@aten("native_dropout_backward.default")
def native_dropout_backward(grad_output, mask, scale):
    """The gradient of native_dropout: grad where the mask kept, times `scale`."""
    return _masked_scale(grad_output, mask, scale)


class _Dropout(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, p):
        out, keep = native_dropout(input, p, True)
        ctx.save_for_backward(keep)
        ctx.scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
        return out

    @staticmethod
    @differentiable_once("dropout")
    def backward(ctx, grad):
        (keep,) = ctx.saved_tensors
        return native_dropout_backward(grad, keep, ctx.scale), None


def dropout(input, p=0.5, training=True):
    """torch.nn.functional.dropout (not in place), differentiable."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training:
        return input
    return apply(_Dropout, input, p)
