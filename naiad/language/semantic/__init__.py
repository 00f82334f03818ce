"""The semantic layer: every type check, promotion, broadcast and shape rule of the language.

`Semantic(builder, target)` is the one object builtins call. It knows nothing of NumPy or the IR: it
works on `tensor`s whose handles only the `builder` understands, and asks the `target` what the
hardware accepts (dot shapes and precisions, fp8 support), so that the interpreter rejects exactly
what the compiler for that target would. The methods are grouped by theme in the mixins below.
"""

from __future__ import annotations

from ..target import CUDA_HOPPER, TargetInfo
from .arith import ArithMixin
from .casts import CastsMixin
from .memory import MemoryMixin
from .program import ProgramMixin
from .promotion import computation_type, integer_promote, literal_type, loop_index_type
from .reductions import ReductionsMixin
from .scalar_maps import ScalarMapsMixin
from .shapes import ShapesMixin
from .values import ValuesMixin


class Semantic(
    ValuesMixin,
    ArithMixin,
    CastsMixin,
    ShapesMixin,
    MemoryMixin,
    ReductionsMixin,
    ScalarMapsMixin,
    ProgramMixin,
):
    """Language rules bound to one builder and one target."""

    def __init__(self, builder, target: TargetInfo = CUDA_HOPPER):
        self.builder = builder
        self.target = target


__all__ = [
    "CUDA_HOPPER",
    "Semantic",
    "TargetInfo",
    "computation_type",
    "integer_promote",
    "literal_type",
    "loop_index_type",
]
