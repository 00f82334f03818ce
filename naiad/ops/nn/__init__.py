"""Layers' ops: nll_loss (cross_entropy is log_softmax and nll_loss), embedding and one_hot."""

from .embedding import embedding
from .nll_loss import nll_loss
from .one_hot import one_hot

__all__ = ["embedding", "nll_loss", "one_hot"]
