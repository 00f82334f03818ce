"""paged_attention_decode of naiad.ops against a float64 reference that gathers each sequence's
keys and values through its block table (paged_reference.py): shuffled pages, NaN wherever the
kernels must not read, lengths of 1, block_size - 1, block_size, several blocks and several
partitions (the partition shrunk so that short sequences take several), 0; grouped, multi-query
and ordinary heads; ALiBi; strided queries; the argument checks."""

import pytest
import torch
from ops_helpers import FLOATS, assert_matches, make
from paged_reference import paged_cache, paged_reference

import naiad.ops as ops
from naiad.ops.attention import paged


@pytest.fixture
def small_partitions(monkeypatch):
    """Partitions of 64 tokens in tiles of 32, so that a 300-token sequence takes five, and
    query tiles of 512 elements (16 heads at head size 32), so that a group of 32 takes two."""
    monkeypatch.setattr(paged, "MAX_GROUP_TILE", 512)
    rows = ((256, 32, 64, 1),)
    monkeypatch.setattr(paged, "BLOCKS", {(kind, wide): rows for kind in ("cpu", "cuda")
                                          for wide in (False, True)})  # fmt: skip


def _lengths(block_size, long=300):
    return [1, block_size - 1, block_size, 3 * block_size + 5, 0, long]


def _check(gen, lengths, H=8, HK=2, E=32, block_size=16, dtype=torch.float32, scale=None,
           alibi=False, q=None, tolerance=8.0, **kwargs):  # fmt: skip
    k_cache, v_cache, tables, seq_lens = paged_cache(lengths, block_size, HK, E, dtype, gen)
    q = make((len(lengths), H, E), dtype, gen, -1, 1) if q is None else q
    slopes = make((H,), torch.float32, gen, 0, 1) if alibi else None
    out = ops.paged_attention_decode(q, k_cache, v_cache, tables, seq_lens, scale=scale,
                                     alibi_slopes=slopes, **kwargs)  # fmt: skip
    scale = E**-0.5 if scale is None else scale
    expected = paged_reference(q, k_cache, v_cache, tables, seq_lens, scale, slopes)
    assert_matches(out, expected.to(dtype), tolerance, normwise=True)


@pytest.mark.parametrize("H, HK", [(8, 2), (4, 4), (32, 1)])
def test_paged_attention_interpreted(H, HK, gen, interpreted, small_partitions):
    """Grouped heads (4 a group), ordinary ones, and one key head for 32 query heads (a
    group wider than the query tile: two programs per key head)."""
    _check(gen, _lengths(16), H=H, HK=HK, scale=0.3)


def test_paged_attention_compiled(gen, compiled, small_partitions):
    _check(gen, _lengths(16), alibi=True)


def test_one_partition_launches_no_combining_kernel(gen, interpreted, monkeypatch):
    """Where the longest sequence fits one partition (the lengths' maximum on the CPU, or
    max_seq_len), the decode kernel writes the output and the combining kernel never runs."""
    monkeypatch.setattr(paged, "paged_combine", None)
    _check(gen, _lengths(16, long=70), E=24)
    _check(gen, [3, 17], max_seq_len=40)


def test_max_seq_len_sizes_the_grid(gen, interpreted, small_partitions):
    """A max_seq_len past the lengths adds partitions no sequence fills: they add nothing."""
    _check(gen, [5, 40], max_seq_len=1000)


@pytest.mark.full
@pytest.mark.parametrize("dtype, E", list(zip(FLOATS, [64, 128, 256], strict=True)))
@pytest.mark.parametrize("block_size", [16, 32, 64])
def test_paged_attention_matrix(dtype, E, block_size, gen, backend, small_partitions):
    _check(gen, _lengths(block_size), E=E, block_size=block_size, dtype=dtype, tolerance=16.0)


@pytest.mark.full
@pytest.mark.parametrize("alibi", [False, True])
def test_paged_attention_of_odd_sizes(alibi, gen, backend, small_partitions):
    """A head size short of a power of two, pages of 8 (smaller than a tile) and of 48 (not a
    power of two), ALiBi slopes."""
    for block_size in (8, 48):
        _check(gen, _lengths(block_size), H=6, HK=3, E=40, block_size=block_size, alibi=alibi)


@pytest.mark.full
def test_paged_attention_of_strided_queries(gen, backend, small_partitions):
    """q as a slice of a fused (num_seqs, 3, H, E) projection."""
    lengths = _lengths(16)
    q = make((len(lengths), 3, 8, 32), torch.float32, gen, -1, 1)[:, 1]
    _check(gen, lengths, q=q)


def test_paged_attention_checks_its_arguments(gen):
    k_cache, v_cache, tables, seq_lens = paged_cache([5, 20], 16, 2, 8, torch.float32, gen)
    q = make((2, 4, 8), torch.float32, gen)
    good = (q, k_cache, v_cache, tables, seq_lens)
    for index, bad, message in [
        (0, q[0], "q must be"),
        (0, make((2, 3, 8), torch.float32, gen), "multiple of num_kv_heads"),
        (0, make((2, 4, 16), torch.float32, gen), "head_size is 8, q's 16"),
        (2, v_cache[:2], "v_cache is"),
        (1, k_cache.half(), "caches are torch.float16"),
        (3, tables.long(), "block_tables must be a 2-d int32"),
        (3, tables[:1], "block_tables must be a 2-d int32 tensor of num_seqs \\(2\\)"),
        (4, seq_lens[:, None], "seq_lens must be a 1-d int32"),
        (4, torch.tensor([5, 49], dtype=torch.int32), "seq_lens must lie in 0 .. 48"),
        (4, torch.tensor([-1, 3], dtype=torch.int32), "seq_lens must lie in 0"),
        (3, torch.tensor([[0, 1], [2, 99]], dtype=torch.int32), "outside the cache's 6 blocks"),
        (4, seq_lens.to("meta"), "seq_lens is on meta"),
    ]:
        arguments = list(good)
        arguments[index] = bad
        with pytest.raises(ValueError, match=message):
            ops.paged_attention_decode(*arguments)
    with pytest.raises(ValueError, match="longer than max_seq_len, 10"):
        ops.paged_attention_decode(*good, max_seq_len=10)
    with pytest.raises(ValueError, match="alibi_slopes must be a float32"):
        ops.paged_attention_decode(*good, alibi_slopes=torch.ones(2))
    with pytest.raises(ops.Unsupported, match="float64"):
        ops.paged_attention_decode(*(t.double() for t in good[:3]), *good[3:])
