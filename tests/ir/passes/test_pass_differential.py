"""Every pass, differentially: the reference evaluator runs each function of the pass's FileCheck
input before and after the pass, on random arguments; the results must be the same, bit for bit.

Functions whose arguments are all integer scalars are drawn from small ranges (so loops have
short, sometimes empty or negative, trip counts; loop steps stay positive); functions with other
arguments are covered by the FileCheck tests alone.
"""

import pathlib

import numpy as np
import pytest

import naiad.dialects
import naiad.passes  # noqa: F401  (registers the passes)
from naiad.ir import IntegerType
from naiad.ir.parser import parse_module
from naiad.ir.passes import PassManager
from naiad.runtime.evaluator import evaluate

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


@pytest.mark.parametrize("path", _CASES, ids=[p.stem for p in _CASES])
def test_pass_preserves_results(path):
    pass_name = path.stem
    text = path.read_text()
    before = parse_module(text, str(path))
    after = parse_module(text, str(path))
    PassManager([pass_name], verify_each=True).run(after)
    rng = np.random.default_rng(sum(map(ord, pass_name)))
    checked = 0
    for func in _functions(before):
        name = func.sym_name.value
        if not _scalar_int_signature(func) or after.lookup_symbol(name) is None:
            continue
        for _ in range(12):
            args = _draw(func, rng)
            assert evaluate(before, name, args) == evaluate(after, name, args), (name, args)
        checked += 1
    if checked == 0:
        pytest.skip(f"{path.name} has no function with integer-scalar arguments")
