"""Every pass, differentially: the reference evaluator runs each function of the pass's FileCheck
input before and after the pass, on random arguments; the results must be the same, bit for bit.

Functions whose arguments are all integer scalars are drawn from small ranges (so loops have
short, sometimes empty or negative, trip counts; loop steps stay positive). Functions with
pointer, float or tensor arguments get fresh random arrays of 4096 elements (never zeros) for
each `!tt.ptr<T>`, small non-negative integers and non-zero floats for scalars; after the run,
every array must hold the same bits, and the results too. Functions with other arguments (block
pointers, descriptors) are covered by the FileCheck tests alone.

The passes run are those the file's RUN line names (`-p canonicalize`), so a file named after
a variant (`canonicalize-tt.mlir`) runs its pass.
"""

import pathlib
import shlex

import numpy as np
import pytest

import naiad.dialects
import naiad.passes  # noqa: F401  (registers the passes)
from naiad.backends.cpu import (
    fuse_elementwise,  # noqa: F401  (cpu-fuse-elementwise)
    sequence_partitions,  # noqa: F401  (cpu-sequence-partitions)
    widen_dot_operands,  # noqa: F401  (cpu-widen-dot-operands)
)
from naiad.ir import FloatType, IntegerType, RankedTensorType
from naiad.ir.parser import parse_module
from naiad.ir.passes import PassManager
from naiad.runtime.evaluator import evaluate
from naiad.runtime.evaluator.values import host_dtype
from naiad.tools.opt import pipeline_of

_HERE = pathlib.Path(__file__).parent
_CASES = sorted(p for p in _HERE.glob("*.mlir"))


def _functions(module):
    return [op for op in module.body if op.name == "tt.func" and op.is_declaration is False]


def _scalar_int_signature(func) -> bool:
    return all(isinstance(t, IntegerType) for t in func.signature.inputs)


def _draw(func, rng):
    args = []
    for i, t in enumerate(func.signature.inputs):
        if t.width == 1:
            args.append(bool(rng.integers(0, 2)))
        elif i == len(func.signature.inputs) - 1 and len(func.signature.inputs) == 3:
            args.append(int(rng.integers(1, 4)))  # (lb, ub, step) signatures: a positive step
        else:
            args.append(int(rng.integers(-6, 12)))
    return args


def _pipeline(path) -> list:
    """The passes the first RUN line names (`-p a,b`, `-p "a{key=value}"`, read as naiad-opt
    reads them); the file's stem when it names none."""
    for line in path.read_text().splitlines():
        words = shlex.split(line.removeprefix("// RUN:")) if line.startswith("// RUN:") else []
        if "-p" in words[:-1]:
            return pipeline_of(words[words.index("-p") + 1], path.name)
    return [path.stem]


@pytest.mark.parametrize("path", _CASES, ids=[p.stem for p in _CASES])
def test_pass_preserves_results(path):
    pass_name = path.stem
    text = path.read_text()
    before = parse_module(text, str(path))
    after = parse_module(text, str(path))
    PassManager(_pipeline(path), verify_each=True).run(after)
    rng = np.random.default_rng(sum(map(ord, pass_name)))
    checked = 0
    for func in _functions(before):
        name = func.sym_name.value
        if not _scalar_int_signature(func) or after.lookup_symbol(name) is None:
            continue
        for _ in range(12):
            args = _draw(func, rng)
            assert _returned(before, name, args) == _returned(after, name, args), (name, args)
        checked += 1
    if checked == 0:
        pytest.skip(f"{path.name} has no function with integer-scalar arguments")


# -- functions with pointer, float or tensor arguments ---------------------------------------------

_ARRAY_ELEMENTS = 4096


def _pointee(t):
    """The element type a `!tt.ptr<T>` argument points to (None for a block pointer)."""
    pointee = getattr(t, "pointee_type", None)
    return None if pointee is None or isinstance(pointee, RankedTensorType) else pointee


def _memory_signature(func) -> bool:
    """Arguments the draw below can make, at least one of them not an integer scalar."""
    inputs = func.signature.inputs
    if _scalar_int_signature(func):
        return False
    for t in inputs:
        element = t.element_type if isinstance(t, RankedTensorType) else t
        if isinstance(element, IntegerType | FloatType):
            continue
        if isinstance(t, RankedTensorType) or _pointee(t) is None:
            return False
        if not isinstance(_pointee(t), IntegerType | FloatType):
            return False
    return True


def _random_array(ir_type, count, rng) -> np.ndarray:
    """`count` random elements of `ir_type`, never zero (except i1, which is random bits)."""
    dtype = host_dtype(ir_type)
    if dtype == np.bool_:
        return rng.integers(0, 2, count).astype(np.bool_)
    if dtype.kind not in "iu":  # floats, and the formats NumPy lacks (bf16, fp8: kind "V")
        magnitude = rng.uniform(0.25, 4.0, count)
        return (magnitude * rng.choice([-1.0, 1.0], count)).astype(dtype)
    info = np.iinfo(dtype)
    low, high = max(info.min, -100), min(info.max, 100)
    values = rng.integers(low, high, count, endpoint=True)
    values[values == 0] = 1
    return values.astype(dtype)


def _draw_memory(func, rng) -> list:
    """Arrays (pointers, tensors) and small numbers (scalars) for `func`'s arguments."""
    args = []
    for t in func.signature.inputs:
        if isinstance(t, RankedTensorType):
            args.append(_random_array(t, t.numel, rng).reshape(t.shape))
        elif _pointee(t) is not None:
            args.append(_random_array(_pointee(t), _ARRAY_ELEMENTS, rng))
        elif isinstance(t, FloatType):
            args.append(float(rng.choice([-1.0, 1.0]) * rng.uniform(0.25, 4.0)))
        elif t.width == 1:
            args.append(bool(rng.integers(0, 2)))
        else:
            args.append(int(rng.integers(0, 20)))
    return args


def _bits(value) -> tuple:
    """What must match bit for bit: dtype, shape and bytes of a value or array."""
    array = np.ascontiguousarray(np.asarray(value))
    return array.dtype.str, array.shape, array.tobytes()


def _returned(module, name, args) -> list:
    """What each program returned, as bits (tensor results compare as arrays)."""
    return [_bits(v) for program in evaluate(module, name, args) for v in program]


def _run(module, name, args) -> tuple:
    """The function's results and the arrays after the run, as bits; `args` stay untouched."""
    copies = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    results = evaluate(module, name, copies)
    returned = [_bits(v) for program in results for v in program]
    memory = [_bits(a) for a in copies if isinstance(a, np.ndarray)]
    return returned, memory


@pytest.mark.parametrize("path", _CASES, ids=[p.stem for p in _CASES])
def test_pass_preserves_memory(path):
    text = path.read_text()
    before = parse_module(text, str(path))
    after = parse_module(text, str(path))
    PassManager(_pipeline(path), verify_each=True).run(after)
    rng = np.random.default_rng(sum(map(ord, path.stem)) + 1)
    checked = 0
    for func in _functions(before):
        name = func.sym_name.value
        if not _memory_signature(func) or after.lookup_symbol(name) is None:
            continue
        for _ in range(6):
            args = _draw_memory(func, rng)
            returned, memory = _run(before, name, args)
            returned_after, memory_after = _run(after, name, args)
            assert returned == returned_after, (name, "results differ")
            for i, (old, new) in enumerate(zip(memory, memory_after)):
                assert old == new, (name, f"array argument {i} differs after the pass")
        checked += 1
    if checked == 0:
        pytest.skip(f"{path.name} has no function with pointer, float or tensor arguments")
