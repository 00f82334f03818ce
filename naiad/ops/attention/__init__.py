"""Attention: scaled_dot_product_attention from flash kernels (an online softmax over key
blocks forward; the probabilities recomputed from the log-sum-exp backward)."""

from .sdpa import scaled_dot_product_attention

__all__ = ["scaled_dot_product_attention"]
