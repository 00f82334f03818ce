"""The kernels of `scripts/ttir_fixture_tutorial_06b.py` (Triton's TTIR fixtures), taken from
`examples/06b_fused_attention_block_ptr.py`, whose kernel bodies are the fixture's source."""

from fixture_kernels import example

_example = example("06b_fused_attention_block_ptr")

_attn_fwd_inner = _example._attn_fwd_inner
_attn_fwd = _example._attn_fwd
