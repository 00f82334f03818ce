"""Attention from flash kernels (an online softmax over key blocks forward; the probabilities
recomputed from the log-sum-exp backward): scaled_dot_product_attention on batched sequences,
varlen_attention on packed ones."""

from .sdpa import scaled_dot_product_attention
from .varlen import varlen_attention

__all__ = ["scaled_dot_product_attention", "varlen_attention"]
