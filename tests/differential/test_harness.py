"""The differential harness and the kernel generator, checked themselves: the harness agrees
with NumPy on a hand-written kernel, catches an executor that perturbs one element, leaves an
output unwritten or writes an input, and says where; the generator gives the same kernel text
for the same seed, writes real files, and covers every construct it promises."""

import inspect
from dataclasses import replace

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad.testing import check, run_differential
from naiad.testing.differential import EXECUTORS, register_executor, unregister_executor
from naiad.testing.generator import load_kernel, random_kernel, render
from naiad.testing.generator_dots import FP32_PRECISIONS, DotLoop, grows_dot_loop
from naiad.testing.generator_ops import is_exact

N, BLOCK, PROGRAMS = 100, 32, 4


@naiad.jit
def scale_and_total(X, OUT, TOTAL, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n, other=0.0)
    tl.store(OUT + offs, x * 2.0 + 1.0, mask=offs < n)
    tl.store(TOTAL + pid, tl.sum(x, axis=0))


def make_args(rng):
    x = (rng.uniform(0.25, 4.0, N) * rng.choice([-1.0, 1.0], N)).astype(np.float32)
    return {
        "X": x,
        "OUT": np.zeros(PROGRAMS * BLOCK, np.float32),  # lanes past n stay unwritten
        "TOTAL": np.zeros(PROGRAMS, np.float32),
        "n": N,
        "BLOCK": BLOCK,
    }


TOLERANCE = {"OUT": "add", "TOTAL": ("sum", BLOCK)}


@pytest.fixture
def executor():
    """Register temporary executors; they are removed after the test."""
    names = []

    def register(name, run):
        register_executor(name, run)
        names.append(name)
        return name

    yield register
    for name in names:
        unregister_executor(name)


def _interpret_then(change):
    """An executor that runs the interpreter, then `change`s its result arrays."""

    def run(kernel, args, grid):
        arrays = EXECUTORS["interpreter"].run(kernel, args, grid)
        change(arrays)
        return arrays

    return run


def _flip_low_bit(array, index):
    """Flip the lowest bit of element `index` (the last mantissa bit of a float)."""
    flat = array.reshape(-1).view(np.uint8)
    flat[index * array.itemsize] ^= 1


def test_interpreter_and_evaluator_agree_with_numpy():
    result = run_differential(scale_and_total, make_args, (PROGRAMS,), tolerance=TOLERANCE)
    x = make_args(np.random.default_rng(0))["X"]
    np.testing.assert_array_equal(result["OUT"][:N], x * np.float32(2) + np.float32(1))
    assert np.isnan(result["OUT"][N:]).all()  # the poison, in lanes neither side wrote
    padded = np.concatenate([x, np.zeros(PROGRAMS * BLOCK - N, np.float32)])
    sums = padded.reshape(PROGRAMS, BLOCK).astype(np.float64).sum(axis=1)
    check("sum", result["TOTAL"], sums, "interpreter", np.float32, k=BLOCK)


def test_a_perturbed_element_is_caught_and_located(executor):
    name = executor("perturbed", _interpret_then(lambda arrays: _flip_low_bit(arrays["OUT"], 37)))
    with pytest.raises(AssertionError) as failure:
        run_differential(
            scale_and_total,
            make_args,
            (PROGRAMS,),
            ("interpreter", name),
            tolerance=TOLERANCE,
            seed=11,
        )
    message = str(failure.value)
    assert "perturbed disagrees with interpreter on output `OUT`" in message
    assert f"{__file__}:" in message
    assert "seed 11" in message
    assert "first differing indices: [(37,)]" in message


def test_a_perturbation_within_the_norm_bound_passes(executor):
    one_ulp = executor("one_ulp", _interpret_then(lambda a: _flip_low_bit(a["TOTAL"], 2)))
    run_differential(
        scale_and_total, make_args, (PROGRAMS,), ("interpreter", one_ulp), tolerance=TOLERANCE
    )

    def one_percent(arrays):
        arrays["TOTAL"][2] *= np.float32(1.01)

    name = executor("one_percent", _interpret_then(one_percent))
    with pytest.raises(AssertionError, match=r"output `TOTAL`.*\n.*exceeds"):
        run_differential(
            scale_and_total, make_args, (PROGRAMS,), ("interpreter", name), tolerance=TOLERANCE
        )


def test_an_unwritten_output_shows_through_the_poison(executor):
    name = executor("idle", lambda kernel, args, grid: {k: v for k, v in args.items()})
    with pytest.raises(AssertionError, match="output `OUT`") as failure:
        run_differential(
            scale_and_total, make_args, (PROGRAMS,), ("interpreter", name), tolerance=TOLERANCE
        )
    assert "first differing indices: [(0,), (1,), (2,), (3,), (4,)]" in str(failure.value)


def test_a_written_input_is_caught(executor):
    name = executor("scribbler", _interpret_then(lambda a: _flip_low_bit(a["X"], 5)))
    with pytest.raises(AssertionError, match="output `X`"):
        run_differential(
            scale_and_total, make_args, (PROGRAMS,), ("interpreter", name), tolerance=TOLERANCE
        )


def test_an_executor_error_names_the_executor_and_seed(executor):
    def broken(kernel, args, grid):
        raise RuntimeError("no device")

    name = executor("broken", broken)
    with pytest.raises(RuntimeError, match="no device") as failure:
        run_differential(scale_and_total, make_args, (PROGRAMS,), ("interpreter", name), seed=4)
    assert any("executor 'broken'" in note and "seed 4" in note for note in failure.value.__notes__)


def test_bad_requests_are_refused():
    with pytest.raises(KeyError, match="no executor 'nowhere'"):
        run_differential(scale_and_total, make_args, (PROGRAMS,), ("interpreter", "nowhere"))
    with pytest.raises(ValueError, match=r"not array arguments: \['n'\]"):
        run_differential(scale_and_total, make_args, (PROGRAMS,), tolerance={"n": "add"})
    with pytest.raises(ValueError, match="unknown tolerance column"):
        register_executor("tpu", lambda kernel, args, grid: {}, backend="tpu")


def test_a_generated_kernel_mismatch_names_its_file_and_seed(executor, tmp_path):
    case = load_kernel(random_kernel(3), tmp_path)
    output = next(name for name, (row, _) in case.tolerance.items() if is_exact(row))
    name = executor("perturbed", _interpret_then(lambda a: _flip_low_bit(a[output], 0)))
    with pytest.raises(AssertionError) as failure:
        run_differential(
            case.kernel,
            case.make_args,
            case.grid,
            ("interpreter", name),
            tolerance=case.tolerance,
            seed=3,
        )
    message = str(failure.value)
    assert f"output `{output}`" in message
    assert f"{case.path}:" in message
    assert "seed 3" in message


# -- the generator ---------------------------------------------------------------------------------
def test_the_same_seed_gives_the_same_kernel_text():
    texts = [render(random_kernel(seed)) for seed in range(20)]
    assert texts == [render(random_kernel(seed)) for seed in range(20)]
    assert len(set(texts)) == 20


def test_a_generated_kernel_is_a_real_file(tmp_path):
    case = load_kernel(random_kernel(12), tmp_path)
    assert case.path == tmp_path / "generated_12.py"
    assert inspect.getsourcefile(case.kernel.fn) == str(case.path)
    assert inspect.getsource(case.kernel.fn).startswith("@naiad.jit\ndef generated_12(")
    assert case.path.read_text() == render(case.spec)


def test_arguments_are_seeded_and_never_zero(tmp_path):
    case = load_kernel(random_kernel(12), tmp_path)
    args = case.make_args(np.random.default_rng(5))
    again = case.make_args(np.random.default_rng(5))
    for source in case.spec.inputs:
        assert np.array_equal(args[source.name], again[source.name])
        assert (args[source.name] != 0).all()
    assert {k: v for k, v in args.items() if not isinstance(v, np.ndarray)} == {
        k: v for k, v in again.items() if not isinstance(v, np.ndarray)
    }


# What the default tier of test_generated.py (its first 64 seeds) must exercise between them.
CONSTRUCTS = (
    "BLOCK: tl.constexpr",  # 1-D kernels
    "BLOCK_M: tl.constexpr",  # 2-D kernels
    "[None, :]",
    "[:, None]",
    "other=",
    "mask=mask & v",  # a store narrowed by a computed mask
    "for k in range(0, trips):",
    "% n, mask=",  # a load whose addresses move with the loop
    "< n - k",  # a load whose mask moves with the loop
    "if flag > 0:",
    "if pid % 2 == 0:",
    "tl.sum(",
    "tl.max(",
    "tl.min(",
    "tl.argmax(",
    "tl.argmin(",
    "tl.xor_sum(",
    "tl.where(",
    "tl.minimum(",
    "tl.maximum(",
    ".to(tl.float16)",
    ".to(tl.bfloat16)",
    ".to(tl.int8)",
    "bitcast=True",
    "tl.exp(",
    "tl.sqrt(",
    "tl.log(",
    " // ",
    " % ",
    " / ",
    " << ",
    " >> ",
    # Runtime scalars cast to narrower or unsigned dtypes (generator_casts.py): a 1-D and a 2-D
    # load through a shift by one, and a store kept by a limit.
    ".to(tl.uint16)",
    "(offs + nw",
    "(cols[None, :] + nw",
    "mask=mask & nw",
    # A carried vector read through a broadcast before its update (generator_build.carried_view)
    "tl.broadcast_to(tl.expand_dims(acc",
    # K loops of dots (generator_dots.py): each loop form, accumulator and precision spelling,
    # carried addresses, both K tail masks, B through strides and through tl.trans, and a
    # loaded vector added and a tile stored in the loop
    "for kk in range(0, dot_k, DOT_K):",
    "for kk in tl.range(0, dot_k, DOT_K, num_stages=",
    "for di in range(0, tl.cdiv(dot_k, DOT_K)):",
    "dacc = tl.dot(da, db, dacc)\n",
    "out_dtype=tl.int32",
    "out_dtype=tl.float16",
    "allow_tf32=False",
    'input_precision="ieee"',
    "da_ptrs += DOT_K",
    "(dk[None, :] < dot_k - kk)",
    "((kk + dk)[None, :] < dot_k)",
    "dc[None, :] * dot_k",
    "db = tl.trans(db)",
    "mask=dc < dot_n, other=0)[None, :]",  # a vector loaded and added each trip
    "tl.store(DOT_T",
)


def test_the_default_seeds_cover_every_construct():
    texts = "\n".join(render(random_kernel(seed)) for seed in range(64))
    assert [c for c in CONSTRUCTS if c not in texts] == []


DOT_SEED = next(seed for seed in range(64) if grows_dot_loop(seed))


def _tf32(x: np.ndarray) -> np.ndarray:
    """fp32 -> tf32 as Triton's tensor cores read it: 10 fraction bits, ties away from zero."""
    fraction, exponent = np.frexp(x.astype(np.float64))
    rounded = np.sign(fraction) * np.floor(np.abs(fraction) * 2.0**11 + 0.5) / 2.0**11
    return np.ldexp(rounded, exponent)


@pytest.mark.parametrize("precision", sorted(FP32_PRECISIONS))
def test_a_dot_loops_reference_follows_tritons_input_precision(precision, tmp_path):
    """The interpreter, the oracle of the generated dot loops, multiplies fp32 tiles as Triton
    does for each spelling: operands rounded to tf32 by default and with tf32 allowed, exact
    otherwise; the output's tolerance row says which (tf32's bound is 2**13 times looser)."""
    spec = random_kernel(DOT_SEED)
    at = next(i for i, s in enumerate(spec.body) if isinstance(s, DotLoop))
    tf32 = FP32_PRECISIONS[precision]
    blocks = {"DOT_M": 16, "DOT_N": 16, "DOT_K": 16}
    fp32 = {"dtype": "float32", "acc": "float32", "out": "float32", "blocks": blocks}
    plain = {"init": "zeros", "bias": False, "copy": False}
    spec.body[at] = loop = replace(spec.body[at], precision=precision, tf32=tf32, **fp32, **plain)
    case = load_kernel(spec, tmp_path)
    args = next(a for s in range(20) if (a := case.make_args(np.random.default_rng(s)))["dot_k"])
    m, n, k = args["dot_m"], args["dot_n"], args["dot_k"]
    a = args["DOT_A"].reshape(m, k)
    b = args["DOT_B"].reshape((k, n) if loop.b_layout == "rows" else (n, k))
    b = b if loop.b_layout == "rows" else b.T
    exact = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    in_tf32 = (_tf32(a) @ _tf32(b)).astype(np.float32)
    want, other = (in_tf32, exact) if tf32 else (exact, in_tf32)
    EXECUTORS["interpreter"].run(case.kernel, args, case.grid(args))
    assert case.tolerance["DOT_C"] == ("dot_tf32" if tf32 else "dot", 10 * 16)
    got = args["DOT_C"].reshape(m, n)
    check("dot", got, want, "interpreter", np.float32, k)
    with pytest.raises(AssertionError):  # the two roundings are told apart
        check("dot", got, other, "interpreter", np.float32, k)
