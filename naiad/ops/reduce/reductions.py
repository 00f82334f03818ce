"""Reductions to one value per kept position: sum, mean, prod, amax, amin, all, any, the
vector norms (1, 2, inf) and logsumexp, over any dims, with torch's result dtypes."""

from __future__ import annotations

import builtins
import math

import torch

from ..allocate import empty, written_to
from ..compare import ne
from ..convert import to
from ..dtypes import Unsupported, tl_dtype
from ..kept import KeptTable
from ..registry import aten
from . import kernels as K
from .grouped import grouped_launch, in_place_groups
from .launch import accumulator, blocks, launch_rows
from .rows import AS_IT_LIES, as_rows, copied, normalized_dims
from .split_exp_sums import split_logsumexp
from .split_rows import split_parts, split_reduction

__all__ = ["all", "amax", "amin", "any", "logsumexp", "mean", "norm", "prod", "sum"]


def _finish(result, rows, keepdim, out):
    """The (M,) result shaped as torch returns it, or copied into `out`."""
    return written_to(result.view(rows.shape(keepdim)), out)


# What one kind of call decides (the operand's dtype, device, shape and strides, the dims,
# keepdim, the reduction and its result's dtype): the result's shape and the row kernel's bound
# launch (launch_rows); a call of a known kind allocates and launches, without the rows'
# geometry and launch_rows' own key (as the norms' and softmax's plans). Kept where no `out` is
# given; where as_rows copies the operand (a sum over a middle dim: the Llama step's grouped
# heads' gradient), the plan makes that copy again (rows.copied) and launches on it; where the
# kept dims' strides take two or three runs (that sum), grouped.py's kernel reads it in place.
_PLANS = KeptTable(4096)


def _reduce(input, dim, keepdim, op, result_dtype, init, out=None):
    if out is not None:
        return _reduce_whole(input, dim, keepdim, op, result_dtype, init, out, None)
    dims = dim if dim is None or isinstance(dim, int) else tuple(dim)
    key = (input.dtype, input.device, input.shape, input.stride(), dims, keepdim, op,
           result_dtype, init)  # fmt: skip
    plan = _PLANS.get(key)
    if plan is None:
        return _reduce_whole(input, dim, keepdim, op, result_dtype, init, None, key)
    shape, launch, copy = plan
    target = empty(shape, result_dtype, input.device)
    launch(input if copy is None else copied(input, *copy), target)
    return target


def _reduce_whole(input, dim, keepdim, op, result_dtype, init, out, key):
    """`_reduce` the whole way; its plan kept under `key` where it can be (None: never)."""
    tl_dtype(input.dtype)  # Unsupported for dtypes kernels cannot hold
    dims = normalized_dims(dim, input.dim())
    found = None if out is not None else in_place_groups(input, dims)
    if found is not None:  # kept dims on both sides of the reduced ones: read in place
        return _reduce_grouped(input, dims, keepdim, op, result_dtype, init, key, found)
    rows = as_rows(input, dims)
    if out is not None and out.dtype == result_dtype and out.is_contiguous():
        out.resize_(rows.shape(keepdim))
        target, out = out, None
    else:  # allocated in its final shape: no view to make after the launch
        target = empty(rows.shape(keepdim), result_dtype, input.device)
    compute = _compute(input.dtype, result_dtype, op)
    parts = split_parts(rows, input.device)
    if parts > 1:  # few long rows, each reduced in parts over more programs (split_rows.py)
        launch = split_reduction(rows, parts, target, compute, INIT=init, OP=op)
    else:
        # MAX_BLOCK_N lanes: the CPU reduces each block in the loop (ACCUMULATOR_BLOCK_N); a
        # row that fits one block is read without the loop (WHOLE)
        whole = input.device.type == "cpu" and blocks(rows.M, rows.N, input.device)[1] >= rows.N
        launch = launch_rows(K.reduce_kernel, rows, [target], [], compute, True, INIT=init,
                             OP=op, WHOLE=whole)  # fmt: skip
    if key is not None and launch is not None:
        _PLANS.put(key, (rows.shape(keepdim), launch, _copy(input, rows)))
    if out is None:
        return target
    return _finish(target.view(-1), rows, keepdim, out)


def _reduce_grouped(input, dims, keepdim, op, result_dtype, init, key, found):
    """`_reduce` by grouped.py's kernel, which reads the operand as it lies where its kept
    dims' strides take two or three runs (`found`: in_place_groups')."""
    if keepdim:
        shape = [1 if d in dims else n for d, n in enumerate(input.shape)]
    else:
        shape = [n for d, n in enumerate(input.shape) if d not in dims]
    target = empty(shape, result_dtype, input.device)
    compute = _compute(input.dtype, result_dtype, op)
    launch = grouped_launch(input, *found, target, compute, op, init)
    if key is not None and launch is not None:
        _PLANS.put(key, (shape, launch, None))
    return target


def _copy(input, rows):
    """What a plan passes rows.copied to read `input` as `rows` do: None where they read it as
    it lies, else the copy's permutation and sizes."""
    if rows.copy_order is AS_IT_LIES:
        return None
    return rows.copy_order, rows.M, rows.N


def _compute(dtype, result_dtype, op):
    if op in (K.ALL, K.ANY):
        return torch.int32
    if op in (K.MAX, K.MIN):
        return torch.int32 if dtype == torch.bool else accumulator(dtype)
    return accumulator(result_dtype)


def _summed_dtype(input, dtype):
    if dtype is not None:
        return dtype
    return torch.int64 if not input.dtype.is_floating_point else input.dtype


@aten("sum.default", "sum.dim_IntList", "sum.IntList_out")
def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """The sum over `dim` (all dims by default); integers and bools sum to int64."""
    return _reduce(input, dim, keepdim, K.SUM, _summed_dtype(input, dtype), 0, out)


@aten("mean.default", "mean.dim", "mean.out")
def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """The mean over `dim`, for floating-point input (or a floating `dtype`)."""
    result = dtype or input.dtype
    if not result.is_floating_point:
        raise RuntimeError(f"mean(): could not infer output dtype from input {input.dtype}")
    return _reduce(input, dim, keepdim, K.MEAN, result, 0, out)


@aten("prod.default", "prod.dim_int", "prod.int_out")
def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """The product over `dim`; integers and bools multiply in int64."""
    return _reduce(input, dim, keepdim, K.PROD, _summed_dtype(input, dtype), 1, out)


def _lowest(dtype):
    if dtype.is_floating_point:
        return -math.inf
    return 0 if dtype == torch.bool else torch.iinfo(dtype).min


def _highest(dtype):
    if dtype.is_floating_point:
        return math.inf
    return 1 if dtype == torch.bool else torch.iinfo(dtype).max


def _no_empty_reduction(input, dim, name):
    dims = normalized_dims(dim, input.dim())
    if input.numel() == 0 and (not dims or builtins.any(input.shape[d] == 0 for d in dims)):
        raise IndexError(f"{name}(): Expected reduction dim to have non-zero size.")


@aten("amax.default", "amax.out")
def amax(input, dim=(), keepdim=False, *, out=None):
    """The largest value over `dim` (NaN if any is NaN)."""
    _no_empty_reduction(input, dim, "amax")
    return _reduce(input, dim, keepdim, K.MAX, input.dtype, _lowest(input.dtype), out)


@aten("amin.default", "amin.out")
def amin(input, dim=(), keepdim=False, *, out=None):
    """The smallest value over `dim` (NaN if any is NaN)."""
    _no_empty_reduction(input, dim, "amin")
    return _reduce(input, dim, keepdim, K.MIN, input.dtype, _highest(input.dtype), out)


def _truth_dtype(input):
    return torch.uint8 if input.dtype == torch.uint8 else torch.bool


@aten("all.default", "all.dim", "all.dims", "all.out", "all.dims_out", "all.all_out")
def all(input, dim=None, keepdim=False, *, out=None):
    """Whether every element over `dim` is nonzero (over no dims, `dim=()`: each element's
    truth, as torch's all.dims gives it, where the other reductions take all dims)."""
    if isinstance(dim, (tuple, list)) and not dim:
        return _each_truth(input, out)
    return _reduce(input, dim, keepdim, K.ALL, _truth_dtype(input), 1, out)


@aten("any.default", "any.dim", "any.dims", "any.out", "any.dims_out", "any.all_out")
def any(input, dim=None, keepdim=False, *, out=None):
    """Whether some element over `dim` is nonzero (each element's truth over no dims)."""
    if isinstance(dim, (tuple, list)) and not dim:
        return _each_truth(input, out)
    return _reduce(input, dim, keepdim, K.ANY, _truth_dtype(input), 0, out)


def _each_truth(input, out):
    """Whether each element is nonzero, in all's and any's result dtype."""
    truth = ne(input, 0)
    if _truth_dtype(input) != torch.bool:
        truth = to(truth, _truth_dtype(input))
    return written_to(truth, out)


_NORMS = {1: K.NORM1, 2: K.NORM2, math.inf: K.NORM_INF}


@aten("linalg_vector_norm.default", "linalg_vector_norm.out")
def norm(input, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The vector norm over `dim` for ord 1, 2 and inf (others go to torch)."""
    op = _NORMS.get(ord)
    if op is None or not input.dtype.is_floating_point:
        raise Unsupported(f"vector norm of order {ord} on {input.dtype}")
    return _reduce(input, dim, keepdim, op, dtype or input.dtype, 0, out)


@aten("logsumexp.default", "logsumexp.out")
def logsumexp(input, dim, keepdim=False, *, out=None):
    """log(sum(exp(input))) over `dim`, computed without overflow."""
    result = input.dtype if input.dtype.is_floating_point else torch.float32
    rows = as_rows(input, normalized_dims(dim, input.dim()))
    target = torch.empty(rows.M, dtype=result, device=input.device)
    parts = split_parts(rows, input.device)
    if parts > 1:  # few long rows, each in parts over more programs (split_exp_sums.py)
        split_logsumexp(rows, parts, target, accumulator(result))
    else:
        launch_rows(K.logsumexp_kernel, rows, [target], [], accumulator(result))
    return _finish(target, rows, keepdim, out)
