"""Derive the library's polynomial coefficients: weighted minimax fits by the Remez exchange.

A developer tool, not imported by the library: the coefficient tables in the family modules are
its output, pasted as literals. It needs mpmath (installed with sympy/torch), imported lazily.

    python -m naiad.backends.cpu.mathlib.fit            # every table
    python -m naiad.backends.cpu.mathlib.fit sin cos    # some of them

Each fit approximates g(t) by a polynomial P of the given degree on [a, b], minimizing
max |w(t) (g(t) - P(t))|; the weights are chosen so that this is the relative error of the
function the polynomial serves (for sin: the error of r + r*z*P(z) relative to sin r, z = r*r).
The coefficients are rounded to the target type one at a time, the remaining ones refitted
after each (see `fit`); the printed bound is the weighted error of the rounded polynomial on the
fitting grid (the tests measure what the library achieves with it, rounding errors included).
"""

from __future__ import annotations

import sys


def _grid(mp, a, b, size: int = 3000) -> list:
    """Chebyshev-spaced points of [a, b], endpoints included; never exactly the middle (where a
    symmetric range's weight may vanish), and b/10**6 instead of an endpoint at 0 (where the
    weights vanish and g is a limit)."""
    start = a if a != 0 else b / 10**6
    inner = [start + (b - start) * (1 - mp.cos(mp.pi * (k + 0.5) / size)) / 2 for k in range(size)]
    return sorted([start, b, *inner])


def _errors(grid, target, weight, coefficients, powers) -> list:
    return [
        weight[i] * (target[i] - sum(c * grid[i] ** k for c, k in zip(coefficients, powers)))
        for i in range(len(grid))
    ]


def _chebyshev_nodes(mp, size: int, count: int) -> list[int]:
    """Indices of grid points near shifted Chebyshev nodes."""
    return sorted(
        {
            int(mp.nint((size - 1) * (1 - mp.cos(mp.pi * (i + 0.0137) / (count - 0.97))) / 2))
            for i in range(count)
        }
    )


def remez(mp, grid, target, weight, powers: list[int], start=None, iterations: int = 40):
    """The weighted minimax combination of t**k (k in `powers`) for `target` on `grid`.

    `target` and `weight` hold the function's values on the grid; reference points are grid
    points, so no value is computed twice. `start` (coefficients for `powers`) seeds the first
    reference with the extrema of its error; otherwise Chebyshev nodes do. Returns
    (coefficients, max weighted error).
    """
    count = len(powers) + 1
    nodes = []
    if start is not None:
        nodes = _alternating_extrema(mp, _errors(grid, target, weight, start, powers), count)
    if len(nodes) < count:
        nodes = _chebyshev_nodes(mp, len(grid), count)
    coefficients, worst, previous = start, None, None
    for _ in range(iterations):
        if len(nodes) < count:
            break
        matrix = mp.matrix(count, count)
        rhs = mp.matrix(count, 1)
        for row, index in enumerate(nodes):
            for column, k in enumerate(powers):
                matrix[row, column] = grid[index] ** k
            matrix[row, count - 1] = (-1) ** row / weight[index]
            rhs[row] = target[index]
        solution = mp.lu_solve(matrix, rhs)
        coefficients = [solution[i] for i in range(count - 1)]
        error = _errors(grid, target, weight, coefficients, powers)
        worst = max(abs(e) for e in error)
        nodes = _alternating_extrema(mp, error, count)
        if previous is not None and abs(worst - previous) < worst * mp.mpf("1e-8"):
            break
        previous = worst
    return coefficients, worst


def fit(mp, g, w, a, b, degree: int, rounding):
    """Minimax coefficients (ascending) already rounded by `rounding`, and the bound they reach.

    Rounding every coefficient of the exact minimax polynomial on its own can cost more than the
    fit's own error (in f32, the constant term alone moves the result by up to half an ulp). So
    the coefficients are fixed one at a time from the constant term up: each is rounded, then
    the higher ones are fitted again to the remainder, absorbing its rounding error.
    """
    grid = _grid(mp, mp.mpf(a), mp.mpf(b))
    values = [g(t) for t in grid]
    weight = [w(t) for t in grid]
    fixed, free = [], None
    while len(fixed) <= degree:
        target = [v - sum(c * t**k for k, c in enumerate(fixed)) for v, t in zip(values, grid)]
        powers = list(range(len(fixed), degree + 1))
        # Candidates: the exchange started from the previous solution (less its now fixed
        # lowest coefficient) or from Chebyshev nodes, and that previous solution itself; the
        # exchange can stall when few coefficients are left, so the best one is kept.
        candidates = [remez(mp, grid, target, weight, powers, start=free)]
        candidates.append(remez(mp, grid, target, weight, powers))
        if free is not None:
            errors = _errors(grid, target, weight, free, powers)
            candidates.append((free, max(abs(e) for e in errors)))
        free, _ = min(candidates, key=lambda candidate: candidate[1])
        fixed.append(mp.mpf(rounding(free[0])))
        free = free[1:]
    bound = max(
        abs(wt * (v - sum(c * t**k for k, c in enumerate(fixed))))
        for v, wt, t in zip(values, weight, grid)
    )
    return fixed, bound


def _alternating_extrema(mp, error, count: int) -> list[int]:
    """One index of largest |error| per run of constant sign, thinned to `count` alternating
    ones by dropping the smallest (an interior one takes a neighbour with it)."""
    runs = []
    start = 0
    for j in range(1, len(error) + 1):
        if j == len(error) or mp.sign(error[j]) != mp.sign(error[start]):
            runs.append(max(range(start, j), key=lambda q: abs(error[q])))
            start = j
    while len(runs) > count:
        j = min(range(len(runs)), key=lambda q: abs(error[runs[q]]))
        if j in (0, len(runs) - 1):
            runs.pop(j)
        else:
            keep = max(runs[j - 1], runs[j + 1], key=lambda q: abs(error[q]))
            runs[j - 1 : j + 2] = [keep]
    return runs


def _odd(mp, f):
    """(g, w) for f(r) = r + r*z*P(z): P(z) = (f(r)/r - 1)/z, weighted by relative error of f."""
    sq = mp.sqrt
    return (
        lambda z: (f(sq(z)) / sq(z) - 1) / z,
        lambda z: z * sq(z) / f(sq(z)),
    )


def _erfc_scaled(mp, c, lowest, limit, origin):
    """(g, w, a, b) for erfc(a) exp(a*a) / t, t = 1/(1 + c*a), in s = t - origin for a in
    [lowest, limit]; `origin` (near t at the limit) is a short binary fraction, so that s is
    t - origin with one rounding at most (none where t <= 2 origin: large a, the small results)."""
    origin = mp.mpf(origin)

    def h(s):
        t = s + origin
        a = (1 / t - 1) / c
        return mp.erfc(a) * mp.exp(a * a) / t

    low = 1 / (1 + c * mp.mpf(limit)) - origin
    high = 1 / (1 + c * mp.mpf(lowest)) - origin
    return h, lambda s: 1 / h(s), low, high


def fits(mp):
    """name -> (g, w, a, b, {suffix: degree}); see each family module for how P is used."""
    sq = mp.sqrt
    ln2 = mp.log(2)
    half_ln2 = ln2 / 2 * mp.mpf("1.001")
    quarter_pi_sq = (mp.pi / 4) ** 2 * mp.mpf("1.01")
    return {
        "exp": (  # e**r = 1 + r + r*r/2 + r**3 P(r), relative error of e**r - 1 (serves both)
            lambda r: (mp.exp(r) - 1 - r - r**2 / 2) / r**3,
            lambda r: r**3 / mp.expm1(r),
            -half_ln2, half_ln2, {"f32": 4, "f64": 9},
        ),
        "exp_single": (  # f32 exp (exp_single.py): e**r = 1 + r + r*r P(r)
            lambda r: (mp.exp(r) - 1 - r) / r**2,
            lambda r: r**2 / mp.exp(r),
            -half_ln2, half_ln2, {"f32": 4},
        ),
        "exp2_single": (  # f32 exp2 (exp_single.py): 2**r = 1 + r P(r)
            lambda r: (mp.power(2, r) - 1) / r,
            lambda r: r / mp.power(2, r),
            mp.mpf("-0.5"), mp.mpf("0.5"), {"f32": 5},
        ),
        "log": (
            lambda z: (2 * mp.atanh(sq(z)) / sq(z) - 2) / z,
            lambda z: z,
            0, mp.mpf("0.0295"), {"f32": 2, "f64": 6},
        ),
        "log_tail": (  # pow's double-word log: 2 atanh(s) = 2s + 2s^3/3 + s^5 P(s^2)
            lambda z: (2 * mp.atanh(sq(z)) / sq(z) - 2 - 2 * z / 3) / z**2,
            lambda z: z**2,
            0, mp.mpf("0.0295"), {"f64": 6},
        ),
        "sin": (*_odd(mp, mp.sin), 0, quarter_pi_sq, {"f32": 3, "f64": 5}),
        "cos": (
            lambda z: (mp.cos(sq(z)) - 1 + z / 2) / z**2,
            lambda z: z**2 / mp.cos(sq(z)),
            0, quarter_pi_sq, {"f32": 3, "f64": 5},
        ),
        "atan": (*_odd(mp, mp.atan), 0, mp.mpf("0.2505"), {"f32": 5, "f64": 11}),
        "asin": (*_odd(mp, mp.asin), 0, mp.mpf("0.2505"), {"f32": 5, "f64": 12}),
        "sinh": (*_odd(mp, mp.sinh), 0, mp.mpf("1.0001"), {"f32": 3, "f64": 6}),
        "tanh": (*_odd(mp, mp.tanh), 0, mp.mpf("0.55") ** 2, {"f32": 4, "f64": 10}),
        "erf": (  # erf x = x (2/sqrt(pi) + z P(z))
            lambda z: (mp.erf(sq(z)) / sq(z) - 2 / sq(mp.pi)) / z,
            lambda z: z / (mp.erf(sq(z)) / sq(z)),
            0, mp.mpf("1.0001"), {"f32": 5, "f64": 11},
        ),
        "erf_tail": (  # f32 erf a = 1 - 2**P(a), a >= 1: relative error of erf
            lambda a: mp.log(mp.erfc(a), 2),
            lambda a: mp.erfc(a) * ln2 / mp.erf(a),
            1, mp.mpf("3.92"), {"f32": 6},
        ),
        "erfc_f32": (*_erfc_scaled(mp, mp.mpf("0.5"), "0.5", "10.1", "0.1640625"), {"f32": 10}),
        "erfc_f64": (*_erfc_scaled(mp, mp.mpf("0.5"), "0.5", "27.5", "0.0673828125"), {"f64": 22}),
        "cbrt": (lambda m: mp.cbrt(m), lambda m: 1 / mp.cbrt(m), 1, 8, {"f32": 5, "f64": 5}),
    }  # fmt: skip


def _literal(value, suffix: str) -> str:
    """The shortest decimal that reads back as the coefficient rounded to the target type."""
    import numpy as np

    if suffix == "f64":
        return repr(float(value))
    rounded = np.float32(float(value))
    text = str(rounded)
    assert np.float32(float(text)) == rounded, text
    return text


def main(names: list[str]) -> None:
    import mpmath as mp
    import numpy as np

    mp.mp.dps = 60
    table = fits(mp)
    rounding = {"f32": lambda v: float(np.float32(float(v))), "f64": float}
    for name in names or list(table):
        g, w, a, b, degrees = table[name]
        print(f"{name}:")
        for suffix, degree in degrees.items():
            coefficients, bound = fit(mp, g, w, a, b, degree, rounding[suffix])
            values = ", ".join(_literal(c, suffix) for c in coefficients)
            print(f"    # {suffix}: degree {degree}, |error| <= 2**{float(mp.log(bound, 2)):.1f}")
            print(f'    "{suffix}": ({values}),')


if __name__ == "__main__":
    main(sys.argv[1:])
