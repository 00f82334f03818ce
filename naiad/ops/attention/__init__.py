"""Attention from flash kernels (an online softmax over key blocks forward; the probabilities
recomputed from the log-sum-exp backward): scaled_dot_product_attention on batched sequences,
varlen_attention on packed ones; paged_attention_decode, a serving batch's decode step over a
paged KV cache (partitioned over each sequence's tokens, then combined)."""

from .paged import paged_attention_decode
from .sdpa import scaled_dot_product_attention
from .varlen import varlen_attention

__all__ = ["paged_attention_decode", "scaled_dot_product_attention", "varlen_attention"]
