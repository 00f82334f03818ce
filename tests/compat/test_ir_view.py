"""What libraries that build a kernel's TTIR themselves read from Triton (torch's wrap_triton
does, to learn which tensors a kernel writes): `ASTSource.make_ir` as a read-only view in
the terms of Triton's bindings (`triton._C.libtriton.ir`), and the per-argument
specialization (`native_specialize_impl`, `mangle_type`, `BaseBackend.parse_attr`,
`triton._utils`)."""

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad.runtime.jit import mangle_type, native_specialize_impl
from naiad.triton import _utils
from naiad.triton._C.libtriton import ir
from naiad.triton.backends.compiler import BaseBackend, GPUTarget
from naiad.triton.compiler import ASTSource


@naiad.jit(noinline=True)
def _bump(ptr, offset):
    tl.atomic_add(ptr + offset, 1.0)


@naiad.jit
def _copy_and_count(src, dst, counts, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    for _ in range(n):
        tl.store(dst + offs, tl.load(src + offs))
    _bump(counts, n)


def _walked():
    source = ASTSource(
        _copy_and_count,
        {"src": "*fp32", "dst": "*fp32", "counts": "*fp32", "n": "i32", "BLOCK": "constexpr"},
        {"BLOCK": 16},
    )
    backend = BaseBackend(GPUTarget("cpu", 0, 0))
    options = backend.parse_options({})
    module = source.make_ir(GPUTarget("cpu", 0, 0), options, {}, {}, ir.context())
    ops = []
    module.walk(ops.append)
    return module, ops


def test_make_ir_is_walked_children_first_with_identities():
    module, ops = _walked()
    assert module.verify()
    names = [op.get_name() for op in ops]
    assert names[-1] == "builtin.module"
    assert names.index("tt.store") < names.index("scf.for")  # a loop's body before the loop
    functions = {op.get_str_attr("sym_name"): op for op in ops if op.get_name() == "tt.func"}
    kernel_name, callee_name = functions  # the kernel first (torch takes the first as it)
    assert kernel_name == "_copy_and_count" and "_bump" in callee_name
    call = next(op for op in ops if op.get_name() == "tt.call")
    assert call.get_flat_symbol_ref_attr("callee") == callee_name
    # The stored pointer's chain of defining ops ends at the kernel's second argument.
    kernel_body = functions[kernel_name].get_region(0).id()
    entry = next(op.get_block() for op in ops if op.get_block().get_parent().id() == kernel_body)
    store = next(op for op in ops if op.get_name() == "tt.store")
    by_result = {op.get_result(i).id(): op for op in ops for i in range(op.get_num_results())}
    pointer = store.get_operand(0).id()
    while pointer in by_result:
        pointer = by_result[pointer].get_operand(0).id()
    assert pointer == entry.get_argument(1).id()
    assert entry.get_num_arguments() == 4  # BLOCK is a constexpr: no argument
    assert "tt.store" in str(module)


def test_constants_ranges_and_shapes_read_as_triton_s_bindings():
    _, ops = _walked()
    by_name = {}
    for op in ops:
        by_name.setdefault(op.get_name(), []).append(op)
    (arange,) = by_name["tt.make_range"]
    assert (arange.get_int_attr("start"), arange.get_int_attr("end")) == (0, 16)
    assert arange.get_result(0).get_shape() == [16]
    constants = [op.get_constant_value() for op in by_name["arith.constant"]]
    assert constants and all(isinstance(c, int | float) for c in constants)
    loop = by_name["scf.for"][0]
    assert loop.get_operand(0).get_shape() == []  # a scalar bound
    with pytest.raises(ValueError, match="not a scalar constant"):
        loop.get_constant_value()


def test_arguments_specialize_as_tritons_launcher_does():
    x = np.zeros(64, np.float32)
    assert native_specialize_impl(BaseBackend, x) == ("*fp32", "D")
    assert native_specialize_impl(BaseBackend, x[1:]) == ("*fp32", "")
    assert native_specialize_impl(BaseBackend, x, align=False) == ("*fp32", "")
    assert native_specialize_impl(BaseBackend, 32) == ("i32", "D")
    assert native_specialize_impl(BaseBackend, 1) == ("constexpr", 1)
    assert native_specialize_impl(BaseBackend, 1, specialize_value=False) == ("i32", "")
    assert mangle_type(1) == "i32" and mangle_type(2**40) == "i64" and mangle_type(2.0) == "fp32"
    assert BaseBackend.parse_attr("D") == [["tt.divisibility", 16]]
    assert BaseBackend.parse_attr("") == []
    nested = ["D", 1, ("", ("D",))]
    paths = _utils.find_paths_if(nested, lambda _, leaf: isinstance(leaf, str))
    assert paths == [(0,), (2, 0), (2, 1, 0)]
    assert _utils.get_iterable_path(nested, (2, 1, 0)) == "D"


def test_block_shape_checks_are_the_languages():
    """`triton._utils.is_power_of_two` and `validate_block_shape`: the language's check of a
    block's shape (0 and negatives are no powers of 2), which gives its element count."""
    rng = np.random.default_rng(11)
    for _ in range(20):
        shape = [int(2 ** rng.integers(0, 7)) for _ in range(rng.integers(1, 4))]
        assert _utils.validate_block_shape(shape) == int(np.prod(shape))
    assert [_utils.is_power_of_two(n) for n in (1, 2, 1024, 0, 3, -4)] == [1, 1, 1, 0, 0, 0]
    for bad in ([0], [8, 0], [8, 6]):
        with pytest.raises(ValueError, match="must be a power of 2"):
            _utils.validate_block_shape(bad)
    with pytest.raises(ValueError, match="maximum tensor numel"):
        _utils.validate_block_shape([2048, 1024])
