"""Reductions over any dims: an operand seen as rows (rows.py), row kernels (kernels.py)."""

from .extrema import argmax, argmin, max, min
from .reductions import all, amax, amin, any, logsumexp, mean, norm, prod, sum
from .scans import cumprod, cumsum
from .statistics import std, std_mean, var, var_mean

__all__ = [
    "all",
    "amax",
    "amin",
    "any",
    "argmax",
    "argmin",
    "cumprod",
    "cumsum",
    "logsumexp",
    "max",
    "mean",
    "min",
    "norm",
    "prod",
    "std",
    "std_mean",
    "sum",
    "var",
    "var_mean",
]
