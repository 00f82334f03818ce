"""The `tt` dialect (Triton's TTIR ops, types and attributes) in one namespace.

The declarations are split by topic: tt_types.py (`!tt.ptr`, `!tt.tensordesc`, constraints),
tt_attributes.py (enums), tt_ops.py (casts, arithmetic, addptr, program ids, make_range),
tt_shape.py (splat, broadcast, reshape, ...), tt_memory.py (load, store, atomics, block
pointers), tt_descriptor.py (tensor descriptors), tt_compute.py (dot, reduce, scan),
tt_elementwise.py (map_elementwise, extern calls, inline asm), tt_func.py (func, call, return,
print, assert). Folded `tt` constants become `arith.constant`s.
"""

from ..ir import register_constant_materializer
from .arith import materialize_constant
from .tt_attributes import *  # noqa: F403
from .tt_compute import *  # noqa: F403
from .tt_descriptor import *  # noqa: F403
from .tt_elementwise import *  # noqa: F403
from .tt_func import *  # noqa: F403
from .tt_memory import *  # noqa: F403
from .tt_ops import *  # noqa: F403
from .tt_shape import *  # noqa: F403
from .tt_types import *  # noqa: F403

register_constant_materializer("tt", materialize_constant)
