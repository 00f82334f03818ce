"""Host-side helpers kernels also use at compile time (`naiad.cdiv`, `naiad.next_power_of_2`)."""

from __future__ import annotations

from .language.core import constexpr_function


@constexpr_function
def cdiv(x: int, y: int) -> int:
    """ceil(x / y) for positive integers."""
    return (x + y - 1) // y


@constexpr_function
def next_power_of_2(n: int) -> int:
    """The smallest power of 2 that is >= n (1 for n <= 1)."""
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()
