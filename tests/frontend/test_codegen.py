"""The code generator's meaning of Python, kernel by kernel: literal typing, control flow, loop
options, Python builtins, hints, and the interpreter's rules for `and`/`or`/`not`, `is None`,
`assert` and augmented assignment."""

import pytest
from fixture_kernels import lang as kernels_lang

import naiad
import naiad.language as tl
from naiad import ir
from naiad.frontend import compile_to_ttir, generate
from naiad.ir.printer import print_module
from naiad.language.target import CUDA_HOPPER

SIGNATURE = {"X": "*fp32", "n": "i32", "BLOCK": "constexpr"}


def _compile(kernel, signature=SIGNATURE, constexprs=None, target=CUDA_HOPPER):
    module = compile_to_ttir(kernel, signature, constexprs or {"BLOCK": 16}, target=target)
    ir.verify(module)
    return module


def _ops(module, name):
    return [op for op in module.walk() if op.name == name]


@naiad.jit
def literals(X, n, BLOCK: tl.constexpr):
    a = 1
    b = 2**40
    c = 1.0
    d = 1e50
    e = True
    tl.store(X, (a + b).to(tl.float32) + c + d.to(tl.float32) + e.to(tl.float32))


def test_assignment_types_python_literals_as_the_interpreter_does():
    text = print_module(_compile(literals))
    assert "arith.constant 1 : i32" in text
    assert "arith.constant 1099511627776 : i64" in text
    assert "arith.constant 1.000000e+00 : f32" in text
    assert "arith.constant 1.000000e+50 : f64" in text
    assert "arith.constant true" in text


@naiad.jit
def ternary(X, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    y = tl.load(X + offs) if n > 0 else offs.to(tl.float32)
    tl.store(X + offs, y)


def test_a_conditional_expression_on_a_tensor_is_an_scf_if():
    (op,) = _ops(_compile(ternary), "scf.if")
    assert [str(r.type) for r in op.results] == ["tensor<16xf32>"]
    assert [o.name for o in op.then_block] == ["tt.splat", "tt.addptr", "tt.load", "scf.yield"]


@naiad.jit
def count_down(X, n, BLOCK: tl.constexpr):
    acc = 0
    for i in tl.range(n, 0, -2):
        acc += i
    tl.store(X, acc.to(tl.float32))


def test_a_constexpr_negative_step_runs_upwards_and_counts_down():
    (loop,) = _ops(_compile(count_down), "scf.for")
    # Triton's lowering: for %k = 0 to n step 2, i = n - k + 0.
    assert loop.upperBound is loop.parent.parent_op().arguments[1]
    first, second = list(loop.body)[:2]
    assert (first.name, second.name) == ("arith.subi", "arith.addi")
    assert first.operands[1] is loop.induction_var


@naiad.jit
def unsigned_loop(X, u, BLOCK: tl.constexpr):
    acc = 0.0
    for i in range(u):
        acc += i.to(tl.float32)
    tl.store(X, acc)


def test_an_unsigned_induction_variable_compares_unsigned():
    module = _compile(unsigned_loop, {"X": "*fp32", "u": "u32", "BLOCK": "constexpr"})
    (loop,) = _ops(module, "scf.for")
    assert "unsignedCmp" in loop.attributes
    assert str(loop.induction_var.type) == "i32"


@naiad.jit
def loop_options(X, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in tl.range(
        0,
        n,
        num_stages=3,
        loop_unroll_factor=2,
        flatten=True,
        warp_specialize=True,
        disable_licm=True,
        disallow_acc_multi_buffer=True,
    ):
        acc += i
    i = 0
    while tl.condition(i < n, disable_licm=True):
        i += 1
    tl.store(X + tl.arange(0, BLOCK), acc + i)


def test_loop_options_become_the_attributes_triton_uses():
    module = _compile(loop_options)
    (loop,) = _ops(module, "scf.for")
    attrs = loop.attributes
    assert attrs["tt.num_stages"].value == 3 and attrs["tt.loop_unroll_factor"].value == 2
    for unit in ("tt.flatten", "tt.warp_specialize", "tt.disable_licm"):
        assert isinstance(attrs[unit], ir.UnitAttr), unit
    assert "tt.disallow_acc_multi_buffer" in attrs
    (loop,) = _ops(module, "scf.while")
    assert "tt.disable_licm" in loop.attributes


@naiad.jit
def python_builtins(X, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, max(BLOCK, 4))
    m = min(n, BLOCK)
    print("m", m)
    tl.store(X + offs, offs + m)


def test_python_min_max_and_print_have_triton_meaning():
    module = _compile(python_builtins)
    assert len(_ops(module, "arith.minsi")) == 1  # min of a tensor: tl.minimum
    (print_op,) = _ops(module, "tt.print")
    assert print_op.prefix.value.strip(" :") == "m"


@naiad.jit
def asserting(X, n, BLOCK: tl.constexpr):
    assert n > 0, "n must be positive"
    tl.store(X, n.to(tl.float32))


def test_assert_is_a_device_assertion_in_debug_mode_only():
    assert not _ops(_compile(asserting), "tt.assert")
    (op,) = _ops(_compile(asserting, target=CUDA_HOPPER.with_options(debug=True)), "tt.assert")
    assert op.message.value == "n must be positive"


@naiad.jit
def dead_assignment_in_loop(X, n, BLOCK: tl.constexpr):
    acc = 0.0
    scale = 1.0
    for i in range(n):
        if BLOCK > 1024:
            scale = 2.0
        acc += i * scale
    tl.store(X, acc)


def test_a_name_assigned_only_in_dead_code_is_not_carried():
    (loop,) = _ops(_compile(dead_assignment_in_loop), "scf.for")
    assert [str(v.type) for v in loop.initArgs] == ["f32"]  # acc only


@naiad.jit
def hinted_induction_variable(X, n, BLOCK: tl.constexpr):
    for i in range(0, n, BLOCK):
        i = tl.multiple_of(i, BLOCK)
        tl.store(X + i, 1.0)


def test_a_hint_on_a_loop_variable_is_kept_on_the_loop():
    (loop,) = _ops(_compile(hinted_induction_variable), "scf.for")
    assert str(loop.attributes["tt.divisibility_arg0"]) == "dense<16> : tensor<1xi32>"


@naiad.jit
def augmented_constexpr(X, n, BLOCK: tl.constexpr):
    K: tl.constexpr = BLOCK
    K *= 2
    tl.store(X + tl.arange(0, K), 1.0)


def test_augmented_assignment_keeps_a_constexpr_as_the_interpreter_does():
    (op,) = _ops(_compile(augmented_constexpr), "tt.make_range")
    assert op.end.value == 32


@naiad.jit
def logic(X, n, BIAS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    keep = (offs < n) and not (offs == 3)  # noqa: SIM201 (`not` on a tensor, on purpose)
    if BIAS is None:
        keep = keep or (offs == 0)
    tl.store(X + offs, 1.0, mask=keep)


def test_and_or_not_are_elementwise_on_int1_and_is_compares_constexprs():
    module = _compile(logic, {**SIGNATURE, "BIAS": "constexpr"}, {"BLOCK": 16, "BIAS": None})
    assert len(_ops(module, "arith.andi")) == 1
    assert len(_ops(module, "arith.ori")) == 1  # `BIAS is None` holds for a constexpr None


@naiad.jit
def logic_on_ints(X, n, BLOCK: tl.constexpr):
    tl.store(X, (n and n).to(tl.float32))


def test_and_needs_int1_operands():
    with pytest.raises(ValueError, match="int1"):
        _compile(logic_on_ints)


def test_globals_read_are_recorded_for_the_specialization_key():
    result = generate(
        kernels_lang.constexpr_dead_branch,
        {"X": "*fp32", "Y": "*fp32", "n": "i32"},
        {"MODE": "double", "USE_BIAS": False, "BLOCK": 128},
    )
    assert result.globals_used[("fixture_kernels.lang", "SCALE")] == tl.constexpr(3)
    assert result.name == "constexpr_dead_branch"


def test_a_noinline_function_stays_a_call():
    module = compile_to_ttir(
        kernels_lang.jit_calls,
        {"X": "*fp32", "Y": "*fp32", "Z": "*fp32", "a": "fp32"},
        {"BLOCK": 64},
    )
    funcs = {op.sym_name.value.split("__")[0]: op for op in module.body}
    assert funcs["fixture_kernels.lang._square_noinline"].attributes["noinline"].value is True
    assert funcs["fixture_kernels.lang._axpy"].attributes["noinline"].value is False
    assert len(_ops(module, "tt.call")) == 5  # _axpy, _square_noinline, _two_results, sum, combine


@naiad.jit
def _pair(x):
    if x.dtype == tl.float32:
        return x, x * 2
    return x, x


@naiad.jit
def tuple_results(X, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a, b = _pair(tl.load(X + offs))
    state = (a, b)
    for _ in range(n):
        state = (state[1], state[0])
    tl.store(X + offs, state[0] + state[1])


def test_tuples_cross_calls_and_loops_as_their_tensors():
    module = _compile(tuple_results)
    (call,) = _ops(module, "tt.call")
    assert len(call.results) == 2
    (loop,) = _ops(module, "scf.for")
    assert len(loop.initArgs) == 2
    body = loop.body.arguments
    assert list(loop.body.last_op.operands) == [body[2], body[1]]


@naiad.jit
def stores_in_both_branches(X, n, BLOCK: tl.constexpr):
    if n > 0:
        tl.store(X, 1.0)
    else:
        tl.store(X, 2.0)
    if n > 1:
        tl.store(X, 3.0)


def test_an_if_without_results_keeps_both_branches():
    both, then_only = _ops(_compile(stores_in_both_branches), "scf.if")
    assert not both.results
    assert [op.name for op in both.else_block] == ["arith.constant", "tt.store", "scf.yield"]
    assert then_only.else_block is None
