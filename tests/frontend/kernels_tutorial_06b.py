"""Kept for old imports: the kernels are in `tests/fixture_kernels/tutorial_06b.py`."""

from fixture_kernels import tutorial_06b as _shared

globals().update({k: v for k, v in vars(_shared).items() if not k.startswith("__")})
