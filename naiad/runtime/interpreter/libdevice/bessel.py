"""Bessel functions J0 J1 Jn Y0 Y1 Yn and the modified I0 I1, in fp64, by classical methods.

- x <= 25, or order n >= x: Miller's backward recurrence J(k-1) = (2k/x) J(k) - J(k+1) from
  far beyond the largest wanted order (stable in that direction), normalised by
  J0 + 2 (J2 + J4 + ...) = 1. Y0 and Y1 come from the same sequence through Neumann's series
  Y0 = (2/pi) ((log(x/2) + gamma) J0 + 2 sum (-1)**(m+1) J(2m) / m) and its derivative
  Y1 = -(2/pi) (J0 / x - (log(x/2) + gamma) J1 + sum (-1)**(m+1) (J(2m-1) - J(2m+1)) / m).
- x > 25: Hankel's asymptotic expansions of J0 J1 Y0 Y1 (their terms keep shrinking well past
  1e-17 there), with cos / sin of x - phase formed from cos x and sin x, which NumPy reduces
  exactly. Higher orders by forward recurrence, stable for Y always and for J while n < x; it
  takes n steps. Beyond n = max(3x, 1100), Jn underflows to 0 and Yn overflows to -inf.
- I0, I1: their power series (all terms positive) up to 30, Hankel's expansion beyond, with
  exp(x) applied in two halves so that the result overflows only where it must.

Errors are a few ulps relative to max(|f|, the function's local amplitude): relative errors
grow only next to zeros. Negative orders give NaN, as CUDA's jn / yn do.
"""

from __future__ import annotations

import math

import numpy as np

_EULER_GAMMA = 0.5772156649015329
_HANKEL_FROM = 25.0
_SERIES_UNTIL = 30.0
_TINY = 1e-5


def _huge_order(n, x):
    """Orders beyond which |Jn(x)| < 2**-1074 and |Yn(x)| > 2**1024 ((ex / 2n)**n is tiny)."""
    return n > np.maximum(3 * x, 1100)


def _miller(n, x):
    """J0, J1, Y0, Y1 and Jn at 0 < x <= 25 or n >= x (n: integers >= 0).

    Below 1e-5 the recurrence's factors 2k/x would overflow; two terms of each power series
    are exact to far below an ulp there.
    """
    tiny = x < _TINY
    values = _backward(np.where(tiny, 0, n), np.where(tiny, 1.0, x))
    series = _tiny_series(np.where(tiny, n, 0), np.where(tiny, x, _TINY))
    return tuple(np.where(tiny, a, b) for a, b in zip(series, values))


def _tiny_series(n, x):
    quarter_square = x * x / 4
    log_term = np.log(x / 2) + _EULER_GAMMA
    j0, j1 = 1 - quarter_square, x / 2 * (1 - quarter_square / 2)
    y0 = (2 / np.pi) * (log_term * j0 + quarter_square)
    y1 = -2 / (np.pi * x) + x / np.pi * (log_term - 0.5)
    leading = np.ones_like(x)  # (x/2)**n / n!, which underflows within a few factors
    for k in range(1, int(np.max(n, initial=0)) + 1):
        leading = np.where(n >= k, leading * (x / 2) / k, leading)
        if not leading.any():
            break
    return j0, j1, y0, y1, leading * (1 - quarter_square / (n + 1))


def _backward(n, x):
    """J0, J1, Y0, Y1 and Jn by backward recurrence, for x >= 1e-5."""
    top = np.maximum(n, x) + 25 + 12 * np.cbrt(x)
    start = 2 * math.ceil(float(np.max(top, initial=2.0)) / 2)
    ahead, here = np.zeros_like(x), np.full_like(x, 1e-30)  # J(k+1), J(k), up to one scale
    sums = {name: np.zeros_like(x) for name in ("norm", "y0", "y1", "jn")}
    for k in range(start, 0, -1):
        _absorb(k, here, n, sums)
        below = (2 * k / x) * here - ahead
        scale = np.where(np.abs(below) > 1e200, 1e-200, 1.0)
        ahead, here = here * scale, below * scale
        for name in sums:
            sums[name] *= scale
    _absorb(0, here, n, sums)
    norm = sums["norm"]
    j0, j1 = here / norm, ahead / norm
    log_term = np.log(x / 2) + _EULER_GAMMA
    y0 = (2 / np.pi) * (log_term * j0 + 2 * sums["y0"] / norm)
    y1 = -(2 / np.pi) * (j0 / x - log_term * j1 + sums["y1"] / norm)
    return j0, j1, y0, y1, sums["jn"] / norm


def _absorb(k, value, n, sums):
    """Add J(k) (unnormalised) to the running sums; Y1's sum is regrouped per odd index."""
    sums["jn"] = np.where(n == k, value, sums["jn"])
    if k == 0:
        sums["norm"] += value
    elif k % 2 == 0:
        m = k // 2
        sums["norm"] += 2 * value
        sums["y0"] += (1 if m % 2 else -1) * value / m
    else:
        m = (k + 1) // 2  # J(k) is J(2m-1) of term m and J(2(m-1)+1) of term m-1
        weight = 1 / m + (1 / (m - 1) if m > 1 else 0.0)
        sums["y1"] += (1 if m % 2 else -1) * weight * value


def _hankel(order: int, x):
    """J and Y of order 0 or 1 at x >= 25 from Hankel's expansions."""
    mu = 4.0 * order * order
    term, p, q = np.ones_like(x), np.ones_like(x), np.zeros_like(x)
    for k in range(1, 40):
        term = term * (mu - (2 * k - 1) ** 2) / (8 * k * x)
        if k % 2:
            q += term if k % 4 == 1 else -term
        else:
            p += term if k % 4 == 0 else -term
    c, s = np.cos(x), np.sin(x)
    if order == 0:
        cos_phase, sin_phase = (c + s) / math.sqrt(2), (s - c) / math.sqrt(2)
    else:
        cos_phase, sin_phase = (s - c) / math.sqrt(2), -(s + c) / math.sqrt(2)
    amplitude = np.sqrt(2 / (np.pi * x))
    return (
        amplitude * (p * cos_phase - q * sin_phase),
        amplitude * (p * sin_phase + q * cos_phase),
    )


def _forward(n, x, f0, f1):
    """f(n) from f(0), f(1) by f(k+1) = (2k/x) f(k) - f(k-1); an infinite value stays."""
    result = np.where(n == 0, f0, f1)
    previous, current = f0, f1
    for k in range(1, int(np.max(n, initial=0))):
        following = np.where(np.isinf(current), current, (2 * k / x) * current - previous)
        previous, current = current, following
        result = np.where(n == k + 1, current, result)
    return result


def _order_0_and_1(x):
    """J0, J1, Y0, Y1 at finite x > 0."""
    near = x <= _HANKEL_FROM
    j0, j1, y0, y1, _ = _miller(np.zeros(x.shape, np.int64), np.where(near, x, 1.0))
    far = np.where(near, _HANKEL_FROM, x)
    (hj0, hy0), (hj1, hy1) = _hankel(0, far), _hankel(1, far)
    return tuple(np.where(near, a, b) for a, b in ((j0, hj0), (j1, hj1), (y0, hy0), (y1, hy1)))


def jn(n, x):
    n, x = np.asarray(n, dtype=np.int64), np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    regular = (n >= 0) & np.isfinite(a) & (a > 0) & ~_huge_order(n, a)
    backward = regular & ((a <= _HANKEL_FROM) | (n >= a))
    *_, by_miller = _miller(np.where(backward, n, 0), np.where(backward, a, 1.0))
    forward = regular & ~backward
    fx = np.where(forward, a, 2 * _HANKEL_FROM)
    by_recurrence = _forward(np.where(forward, n, 0), fx, _hankel(0, fx)[0], _hankel(1, fx)[0])
    result = np.where(backward, by_miller, np.where(forward, by_recurrence, 0.0))
    result = np.where(a == 0, np.where(n == 0, 1.0, 0.0), result)
    result = np.where((x < 0) & (n % 2 == 1), -result, result)  # Jn(-x) = (-1)**n Jn(x)
    return np.where((n < 0) | np.isnan(x), np.nan, result)


def yn(n, x):
    n, x = np.asarray(n, dtype=np.int64), np.asarray(x, dtype=np.float64)
    regular = (n >= 0) & np.isfinite(x) & (x > 0) & ~_huge_order(n, x)
    base = np.where(regular, x, 1.0)
    _, _, y0, y1 = _order_0_and_1(base)
    result = _forward(np.where(regular, n, 0), base, y0, y1)
    result = np.where(_huge_order(n, x) | (x == 0), -np.inf, result)
    result = np.where(np.isposinf(x), 0.0, result)
    return np.where((n < 0) | (x < 0) | np.isnan(x), np.nan, result)


def modified(order: int, x):
    """I0 or I1."""
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    near = a <= _SERIES_UNTIL
    half = np.where(near, a, 0.0) / 2
    term = half if order else np.ones_like(half)
    total = term
    for k in range(1, 200):
        term = term * (half * half) / (k * (k + order))
        total = total + term
        if np.all(term <= 1e-18 * total):
            break
    far = np.where(near, 2 * _SERIES_UNTIL, a)
    mu = 4.0 * order * order
    step, expansion = np.ones_like(far), np.ones_like(far)
    for k in range(1, 30):
        step = -step * (mu - (2 * k - 1) ** 2) / (8 * k * far)
        expansion = expansion + step
    growth = np.exp(far / 2)
    asymptotic = growth * (growth * expansion / np.sqrt(2 * np.pi * far))
    result = np.where(near, total, np.where(np.isinf(a), np.inf, asymptotic))
    return np.where(np.signbit(x) & (order == 1), -result, result)


def _both(stem, fn):
    return {f"__nv_{stem}f": fn, f"__nv_{stem}": fn}


SYMBOLS = {
    **_both("j0", lambda x: jn(0, x)),
    **_both("j1", lambda x: jn(1, x)),
    **_both("y0", lambda x: yn(0, x)),
    **_both("y1", lambda x: yn(1, x)),
    **_both("jn", jn),
    **_both("yn", yn),
    **_both("cyl_bessel_i0", lambda x: modified(0, x)),
    **_both("cyl_bessel_i1", lambda x: modified(1, x)),
}
