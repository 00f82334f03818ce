"""The error-function family NumPy lacks: erfcx, erfinv, erfcinv, normcdf, normcdfinv (fp64).

Built on `math.erf` / `math.erfc` (correctly rounded to within an ulp or so):

- erfcx(x) = exp(x*x) * erfc(x), with x*x split exactly into two doubles so that exp does not
  amplify its rounding; from x = 10 on (where erfc underflows later) the continued fraction
  erfc(x) = exp(-x*x) / sqrt(pi) / (x + (1/2) / (x + (2/2) / (x + (3/2) / ...))).
- erfinv(x) for |x| <= 1/2: Newton's method on erf from the Maclaurin series. Beyond, and for
  erfcinv, Newton's method on log(erfc(y)) = log(z), i.e. log(erfcx(y)) - y*y = log(z): it is
  concave, so from y0 = sqrt(-log z) (never below the root) the steps decrease monotonically,
  and working with logarithms keeps subnormal z as accurate as any other. 1 - |x| and 2 - z are
  exact where they are taken (Sterbenz's lemma).
- normcdf(x) = erfc(-x / sqrt(2)) / 2, with -x / sqrt(2) carried as two doubles and the low
  part applied through erfc's derivative: without it the rounding of x / sqrt(2) alone costs
  up to 1e-13 relative in the far tail.
"""

from __future__ import annotations

import decimal
import math

import numpy as np

from .rounding import two_prod

SQRT_PI = math.sqrt(math.pi)
_INV_SQRT2 = math.sqrt(0.5)
with decimal.localcontext() as _ctx:
    _ctx.prec = 50
    _INV_SQRT2_LO = float(decimal.Decimal(2).sqrt() / 2 - decimal.Decimal(_INV_SQRT2))

_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def erfcx(x):
    x = np.asarray(x, dtype=np.float64)
    square, square_err = two_prod(x, x)
    direct = np.exp(square) * (1.0 + square_err) * _erfc(x)
    far = x >= 10
    xf = np.where(far, x, 10.0)
    t = xf
    for k in range(40, 0, -1):
        t = xf + (k / 2) / t
    return np.where(far, 1.0 / (SQRT_PI * t), direct)


def _erfinv_central(x):
    """erfinv for |x| <= 1/2."""
    c = SQRT_PI / 2 * x
    c2 = c * c
    y = c * (1 + c2 * (1 / 3 + c2 * (7 / 30 + c2 * (127 / 630))))
    for _ in range(4):
        y = y - (_erf(y) - x) * (SQRT_PI / 2) * np.exp(y * y)
    return y


def _erfcinv_tail(z):
    """The y >= 0 with erfc(y) = z, for 0 < z <= 1/2."""
    log_z = np.log(z)
    y = np.sqrt(-log_z)
    for _ in range(8):
        scaled = erfcx(y)
        y = y + (np.log(scaled) - y * y - log_z) * scaled * (SQRT_PI / 2)
    return y


def erfinv(x):
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    central = a <= 0.5
    y = np.where(
        central,
        _erfinv_central(np.where(central, x, 0.0)),
        np.sign(x) * _erfcinv_tail(np.where(central | (a >= 1), 0.5, 1.0 - a)),
    )
    y = np.where(a == 1, np.copysign(np.inf, x), y)
    return np.where((a > 1) | np.isnan(x), np.nan, y)


def erfcinv(z):
    z = np.asarray(z, dtype=np.float64)
    low, high = (z > 0) & (z <= 0.5), (z >= 1.5) & (z < 2)
    central = (z > 0.5) & (z < 1.5)
    y = np.where(central, _erfinv_central(np.where(central, 1.0 - z, 0.0)), 0.0)
    y = np.where(low, _erfcinv_tail(np.where(low, z, 0.5)), y)
    y = np.where(high, -_erfcinv_tail(np.where(high, 2.0 - z, 0.5)), y)
    y = np.where(z == 0, np.inf, np.where(z == 2, -np.inf, y))
    return np.where((z < 0) | (z > 2) | np.isnan(z), np.nan, y)


def normcdf(x):
    x = np.asarray(x, dtype=np.float64)
    u, u_err = two_prod(-x, np.full_like(x, _INV_SQRT2))
    u_lo = np.where(np.isfinite(x), u_err - x * _INV_SQRT2_LO, 0.0)
    correction = 1.0 - u_lo * 2.0 / (SQRT_PI * erfcx(u))
    return 0.5 * _erfc(u) * np.where(np.isfinite(correction), correction, 1.0)


def normcdfinv(p):
    return -math.sqrt(2.0) * erfcinv(2.0 * np.asarray(p, dtype=np.float64))


def _both(stem, fn):
    return {f"__nv_{stem}f": fn, f"__nv_{stem}": fn}


SYMBOLS = {
    **_both("erfcx", erfcx),
    **_both("erfinv", erfinv),
    **_both("erfcinv", erfcinv),
    **_both("normcdf", normcdf),
    **_both("normcdfinv", normcdfinv),
}
