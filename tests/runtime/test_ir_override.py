"""Triton's `ir_override` (runtime/ir_override.py): a launch, or an autotuning Config, runs the
kernel of a file of IR in place of the JIT function's source, with the arguments the source's
compile keeps. The file here is the kernel's own TTIR with one constant edited, so the values
(checked against NumPy) show which ran. Compiled for this machine's CPU."""

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad.runtime.autotuner import Config, autotune


@naiad.jit
def scaled(x, y, n, one, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y + offsets, tl.load(x + offsets, mask=mask) * 2.5 * one, mask=mask)


def _edited_ttir(tmp_path, x, y, n):
    """The kernel's TTIR for these arguments (`one` = 1 is a constant of it), its factor made
    4.0."""
    ttir = scaled.warmup(x, y, n, 1, BLOCK=128, grid=(1,), target="cpu").asm["ttir"]
    assert "2.500000e+00" in ttir
    path = tmp_path / "scaled.ttir"
    path.write_text(ttir.replace("2.500000e+00", "4.000000e+00"))
    return path


def test_a_launch_runs_the_file_in_place_of_the_source(cpu_fresh_cache, tmp_path):
    rng = np.random.default_rng(21)
    x = rng.standard_normal(300).astype(np.float32)
    y = rng.standard_normal(300).astype(np.float32)
    path = _edited_ttir(tmp_path, x, y, 300)
    grid = (3,)
    scaled[grid](x, y, 300, 1, BLOCK=128, ir_override=str(path))
    np.testing.assert_allclose(y, x.astype(np.float64) * 4.0, rtol=1e-6)
    scaled[grid](x, y, 300, 1, BLOCK=128)  # the source again
    np.testing.assert_allclose(y, x.astype(np.float64) * 2.5, rtol=1e-6)
    with pytest.raises(TypeError, match="takes 3 arguments"):  # `one` is no constant here
        scaled[grid](x, y, 300, 2, BLOCK=128, ir_override=str(path))


def test_an_autotuning_config_with_an_ir_override(cpu_fresh_cache, tmp_path):
    rng = np.random.default_rng(22)
    x = rng.standard_normal(256).astype(np.float32)
    y = np.zeros(256, np.float32)
    path = _edited_ttir(tmp_path, x, y, 256)
    plain, edited = Config({"BLOCK": 128}), Config({"BLOCK": 128}, ir_override=str(path))
    assert str(plain) != str(edited) and plain != edited
    timings = {str(plain): 2.0, str(edited): 1.0}
    chosen = []

    def bench(call, quantiles):
        call()
        return [timings[str(chosen[-1])]] * 3

    tuner = autotune([plain, edited], key=["n"], do_bench=bench)(scaled)
    original = tuner._bench

    def bench_config(*args, config, **meta):
        chosen.append(config)
        return original(*args, config=config, **meta)

    tuner._bench = bench_config
    tuner[lambda meta: (2,)](x, y, 256, 1)
    assert tuner.best_config == edited
    np.testing.assert_allclose(y, x.astype(np.float64) * 4.0, rtol=1e-6)
