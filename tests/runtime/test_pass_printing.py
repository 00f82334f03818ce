"""NAIAD_PRINT_PASSES (Triton's MLIR_ENABLE_DUMP): the module printed on stderr before every
pass of a compile, the TTIR pipeline's and the back end's, in the order they run; a name
prints only the compiles whose module defines a function of that name; a compile that prints
reads no cache, and a small CPU launch prints before it returns (no background compile)."""

import re

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.runtime.compiler import TTIR_PIPELINE

HEADER = re.compile(r"^// -----// IR Dump Before (\S+) \('builtin\.module' operation\)", re.M)


@naiad.jit
def _shifted(x, y, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y + offsets, tl.load(x + offsets, mask=mask) * 2.0 - 0.5, mask=mask)


def _launch(n: int, block: int, seed: int) -> None:
    x = np.random.default_rng(seed).standard_normal(n).astype(np.float32)
    y = np.full(n, np.nan, np.float32)
    _shifted[(-(-n // block),)](x, y, n, BLOCK=block)
    np.testing.assert_allclose(y, x.astype(np.float64) * 2.0 - 0.5, rtol=1e-6)


def test_every_pass_prints_the_module_before_it(cpu_fresh_cache, capfd):
    with knobs.override(NAIAD_PRINT_PASSES="1"):
        _launch(100, 32, seed=0)
    err = capfd.readouterr().err
    passes = HEADER.findall(err)
    assert passes[: len(TTIR_PIPELINE)] == list(TTIR_PIPELINE)
    assert "tt-to-linalg" in passes and passes.count("canonicalize") >= 3
    blocks = HEADER.split(err)[2::2]  # the text after each header
    assert all("@_shifted" in text for text in blocks)
    assert "tt.func public @_shifted" in blocks[0] and "tt.load" in blocks[0]


# Each case launches a specialization of its own: one the process has loaded compiles nothing.
@pytest.mark.parametrize("value, block", [("_shifted", 64), ("on", 128), ("TRUE", 256)])
def test_a_name_or_a_true_word_prints(cpu_fresh_cache, capfd, value, block):
    with knobs.override(NAIAD_PRINT_PASSES=value):
        _launch(70, block, seed=1)
    assert HEADER.findall(capfd.readouterr().err)[0] == "inline"


@pytest.mark.parametrize("value, block", [("_other", 8), ("0", 16), ("off", 512), ("", 1024)])
def test_another_name_or_a_false_word_prints_nothing(cpu_fresh_cache, capfd, value, block):
    with knobs.override(NAIAD_PRINT_PASSES=value):
        _launch(90, block, seed=2)
    assert "IR Dump Before" not in capfd.readouterr().err


def test_a_cached_kernel_compiles_again_to_print(cpu_fresh_cache, capfd):
    x = np.random.default_rng(3).standard_normal(64).astype(np.float32)
    _shifted.warmup(x, x, 64, BLOCK=64, grid=(1,), target="cpu")
    capfd.readouterr()
    with knobs.override(NAIAD_PRINT_PASSES="1"):
        _shifted.warmup(x, x, 64, BLOCK=64, grid=(1,), target="cpu")
    assert HEADER.findall(capfd.readouterr().err)[: len(TTIR_PIPELINE)] == list(TTIR_PIPELINE)
