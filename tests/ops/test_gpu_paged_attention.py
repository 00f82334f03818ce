"""paged_attention_decode on CUDA tensors (`-m gpu`, skipped without a GPU): the kernels compiled
for the GPU at its own tiles and partitions, against the float64 gather-then-softmax reference
(paged_reference.py), with and without the combining kernel."""

import pytest
import torch
from ops_helpers import assert_matches
from paged_reference import paged_cache, paged_reference

import naiad.ops as ops
from naiad import knobs

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("E", [64, 128, 256])
@pytest.mark.parametrize("H, HK, block_size", [(32, 8, 16), (16, 16, 32), (64, 1, 64)])
@pytest.mark.parametrize("max_seq_len", [None, 500])
def test_paged_attention_on_cuda(dtype, E, H, HK, block_size, max_seq_len):
    """Lengths of 1, a page short of one, one page, a few, none and 2000 tokens (four of the
    GPU's 512-token partitions); the grid sized by the table's capacity, or by a max_seq_len
    under 512 where the long sequence is left out (one partition: no combining kernel)."""
    gen = torch.Generator().manual_seed(E * H + block_size)
    lengths = [1, block_size - 1, block_size, 3 * block_size + 5, 0]
    lengths += [] if max_seq_len else [2000]
    k_cache, v_cache, tables, seq_lens = paged_cache(lengths, block_size, HK, E, dtype, gen)
    q = (torch.rand(len(lengths), H, E, generator=gen) * 2 - 1).to(dtype)
    slopes = torch.rand(H, generator=gen) if H == 16 else None
    torch.backends.cuda.matmul.allow_tf32 = False
    with knobs.override(NAIAD_BACKEND="auto"):
        cuda = [t.cuda() for t in (q, k_cache, v_cache, tables, seq_lens)]
        on_gpu = None if slopes is None else slopes.cuda()
        out = ops.paged_attention_decode(*cuda, alibi_slopes=on_gpu, max_seq_len=max_seq_len)
    expected = paged_reference(q, k_cache, v_cache, tables, seq_lens, E**-0.5, slopes)
    assert_matches(out.cpu(), expected.to(dtype), 16, normwise=True)
