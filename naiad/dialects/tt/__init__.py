"""The `tt` dialect (Triton's TTIR ops, types and attributes) in one namespace.

The declarations are split by topic: tt/types.py (`!tt.ptr`, `!tt.tensordesc`, constraints),
tt/attributes.py (enums), tt/ops.py (casts, arithmetic, addptr, program ids, make_range),
tt/shape.py (splat, broadcast, reshape, ...), tt/memory.py (load, store, atomics, block
pointers), tt/descriptor.py (tensor descriptors), tt/compute.py (dot, reduce, scan),
tt/elementwise.py (map_elementwise, extern calls, inline asm), tt/func.py (func, call, return,
print, assert). Folded `tt` constants become `arith.constant`s.
"""

from ...ir import register_constant_materializer
from ..arith import materialize_constant
from .attributes import *  # noqa: F403
from .compute import *  # noqa: F403
from .descriptor import *  # noqa: F403
from .elementwise import *  # noqa: F403
from .func import *  # noqa: F403
from .memory import *  # noqa: F403
from .ops import *  # noqa: F403
from .shape import *  # noqa: F403
from .types import *  # noqa: F403

register_constant_materializer("tt", materialize_constant)
