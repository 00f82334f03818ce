"""Differential: Triton's own TTIR of a kernel, run by the reference evaluator, against the same
kernel run by Naiad's interpreter, on the same random inputs; every array must end up bit for
bit the same.

The TTIR is Triton 3.8's (`tests/ir/fixtures/`, both the optimized `.ttir` and the `.source.ttir`
its code generator built, with calls, `ub.poison` and branches); the kernels are the fixtures' own
(`evaluator_fixture_kernels.py`, and the tutorials under `examples/`). This checks the evaluator's
meaning of every op Triton emits against the interpreter, the executable reference. Where
Triton's optimizer changes the arithmetic (a sum of products combined into a dot), the optimized
module is compared within a tolerance. Skipped if the parser cannot read the fixtures yet.
"""

import importlib.util
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import evaluator_fixture_kernels as K
import ml_dtypes
import numpy as np
import pytest

from naiad.runtime.evaluator import evaluate
from naiad.runtime.evaluator.arguments import argument_names

TESTS = Path(__file__).resolve().parents[1]
FIXTURES = TESTS / "ir" / "fixtures"
EXAMPLES = TESTS.parent / "examples"


def example(stem):
    """A tutorial module (loaded as tests/examples does, under the same name)."""
    name = f"naiad_example_{stem}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{stem}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def rand(rng, *shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def out(*shape, dtype=np.float32):
    """An output array poisoned with all-ones bits (NaN for floats), so a missing store shows."""
    itemsize = np.dtype(dtype).itemsize
    return np.full(shape, 2 ** (8 * itemsize) - 1, f"u{itemsize}").view(dtype)


@dataclass
class Case:
    kernel: object  # a @naiad.jit function, or (tutorial stem, kernel name)
    args: object  # rng -> {parameter: value}, constexprs included
    grid: tuple = (1,)
    inexact: tuple = ()  # variants whose arithmetic Triton's optimizer changed
    options: dict = field(default_factory=dict)

    def jit(self):
        if isinstance(self.kernel, tuple):
            return getattr(example(self.kernel[0]), self.kernel[1])
        return self.kernel


CASES = {
    "01_vector_add": Case(
        ("01_vector_add", "add_kernel"),
        lambda r: dict(
            x_ptr=rand(r, 3000), y_ptr=rand(r, 3000), output_ptr=out(3000), n_elements=3000,
            BLOCK_SIZE=1024,
        ),
        grid=(3,),
    ),
    "02_fused_softmax": Case(
        ("02_fused_softmax", "softmax_kernel"),
        lambda r: dict(
            output_ptr=out(6, 781), input_ptr=rand(r, 6, 781), input_row_stride=781,
            output_row_stride=781, n_rows=6, n_cols=781, BLOCK_SIZE=1024, num_stages=2,
        ),
        grid=(4,),
    ),
    "04_dropout": Case(
        ("04_low_memory_dropout", "_dropout"),
        lambda r: dict(
            x_ptr=rand(r, 2000), x_keep_ptr=r.integers(0, 2, 2000, dtype=np.int32),
            output_ptr=out(2000), n_elements=2000, p=0.5, BLOCK_SIZE=1024,
        ),
        grid=(2,),
    ),
    "04_seeded_dropout": Case(
        ("04_low_memory_dropout", "_seeded_dropout"),
        lambda r: dict(
            x_ptr=rand(r, 2000), output_ptr=out(2000), n_elements=2000, p=0.5, seed=123,
            BLOCK_SIZE=1024,
        ),
        grid=(2,),
    ),
    "lang_if_else_values": Case(
        K.if_else_values,
        lambda r: dict(X=rand(r, 1000), Y=out(1000), n=1000, flag=3, BLOCK=128),
        grid=(8,),
    ),
    "lang_while_loop": Case(
        K.while_loop, lambda r: dict(X=rand(r, 200), Y=out(64), n=100, BLOCK=64)
    ),
    "lang_nested_for_tuple": Case(
        K.nested_for_tuple,
        lambda r: dict(X=rand(r, 5 * 300), Y=out(128), M=5, N=300, stride=300, BLOCK=128),
    ),
    "lang_static_range": Case(
        K.static_range_unroll, lambda r: dict(X=rand(r, 64), Y=out(64), BLOCK=64, STEPS=3)
    ),
    "lang_early_return": Case(
        K.early_return,
        lambda r: dict(X=rand(r, 1000), Y=out(1000), n=1000, limit=0.5, BLOCK=128),
        grid=(9,),
    ),
    "lang_jit_calls": Case(
        K.jit_calls,
        lambda r: dict(X=rand(r, 64), Y=rand(r, 64), Z=rand(r, 1), a=2.0, BLOCK=64),
    ),
    "lang_reduce_custom": Case(
        K.reduce_custom,
        lambda r: dict(
            X=rand(r, 32, 64), S=out(96), V=out(32), I=out(96, dtype=np.int32), BLOCK_M=32,
            BLOCK_N=64,
        ),
    ),
    "lang_scan": Case(
        K.scan_ops,
        lambda r: dict(
            X=rand(r, 128) * 2, Y=out(128), Z=out(128, dtype=np.int32), BLOCK=128
        ),
    ),
    "lang_sort": Case(
        K.sort_ops, lambda r: dict(X=rand(r, 8, 32), Y=out(8, 32), BLOCK_M=8, BLOCK_N=32)
    ),
    "lang_atomics": Case(
        K.atomics,
        lambda r: dict(
            X=rand(r, 1000), Counter=np.zeros(2, np.int32), Lock=np.zeros(1, np.int32),
            Out=np.zeros(16, np.float32), n=1000, BLOCK=128,
        ),
        grid=(8,),
    ),
    "lang_block_ptr": Case(
        K.block_ptr_advance,
        lambda r: dict(
            A=rand(r, 100, 192, dtype=np.float16), B=out(100, 192, dtype=np.float16), M=100,
            N=192, stride_m=192, stride_n=1, BLOCK_M=64, BLOCK_N=64,
        ),
        grid=(2,),
    ),
    "lang_tensor_descriptor": Case(
        K.tensor_descriptor,
        lambda r: dict(
            A=rand(r, 128, 192, dtype=np.float16), B=out(128, 192, dtype=np.float16), M=128,
            N=192, BLOCK_M=64, BLOCK_N=64,
        ),
        grid=(2, 3),
    ),
    "lang_dot_acc": Case(
        K.dot_acc,
        lambda r: dict(
            A=rand(r, 64, 64, dtype=np.float16), B=rand(r, 64, 32, dtype=np.float16),
            C=rand(r, 64, 32), K=64, BLOCK_M=64, BLOCK_N=32, BLOCK_K=32,
        ),
        inexact=(".ttir",),
    ),
    "lang_casts": Case(
        K.casts,
        lambda r: dict(
            X=rand(r, 128) * 100, Y16=out(128, dtype=np.float16),
            YB=out(128, dtype=ml_dtypes.bfloat16), Y8A=out(128, dtype=ml_dtypes.float8_e4m3fn),
            Y8B=out(128, dtype=ml_dtypes.float8_e5m2),
            YI=out(128, dtype=np.int64), YU=out(128, dtype=np.float64), BLOCK=128,
        ),
    ),
    "lang_elementwise": Case(
        K.elementwise,
        lambda r: dict(
            X=rand(r, 128), Y=rand(r, 128), I=r.integers(-1000, 1000, 128, dtype=np.int32),
            U=r.integers(1, 2**32, 128, dtype=np.uint32), lo=-1.0, hi=1.0, BLOCK=128,
        ),
    ),
    "lang_debug_ops": Case(
        K.debug_ops,
        lambda r: dict(X=np.abs(rand(r, 200)) + 1, Y=out(200), n=200, BLOCK=128),
        grid=(2,),
        options={"debug": True},
    ),
    "lang_hints": Case(
        K.hints,
        lambda r: dict(X=rand(r, 1000), Y=out(1000), n=1000, stride=24, BLOCK=64),
        grid=(4,),
    ),
    "lang_int64_args": Case(
        K.int64_args,
        lambda r: dict(
            P16=rand(r, 64 * 32), P=rand(r, 64 * 7), big=2**40, small=7, d16=32, one=1,
            f=1.5, b=True, BLOCK=64,
        ),
    ),
    "lang_constexpr_dead_branch": Case(
        K.constexpr_dead_branch,
        lambda r: dict(
            X=rand(r, 1000), Y=out(1000), n=1000, MODE="double", USE_BIAS=False, BLOCK=128
        ),
    ),
    "lang_shape_ops": Case(
        K.shape_ops, lambda r: dict(X=rand(r, 16, 32), Y=out(16, 32), BLOCK_M=16, BLOCK_N=32)
    ),
    "lang_loop_options": Case(
        K.loop_options, lambda r: dict(X=rand(r, 100), Y=out(64), n=100, BLOCK=64)
    ),
}


def _parse(path):
    parser = pytest.importorskip("naiad.ir.parser")
    try:
        return parser.parse_module(path.read_text(), str(path))
    except Exception as exc:  # the parser is still being finished: say so, do not fail
        pytest.skip(f"the parser cannot read {path.name} yet: {exc}")


def _copy(args):
    return {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}


def _unspaced(lines):
    """Printed lines without spaces and colons: Triton's semantic layer spells a print's prefix
    `" pid: "` where Naiad's keeps the user's `"pid"`; the values must agree."""
    return [line.replace(" ", "").replace(":", "") for line in lines]


def _bits(array):
    return array.view(f"u{array.dtype.itemsize}") if array.dtype.kind == "f" else array


@pytest.mark.parametrize("variant", [".ttir", ".source.ttir"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_triton_ttir_in_the_evaluator_matches_the_interpreter(name, variant, capsys):
    case = CASES[name]
    module = _parse(FIXTURES / f"{name}{variant}")
    func_name = json.loads((FIXTURES / f"{name}.json").read_text())["kernel"]
    args = case.args(np.random.default_rng(sum(map(ord, name))))

    interpreted = _copy(args)
    kernel = case.jit()
    # Positionally: a parameter may share its name with a launch option (`num_stages`).
    kernel[case.grid](*(interpreted[n] for n in kernel.arg_names), **case.options)
    printed = capsys.readouterr().out.splitlines()

    evaluated = _copy(args)
    func = module.lookup_symbol(func_name)
    lines = []
    params = {n: evaluated[n] for n in argument_names(func)}
    evaluate(module, func_name, params, case.grid, debug=True, out=lines.append)

    assert _unspaced(lines) == _unspaced(printed)
    for key, value in interpreted.items():
        if not isinstance(value, np.ndarray):
            continue
        if variant in case.inexact:
            np.testing.assert_allclose(evaluated[key], value, rtol=1e-5, atol=1e-5, err_msg=key)
        else:
            np.testing.assert_array_equal(_bits(evaluated[key]), _bits(value), err_msg=key)
