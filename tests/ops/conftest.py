"""Fixtures of the op-library tests: the back end each test runs on, and a seeded generator.

Most tests run their kernels in the interpreter, which is the language's executable definition
and costs milliseconds per kernel instead of a compile; a representative set is compiled for
this machine's CPU in the default tier (`compiled` tests), and the full tier (-m full) compiles
every op for every dtype. naiad.ops is switched off after each test, whatever it did.
"""

import zlib

import pytest
import torch

import naiad.ops
from naiad import knobs


@pytest.fixture
def gen(request) -> torch.Generator:
    """A torch generator seeded from the test's node id."""
    return torch.Generator().manual_seed(zlib.crc32(request.node.nodeid.encode()))


@pytest.fixture(autouse=True)
def _switched_off_after():
    yield
    naiad.ops.disable()


@pytest.fixture
def interpreted():
    with knobs.override(NAIAD_BACKEND="interpreter"):
        yield "interpreter"


@pytest.fixture
def compiled():
    with knobs.override(NAIAD_BACKEND="cpu"):
        yield "cpu"


@pytest.fixture(params=["interpreter", pytest.param("cpu", marks=pytest.mark.full)])
def backend(request):
    """The interpreter in the default tier; compiled for the CPU in the full tier as well."""
    with knobs.override(NAIAD_BACKEND=request.param):
        yield request.param
