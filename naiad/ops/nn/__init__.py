"""Layers' ops: nll_loss (cross_entropy is log_softmax and nll_loss) and embedding."""

from .embedding import embedding
from .nll_loss import nll_loss

__all__ = ["embedding", "nll_loss"]
