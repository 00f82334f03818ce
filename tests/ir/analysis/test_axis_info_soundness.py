"""AxisInfo's facts are promises the back ends bet vector widths on: check them against real
values. Triton's fixtures run in the reference evaluator on the arguments Triton specialized
them for (`args` of each fixture's JSON: 16-byte aligned pointers, integers divisible by 16
where the signature says so), and every integer or pointer value each op produces, in every
program and loop iteration, must have the runs, divisibility and constancy claimed for it."""

import json
import random
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import naiad.dialects.syntax  # noqa: F401  (registers the ops and their syntax)
from naiad.ir import BlockArgument, element_type
from naiad.ir.parser import parse_module
from naiad.passes.analysis import AxisInfoAnalysis
from naiad.passes.analysis.axis_info_constants import integer_width
from naiad.passes.analysis.axis_info_lattice import shape_of
from naiad.passes.analysis.axis_info_rules import pointee_bytes
from naiad.runtime.evaluator import engine, evaluate
from naiad.runtime.interpreter.memory import Pointers

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

# Fixture -> (grid, argument overrides that keep the run small and keep every %16 promise).
# Left out: only the attention kernel taking descriptors from the host (a JSON description
# cannot make them).
CASES = {
    "01_vector_add": ((3,), {}),
    "02_fused_softmax": ((2,), {"n_rows": 5}),
    "03_matmul": ((2,), {}),
    "04_dropout": ((2,), {}),
    "05_layer_norm_fwd": ((2,), {}),
    "lang_casts": ((1,), {}),
    "lang_dot_acc": ((1,), {}),
    "lang_early_return": ((8,), {}),
    "lang_elementwise": ((1,), {}),
    "lang_hints": ((1,), {}),  # multiple_of(pid * stride, 64) is only true for pid 0
    "lang_if_else_values": ((8,), {}),
    "lang_int64_args": ((1,), {}),
    "lang_nested_for_tuple": ((1,), {"M": 3}),
    "lang_shape_ops": ((1,), {}),
    "lang_static_range": ((1,), {}),
    "lang_while_loop": ((1,), {}),
    "04_seeded_dropout": ((2,), {}),
    "05_layer_norm_bwd_dx": ((2,), {}),
    "05_layer_norm_bwd_dwdb": ((2,), {"M": 32}),
    "lang_atomics": ((2,), {}),
    "lang_block_ptr": ((2,), {}),
    "lang_reduce_custom": ((1,), {}),
    "lang_scan": ((1,), {}),
    "lang_sort": ((1,), {}),
    "lang_debug_ops": ((1,), {}),
    "lang_jit_calls": ((1,), {}),
    "lang_loop_options": ((1,), {"n": 100}),
    "lang_constexpr_dead_branch": ((1,), {}),
    "lang_tensor_descriptor": ((1,), {}),
    "06_fused_attention_noncausal": ((1,), {}),
    "06_fused_attention": ((1,), {}),
    "06b_fused_attention_block_ptr": ((1,), {}),
}
PATHS = [FIXTURES / f"{name}{suffix}" for name in CASES for suffix in (".ttir", ".source.ttir")]
ELEMENTS = 1 << 19  # per pointer argument: enough for every case above


def buffer(rng, dtype_name: str, offset: int):
    """A random array whose data starts `offset` bytes after a 64-byte boundary."""
    dtype = np.dtype(getattr(np, dtype_name, None) or getattr(ml_dtypes, dtype_name))
    raw = np.zeros(ELEMENTS * dtype.itemsize + 64 + offset, np.uint8)
    start = -raw.ctypes.data % 64 + offset
    array = raw[start : start + ELEMENTS * dtype.itemsize].view(dtype)
    if dtype.kind not in "iu":  # integers stay 0: the spin locks of layer norm wait for it
        # Positive: lang_debug_ops asserts it; nothing else cares.
        array[:] = (rng.random(ELEMENTS) + 0.5).astype(np.float32).astype(dtype)
    return array


def arguments(name: str, overrides: dict) -> dict:
    spec = json.loads((FIXTURES / f"{name}.json").read_text())
    rng = np.random.default_rng(0)
    args = {}
    for key, value in spec["args"].items():
        if key in spec["constexprs"]:
            continue
        if isinstance(value, dict):
            args[key] = buffer(rng, value["ptr"], value["offset"])
        else:
            args[key] = overrides.get(key, value)
    return args


def observed_bits(value, observed):
    """The observed elements as uint64 bits (an address, or an integer wrapped to its width),
    with their width and the step between neighbours of a run; None for other values."""
    if isinstance(observed, Pointers):
        return observed.addr.astype(np.uint64), 64, pointee_bytes(value.type)
    width = integer_width(value.type)
    if width is None or not isinstance(observed, np.ndarray | np.generic):
        return None
    bits = np.asarray(observed).astype(np.int64).astype(np.uint64)
    return bits & np.uint64((1 << width) - 1 if width < 64 else ~0 & (2**64 - 1)), width, 1


def violation(value, observed, info) -> str | None:
    """What `observed` contradicts in `info`, or None."""
    found = observed_bits(value, observed)
    if found is None:
        return None
    bits, width, step = found
    mask = np.uint64((1 << width) - 1 if width < 64 else 2**64 - 1)
    shape = shape_of(value.type)
    bits = bits.reshape(shape)
    if info.constant is not None and not (bits == np.uint64(info.constant % (1 << width))).all():
        return "constant"
    for d, n in enumerate(shape):
        along = np.moveaxis(bits, d, -1)
        run = info.contiguity[d]
        if n % run == 0:
            runs = along.reshape(*along.shape[:-1], n // run, run)
            climb = np.arange(run, dtype=np.uint64) * np.uint64(step)
            if not (((runs - runs[..., :1]) & mask) == climb).all():
                return f"contiguity[{d}]"
            divisor = np.uint64(min(info.divisibility[d], 1 << min(width, 62)))
            if not (runs[..., 0] % divisor == 0).all():
                return f"divisibility[{d}]"
        same = info.constancy[d]
        if n % same == 0:
            groups = along.reshape(*along.shape[:-1], n // same, same)
            if not (groups == groups[..., :1]).all():
                return f"constancy[{d}]"
    return None


def combine_regions(module) -> set:
    """The ops of combine regions (and of the functions they call), which the evaluator runs on
    whole slices at once rather than on values of their IR types: not checked."""
    funcs = {op.sym_name.value: op for op in module.walk() if op.name == "tt.func"}
    pending = [op for op in module.walk() if op.name in ("tt.reduce", "tt.scan")]
    pending += [op for op in module.walk() if op.name == "tt.map_elementwise"]
    inside = set()
    while pending:
        root = pending.pop()
        for op in root.walk():
            if op is root or op in inside:
                continue
            inside.add(op)
            if op.name == "tt.call":
                pending.append(funcs[op.callee.root])
    return inside


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_facts_hold_at_run_time(path, monkeypatch):
    name = path.name.split(".")[0]
    grid, overrides = CASES[name]
    module = parse_module(path.read_text(), str(path))
    analysis = AxisInfoAnalysis(module)
    combining = combine_regions(module)
    failures, checked = [], [0]

    def check(value, observed, op):
        info = analysis.info(value)
        problem = violation(value, observed, info)
        checked[0] += 1
        if problem and len(failures) < 5:
            failures.append(f"{op.name} {value.type}: {problem} of {info}")

    original = engine.Evaluator.execute

    def execute(self, op):
        if op not in combining:
            for v in op.operands:
                if isinstance(v, BlockArgument):
                    check(v, self.env[v], op)
        original(self, op)
        if op not in combining:
            for r in op.results:
                check(r, self.env[r], op)

    monkeypatch.setattr(engine.Evaluator, "execute", execute)
    func = next(op for op in module.walk() if op.name == "tt.func" and op.sym_visibility)
    evaluate(module, func.sym_name.value, arguments(name, overrides), grid, out=lambda _: None)
    assert checked[0] > 0
    assert not failures, "\n".join(failures)


def test_the_checker_sees_a_false_claim():
    """The oracle itself: a run of 4 starting at 6 is not divisible by 4."""
    module = parse_module(
        "tt.func @k() {\n"
        "  %r = tt.make_range {end = 10 : i32, start = 6 : i32} : tensor<4xi32>\n"
        "  tt.return\n}"
    )
    r = next(op for op in module.walk() if op.name == "tt.make_range").results[0]
    info = AxisInfoAnalysis(module).info(r)
    values = np.arange(6, 10, dtype=np.int32)
    assert violation(r, values, info) is None
    assert violation(r, values, info.replace(divisibility=(4,))) == "divisibility[0]"
    assert violation(r, values + np.array([0, 0, 1, 1], np.int32), info) == "contiguity[0]"
    assert element_type(r.type).width == 32


# -- random integer expressions: every rule, in combinations no fixture has

_BINARY = ["addi", "muli", "andi", "ori", "xori", "maxsi", "minsi", "maxui", "minui"]
_BY_CONSTANT = ["divsi", "divui", "remsi", "remui", "shli", "shrsi", "shrui"]
_PREDICATES = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
T = "tensor<16xi64>"


class _Kernel:
    """Builds a function of three scalars (%a: a multiple of 16, as its attribute says; %b; %c
    an i1) computing tensor<16xi64> values. Values stay non-negative and below 2^60 (`bits`
    bounds them): Triton's division rules assume non-negative operands, as offsets are."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.lines, self.bits, self.n = [], {}, 0

    def emit(self, text: str, bits: int | None = None) -> str:
        name = f"%v{self.n}"
        self.n += 1
        self.lines.append(f"    {name} = {text}")
        if bits is not None:
            self.bits[name] = bits
        return name

    def constant(self) -> str:
        c = self.rng.choice([1, 2, 3, 4, 6, 8, 16, 24, 64, 96])
        return self.emit(f"arith.constant dense<{c}> : {T}", c.bit_length())

    def leaf(self) -> str:
        kind = self.rng.choice(["range", "range", "splat_a", "splat_b", "constant"])
        if kind == "range":
            start = self.rng.choice([0, 1, 3, 4, 16, 32, 48, 64])
            r = self.emit(
                f"tt.make_range {{end = {start + 16} : i32, start = {start} : i32}}"
                " : tensor<16xi32>"
            )
            return self.emit(f"arith.extsi {r} : tensor<16xi32> to {T}", 7)
        if kind == "constant":
            return self.constant()
        arg = "%a" if kind == "splat_a" else "%b"
        return self.emit(f"tt.splat {arg} : i64 -> {T}", 10)

    def pick(self) -> str:
        return self.rng.choice(sorted(self.bits))

    def step(self) -> None:
        kind = self.rng.choice(["leaf", "binary", "by_constant", "select", "cmp"])
        x, y = self.pick(), self.pick()
        bx, by = self.bits[x], self.bits[y]
        if kind == "leaf":
            self.leaf()
        elif kind == "binary":
            op = self.rng.choice(_BINARY)
            bits = bx + by if op == "muli" else max(bx, by) + 1
            if bits <= 60:
                self.emit(f"arith.{op} {x}, {y} : {T}", bits)
        elif kind == "by_constant":
            op = self.rng.choice(_BY_CONSTANT)
            if op.startswith("sh"):
                k = self.rng.randint(0, 8)
                y = self.emit(f"arith.constant dense<{k}> : {T}", 4)
            elif self.rng.random() < 0.5:
                y = self.constant()
            else:
                y = self.emit(f"tt.splat %a : i64 -> {T}", 10)
            bits = bx + 8 if op == "shli" else bx
            if bits <= 60:
                self.emit(f"arith.{op} {x}, {y} : {T}", bits)
        elif kind == "select":
            z = self.pick()
            if self.rng.random() < 0.5:
                self.emit(f"arith.select %c, {x}, {z} : {T}", max(bx, self.bits[z]))
            else:
                p = self.rng.choice(_PREDICATES)
                cond = self.emit(f"arith.cmpi {p}, {x}, {y} : {T}")
                self.emit(
                    f"arith.select {cond}, {y}, {z} : tensor<16xi1>, {T}", max(by, self.bits[z])
                )
        else:
            p = self.rng.choice(_PREDICATES)
            cond = self.emit(f"arith.cmpi {p}, {x}, {y} : {T}")
            self.emit(f"arith.extui {cond} : tensor<16xi1> to {T}", 1)

    def shapes(self) -> None:
        """Some values seen in two dimensions: reshape, transpose, expand and broadcast."""
        v = self.pick()
        m = self.emit(f"tt.reshape {v} : {T} -> tensor<4x4xi64>")
        self.emit(f"tt.trans {m} {{order = array<i32: 1, 0>}} : tensor<4x4xi64> -> tensor<4x4xi64>")
        e = self.emit(f"tt.expand_dims {self.pick()} {{axis = 0 : i32}} : {T} -> tensor<1x16xi64>")
        b = self.emit(f"tt.broadcast {e} : tensor<1x16xi64> -> tensor<4x16xi64>")
        self.emit(f"tt.reshape {b} : tensor<4x16xi64> -> tensor<8x8xi64>")

    def text(self) -> str:
        header = "tt.func public @k(%a: i64 {tt.divisibility = 16 : i32}, %b: i64, %c: i1) {"
        return "\n".join([header, *self.lines, "    tt.return", "}"])


@pytest.mark.parametrize("seed", range(8))
def test_random_expressions(seed):
    """Random kernels (40 per seed): their values, evaluated, have the facts claimed."""
    rng = random.Random(seed)
    for _ in range(40):
        check_random_kernel(rng)


def check_random_kernel(rng: random.Random) -> None:
    kernel = _Kernel(rng)
    kernel.leaf()
    for _ in range(rng.randint(2, 10)):
        kernel.step()
    kernel.shapes()
    module = parse_module(kernel.text())
    analysis = AxisInfoAnalysis(module)
    failures = []
    original = engine.Evaluator.execute

    def execute(self, op):
        original(self, op)
        for r in op.results:
            problem = violation(r, self.env[r], analysis.info(r))
            if problem:
                failures.append(f"{op.name}: {problem} of {analysis.info(r)}")

    a, b, c = 16 * rng.randint(1, 8), rng.randint(0, 100), rng.random() < 0.5
    engine.Evaluator.execute = execute  # restored below, whatever happens
    try:
        evaluate(module, "k", [a, b, c])
    finally:
        engine.Evaluator.execute = original
    assert not failures, f"{kernel.text()}\n(a={a}, b={b}, c={c})\n" + "\n".join(failures)
