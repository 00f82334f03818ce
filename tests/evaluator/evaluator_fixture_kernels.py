"""Kept for old imports: the kernels are in `tests/fixture_kernels/lang.py`."""

from fixture_kernels import lang as _shared

globals().update({k: v for k, v in vars(_shared).items() if not k.startswith("__")})
