"""Fixtures of the language tests: a seeded random generator per test, and hypothesis' settings.

Every test gets its own stream (seeded from its node id, so adding a test never changes another
one's inputs); hypothesis runs derandomized, without an example database, so runs repeat exactly.
"""

import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "naiad-language",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.differing_executors],
)
settings.load_profile("naiad-language")


@pytest.fixture
def gen(request) -> np.random.Generator:
    """A NumPy generator seeded from the test's node id."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
