"""`triton.runtime.cache` while Naiad stands in for Triton: `triton_key()`, what identifies the
compiler in the keys of caches built on Triton (torch's Inductor keys its own cache with it),
here Naiad's version and the hash of its source; `knobs`, as Triton's module has it; and
Triton's cache managers for programs that keep their own files (cache_manager.py).

Naiad's own compile cache is `naiad/runtime/cache.py`; remote caches are not Naiad's.
"""

from __future__ import annotations

from ...runtime.cache import naiad_source_hash
from .. import knobs  # noqa: F401  (torch reads `triton.runtime.cache.knobs`)
from .cache_manager import (  # noqa: F401
    CacheManager,
    FileCacheManager,
    get_cache_manager,
    get_dump_manager,
    get_override_manager,
)


def triton_key() -> str:
    """Naiad's version and the hash of its source: any change of the compiler changes it."""
    from ... import __version__

    return f"naiad-{__version__}-{naiad_source_hash()}"
