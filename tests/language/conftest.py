"""Fixtures of the language tests: a seeded random generator per test.

Every test gets its own stream, seeded from its node id, so adding a test never changes another
one's inputs. (Hypothesis' settings are per test: `helpers.hypothesis_settings`.)
"""

import zlib

import numpy as np
import pytest


@pytest.fixture
def gen(request) -> np.random.Generator:
    """A NumPy generator seeded from the test's node id."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
