"""`triton._C`: where Triton keeps its C++ bindings. Naiad has none; `libtriton.ir` is a read-only
view of Naiad's TTIR in the bindings' terms, for the libraries that walk a kernel's IR."""

from . import libtriton  # noqa: F401
