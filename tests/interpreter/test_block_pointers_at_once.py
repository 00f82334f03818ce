"""The interpreter's `block_pointers` (a block pointer's pointers and mask in a few NumPy
operations) against the semantic layer's own construction from operations, on random bases,
offsets (negative, int32 and int64), strides (negative, and large enough to wrap), shapes and
checked dimensions of ranks 1 to 3."""

import numpy as np
import pytest

from naiad.language import dtypes as t
from naiad.language.core import tensor
from naiad.language.memory import block_ptr
from naiad.language.semantic import Semantic
from naiad.runtime.interpreter.builder import InterpreterBuilder, scalar_tensor
from naiad.runtime.interpreter.launch import interpreter_rules
from naiad.runtime.interpreter.memory import Memory, Pointers


def _both_ways(pointer, checks, monkeypatch):
    semantic = Semantic(InterpreterBuilder(Memory(), (1, 1, 1), False), interpreter_rules())
    quick = pointer._pointers_and_mask(semantic, checks)
    with monkeypatch.context() as patch:
        patch.setattr(InterpreterBuilder, "block_pointers", lambda *args: None)
        slow = pointer._pointers_and_mask(semantic, checks)
    return quick, slow


def _random_pointer(gen, element, offset_type):
    rank = int(gen.integers(1, 4))
    block = [int(2 ** gen.integers(0, 4)) for _ in range(rank)]
    base = Pointers(np.array(gen.integers(0, 2**63), np.uint64), None)
    base = tensor(base, t.pointer_type(element))
    big = gen.random() < 0.3  # strides that wrap the int64 arithmetic
    bound = 2**62 if big else 50
    strides = [scalar_tensor(int(gen.integers(-bound, bound)), t.int64) for _ in block]
    shape = [scalar_tensor(int(gen.integers(-3, 40)), t.int64) for _ in block]
    info = np.iinfo(np.int32 if offset_type == t.int32 else np.int64)
    extreme = gen.random() < 0.2
    offsets = [
        scalar_tensor(
            int(gen.integers(info.min, info.max)) if extreme else int(gen.integers(-20, 40)),
            offset_type,
        )
        for _ in block
    ]
    order = list(range(rank))[::-1]
    return block_ptr(base, shape, strides, offsets, block, order), rank


@pytest.mark.parametrize("element", [t.float16, t.float32, t.int8, t.int1, t.float64])
@pytest.mark.parametrize("offset_type", [t.int32, t.int64])
def test_same_pointers_and_mask_as_the_operations(element, offset_type, monkeypatch):
    gen = np.random.default_rng([element.primitive_bitwidth, offset_type.int_bitwidth])
    for _ in range(40):
        pointer, rank = _random_pointer(gen, element, offset_type)
        checks = sorted(set(gen.choice(rank, int(gen.integers(0, rank + 1))).tolist()))
        (quick_ptr, quick_mask), (slow_ptr, slow_mask) = _both_ways(pointer, checks, monkeypatch)
        assert quick_ptr.type == slow_ptr.type
        assert np.array_equal(quick_ptr.handle.addr, slow_ptr.handle.addr)
        assert quick_ptr.handle.origin is slow_ptr.handle.origin
        if not checks:
            assert quick_mask is None and slow_mask is None
            continue
        assert quick_mask.type == slow_mask.type
        assert np.array_equal(np.asarray(quick_mask.handle), np.asarray(slow_mask.handle))


def test_unusual_operand_types_take_the_operations(monkeypatch):
    asked = []
    monkeypatch.setattr(InterpreterBuilder, "block_pointers", lambda *a: asked.append(a))
    semantic = Semantic(InterpreterBuilder(Memory(), (1, 1, 1), False), interpreter_rules())
    base = tensor(Pointers(np.array(4096, np.uint64), None), t.pointer_type(t.float32))
    one = scalar_tensor(1, t.int64)
    offsets = [scalar_tensor(3, t.uint32)]
    pointer = block_ptr(base, [scalar_tensor(8, t.int64)], [one], offsets, [4], [0])
    pointers, _ = pointer._pointers_and_mask(semantic, [0])
    assert not asked
    assert pointers.handle.addr.tolist() == [4096 + 4 * (3 + i) for i in range(4)]
