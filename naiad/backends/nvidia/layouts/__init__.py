"""Linear layouts and the `ttg` encodings as linear layouts (docs/gpu.md, "Layouts").

from . import LinearLayout, to_linear_layout
layout = to_linear_layout(tensor_type.encoding, tensor_type.shape)
layout.apply(register=r, lane=l, warp=w)      # the coordinates that thread's register holds
"""

from .contiguity import contiguous_dim
from .conversions import to_linear_encoding, to_linear_layout
from .linear_layout import LinearLayout

__all__ = ["LinearLayout", "contiguous_dim", "to_linear_encoding", "to_linear_layout"]
