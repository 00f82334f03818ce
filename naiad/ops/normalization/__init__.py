"""Normalizations: softmax and log_softmax, layer_norm and rms_norm (fused row kernels),
group_norm and batch_norm (composed of row statistics and elementwise steps); every backward is
Naiad's (backward.py)."""

from .batch_norm import batch_norm
from .group_norm import group_norm
from .layer_norm import layer_norm
from .rms_norm import rms_norm
from .softmax import log_softmax, softmax

__all__ = ["batch_norm", "group_norm", "layer_norm", "log_softmax", "rms_norm", "softmax"]
