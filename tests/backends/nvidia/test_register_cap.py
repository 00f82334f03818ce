"""`maxnreg` caps a kernel's registers: the linkers (nvJitLink, the driver's cuLink*) compile
PTX as relocatable code, where a `-maxrregcount` option leaves kernels alone, so the cap is
written into the PTX as the kernel's own `.maxnreg`."""

from test_lowering_kernels import example

from naiad.backends.nvidia import link


def _compile(**options):
    args = ("*fp16", "*fp16", "*fp16", "*fp16", "*fp32", "*fp32", 8192, 8192, 1e-5)
    return example("05_layer_norm")._layer_norm_fwd_fused.warmup(
        *args, BLOCK_SIZE=8192, num_warps=8, grid=(1,), target="cuda:sm_90a", **options
    )


def test_maxnreg_is_written_into_the_ptx():
    """Layer norm over rows of 8192 takes more than 48 registers uncapped."""
    free, capped = _compile(), _compile(maxnreg=48)
    assert ".maxnreg" not in free.asm["ptx"]
    assert ".maxnreg 48" in capped.asm["ptx"]
    if link.linker_version() is not None:
        assert free.n_regs > 48 >= capped.n_regs > 0
