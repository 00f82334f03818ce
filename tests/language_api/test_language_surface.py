"""`naiad.language` has the surface of `triton.language`: names, signatures, tensor methods."""

import inspect

import numpy as np
import pytest

import naiad
import naiad.language as tl

# `triton.language.__all__` of the Triton 3.8.0 wheel: 144 names (see
# test_naiad_exports_the_triton_names_and_its_own_extras for the names Naiad adds).
TRITON_ALL = [
    "expect_zero",
    "PropagateNan",
    "TRITON_MAX_TENSOR_NUMEL",
    "load_tensor_descriptor",
    "store_tensor_descriptor",
    "make_tensor_descriptor",
    "tensor_descriptor",
    "abs",
    "add",
    "advance",
    "arange",
    "argmax",
    "argmin",
    "associative_scan",
    "assume",
    "atomic_add",
    "atomic_and",
    "atomic_cas",
    "atomic_max",
    "atomic_min",
    "atomic_or",
    "atomic_xchg",
    "atomic_xor",
    "bfloat16",
    "bitonic_merge",
    "block_type",
    "broadcast",
    "broadcast_to",
    "cat",
    "cast",
    "cdiv",
    "ceil",
    "clamp",
    "condition",
    "const",
    "constexpr",
    "constexpr_type",
    "cos",
    "cumprod",
    "cumsum",
    "debug_barrier",
    "device_assert",
    "device_print",
    "div_rn",
    "dot",
    "dot_scaled",
    "dtype",
    "erf",
    "exp",
    "exp2",
    "expand_dims",
    "extra",
    "fdiv",
    "flip",
    "float16",
    "float32",
    "float64",
    "float8e4b15",
    "float8e4nv",
    "float8e4b8",
    "float8e5",
    "float8e5b16",
    "floor",
    "fma",
    "full",
    "gather",
    "histogram",
    "inline_asm_elementwise",
    "interleave",
    "int1",
    "int16",
    "int32",
    "int64",
    "int8",
    "join",
    "load",
    "log",
    "log2",
    "make_block_ptr",
    "map_elementwise",
    "math",
    "max",
    "max_constancy",
    "max_contiguous",
    "maximum",
    "min",
    "minimum",
    "mul",
    "multiple_of",
    "num_programs",
    "pair_uniform_to_normal",
    "permute",
    "philox",
    "philox_impl",
    "pi32_t",
    "pointer_type",
    "program_id",
    "rand",
    "rand4x",
    "randint",
    "randint4x",
    "randn",
    "randn4x",
    "range",
    "ravel",
    "reduce",
    "reduce_or",
    "reshape",
    "rsqrt",
    "slice",
    "sigmoid",
    "sin",
    "softmax",
    "sort",
    "split",
    "sqrt",
    "sqrt_rn",
    "squeeze",
    "static_assert",
    "static_print",
    "static_range",
    "store",
    "sub",
    "sum",
    "swizzle2d",
    "target_info",
    "tensor",
    "topk",
    "to_tensor",
    "trans",
    "tuple",
    "uint16",
    "uint32",
    "uint64",
    "uint8",
    "uint_to_uniform_float",
    "umulhi",
    "unsqueeze",
    "view",
    "void",
    "where",
    "xor_sum",
    "zeros",
    "zeros_like",
]

# The only names Naiad's `__all__` may add to that list (each is a name of triton.language's own
# modules; `constexpr_function` was in `__all__` of earlier 3.x releases).
NAIAD_EXTRAS = {"constexpr_function", "tensor_descriptor_type", "tuple_type", "item"}


def test_triton_all_list_is_well_formed():
    assert len(TRITON_ALL) == len(set(TRITON_ALL)) == 144


def test_every_triton_name_is_exported():
    assert set(TRITON_ALL) - set(tl.__all__) == set()


def test_naiad_exports_the_triton_names_and_its_own_extras():
    assert len(tl.__all__) == len(set(tl.__all__))
    assert set(tl.__all__) - set(TRITON_ALL) <= NAIAD_EXTRAS
    assert len(set(tl.__all__)) >= 144


@pytest.mark.parametrize("name", sorted(set(TRITON_ALL) | NAIAD_EXTRAS))
def test_every_exported_name_exists(name):
    assert hasattr(tl, name), name
    assert getattr(tl, name) is not None


# -- signatures ----------------------------------------------------------------------------------
_ = inspect.Parameter.empty
POS, VAR, KW = "pos", "*", "kw"

# (name, [(parameter, default)]) from Triton's documented signatures; `*name` is a var-positional
# parameter. `_semantic`, the hidden argument of builtins, is not part of the user's signature.
TRITON_SIGNATURES = [
    (
        "load",
        [
            ("pointer", _),
            ("mask", None),
            ("other", None),
            ("boundary_check", ()),
            ("padding_option", ""),
            ("cache_modifier", ""),
            ("eviction_policy", ""),
            ("volatile", False),
        ],
    ),
    (
        "store",
        [
            ("pointer", _),
            ("value", _),
            ("mask", None),
            ("boundary_check", ()),
            ("cache_modifier", ""),
            ("eviction_policy", ""),
        ],
    ),
    (
        "dot",
        [
            ("input", _),
            ("other", _),
            ("acc", None),
            ("input_precision", None),
            ("allow_tf32", None),
            ("max_num_imprecise_acc", None),
            ("out_dtype", None),  # Triton 3.8: the accumulator's dtype, else fp32 (3.6: fp32)
        ],
    ),
    (
        "dot_scaled",
        [
            ("lhs", _),
            ("lhs_scale", _),
            ("lhs_format", _),
            ("rhs", _),
            ("rhs_scale", _),
            ("rhs_format", _),
            ("acc", None),
            ("fast_math", False),
            ("lhs_k_pack", True),
            ("rhs_k_pack", True),
            ("out_dtype", tl.float32),
        ],
    ),
    ("reduce", [("input", _), ("axis", _), ("combine_fn", _), ("keep_dims", False)]),
    ("associative_scan", [("input", _), ("axis", _), ("combine_fn", _), ("reverse", False)]),
    ("sum", [("input", _), ("axis", None), ("keep_dims", False), ("dtype", None)]),
    (
        "max",
        [
            ("input", _),
            ("axis", None),
            ("return_indices", False),
            ("return_indices_tie_break_left", True),
            ("keep_dims", False),
        ],
    ),
    (
        "min",
        [
            ("input", _),
            ("axis", None),
            ("return_indices", False),
            ("return_indices_tie_break_left", True),
            ("keep_dims", False),
        ],
    ),
    ("argmax", [("input", _), ("axis", _), ("tie_break_left", True), ("keep_dims", False)]),
    ("argmin", [("input", _), ("axis", _), ("tie_break_left", True), ("keep_dims", False)]),
    ("xor_sum", [("input", _), ("axis", None), ("keep_dims", False)]),
    ("reduce_or", [("input", _), ("axis", _), ("keep_dims", False)]),
    ("cumsum", [("input", _), ("axis", 0), ("reverse", False), ("dtype", None)]),
    ("cumprod", [("input", _), ("axis", 0), ("reverse", False)]),
    ("sort", [("x", _), ("dim", None), ("descending", 0)]),
    ("flip", [("x", _), ("dim", None)]),
    ("gather", [("src", _), ("index", _), ("axis", _)]),
    ("histogram", [("input", _), ("num_bins", _), ("mask", None)]),
    (
        "make_block_ptr",
        [
            ("base", _),
            ("shape", _),
            ("strides", _),
            ("offsets", _),
            ("block_shape", _),
            ("order", _),
        ],
    ),
    ("advance", [("base", _), ("offsets", _)]),
    (
        "make_tensor_descriptor",
        [("base", _), ("shape", _), ("strides", _), ("block_shape", _), ("padding_option", "zero")],
    ),
    ("atomic_cas", [("pointer", _), ("cmp", _), ("val", _), ("sem", None), ("scope", None)]),
    *[
        (
            f"atomic_{op}",
            [("pointer", _), ("val", _), ("mask", None), ("sem", None), ("scope", None)],
        )
        for op in ("add", "max", "min", "and", "or", "xor", "xchg")
    ],
    ("rand", [("seed", _), ("offset", _), ("n_rounds", 10)]),
    ("randn", [("seed", _), ("offset", _), ("n_rounds", 10)]),
    ("randint", [("seed", _), ("offset", _), ("n_rounds", 10)]),
    ("randint4x", [("seed", _), ("offset", _), ("n_rounds", 10)]),
    ("philox", [("seed", _), ("c0", _), ("c1", _), ("c2", _), ("c3", _), ("n_rounds", 10)]),
    (
        "range",
        [
            ("arg1", _),
            ("arg2", None),
            ("step", None),
            ("num_stages", None),
            ("loop_unroll_factor", None),
            ("disallow_acc_multi_buffer", False),
            ("flatten", False),
            ("warp_specialize", False),
            ("disable_licm", False),
        ],
    ),
    ("static_range", [("arg1", _), ("arg2", None), ("step", None)]),
    ("full", [("shape", _), ("value", _), ("dtype", _)]),
    ("zeros", [("shape", _), ("dtype", _)]),
    ("zeros_like", [("input", _)]),
    ("arange", [("start", _), ("end", _)]),
    ("cast", [("input", _), ("dtype", _), ("fp_downcast_rounding", None), ("bitcast", False)]),
    ("trans", [("input", _), ("*dims", _)]),
    ("permute", [("input", _), ("*dims", _)]),
    ("reshape", [("input", _), ("*shape", _), ("can_reorder", False)]),
    ("view", [("input", _), ("*shape", _)]),
    ("broadcast_to", [("input", _), ("*shape", _)]),
    ("broadcast", [("input", _), ("other", _)]),
    ("expand_dims", [("input", _), ("axis", _)]),
    ("join", [("a", _), ("b", _)]),
    ("split", [("a", _)]),
    ("interleave", [("a", _), ("b", _)]),
    ("ravel", [("x", _), ("can_reorder", False)]),
    ("where", [("condition", _), ("x", _), ("y", _)]),
    ("maximum", [("x", _), ("y", _), ("propagate_nan", tl.PropagateNan.NONE)]),
    ("minimum", [("x", _), ("y", _), ("propagate_nan", tl.PropagateNan.NONE)]),
    ("clamp", [("x", _), ("min", _), ("max", _), ("propagate_nan", tl.PropagateNan.NONE)]),
    ("fdiv", [("x", _), ("y", _), ("ieee_rounding", False)]),
    ("fma", [("x", _), ("y", _), ("z", _)]),
    ("umulhi", [("x", _), ("y", _)]),
    ("div_rn", [("x", _), ("y", _)]),
    *[
        (name, [("x", _)])
        for name in (
            "exp",
            "exp2",
            "log",
            "log2",
            "cos",
            "sin",
            "sqrt",
            "sqrt_rn",
            "rsqrt",
            "erf",
            "floor",
            "ceil",
            "abs",
            "sigmoid",
        )
    ],
    *[(name, [("x", _), ("y", _), ("sanitize_overflow", True)]) for name in ("add", "sub", "mul")],
    ("cdiv", [("x", _), ("div", _)]),
    ("softmax", [("x", _), ("dim", None), ("keep_dims", False), ("ieee_rounding", False)]),
    ("swizzle2d", [("i", _), ("j", _), ("size_i", _), ("size_j", _), ("size_g", _)]),
    ("program_id", [("axis", _)]),
    ("num_programs", [("axis", _)]),
    ("device_print", [("prefix", _), ("*args", _), ("hex", False)]),
    ("device_assert", [("cond", _), ("msg", ""), ("mask", None)]),
    ("static_assert", [("cond", _), ("msg", "")]),
    (
        "static_print",
        [("*values", _), ("sep", " "), ("end", "\n"), ("file", None), ("flush", False)],
    ),
    ("debug_barrier", []),
    ("assume", [("cond", _)]),
    *[
        (name, [("input", _), ("values", _)])
        for name in ("multiple_of", "max_contiguous", "max_constancy")
    ],
    (
        "inline_asm_elementwise",
        [("asm", _), ("constraints", _), ("args", _), ("dtype", _), ("is_pure", _), ("pack", _)],
    ),
    ("map_elementwise", [("scalar_fn", _), ("*args", _), ("pack", 1)]),
]


def user_signature(fn):
    """[(name, default)] of `fn` as a kernel author sees it (`*name` for var-positional)."""
    params = []
    for p in inspect.signature(fn).parameters.values():
        if p.name == "_semantic":
            continue
        assert p.kind is not p.VAR_KEYWORD, f"{fn} takes **{p.name}"
        name = f"*{p.name}" if p.kind is p.VAR_POSITIONAL else p.name
        params.append((name, p.default))
    return params


@pytest.mark.parametrize("name, expected", TRITON_SIGNATURES, ids=[n for n, _ in TRITON_SIGNATURES])
def test_signature_matches_triton(name, expected):
    actual = user_signature(getattr(tl, name))
    assert [n for n, _ in actual] == [n for n, _ in expected], "parameter names differ"
    for (param, got), (_, want) in zip(actual, expected):
        assert type(got) is type(want) and got == want, f"default of `{param}`: {got!r} vs {want!r}"


def test_signature_table_covers_the_main_builtins():
    covered = {name for name, _ in TRITON_SIGNATURES}
    assert {
        "load",
        "store",
        "dot",
        "reduce",
        "sum",
        "max",
        "cumsum",
        "make_block_ptr",
        "atomic_add",
        "atomic_cas",
        "rand",
        "range",
        "static_range",
        "full",
        "arange",
        "cast",
        "trans",
        "reshape",
        "where",
        "maximum",
        "clamp",
        "device_print",
        "device_assert",
    } <= covered
    assert covered <= set(TRITON_ALL)


@naiad.jit
def misspelled_keyword(x_ptr):
    offs = tl.arange(0, 4)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, maskk=offs < 2))


def test_builtins_reject_unknown_keywords():
    with pytest.raises(TypeError, match=r"maskk"):
        misspelled_keyword[(1,)](np.zeros(4, np.float32))


@naiad.jit
def methods_and_functions_agree(x_ptr, out_ptr):
    x = tl.load(x_ptr + tl.arange(0, 8))
    tl.store(out_ptr + tl.arange(0, 8), x.sort(descending=True) - tl.sort(x, descending=True))
    tl.store(out_ptr + 8 + tl.arange(0, 8), x.flip(0) + x.sort() * 0)
    tl.store(out_ptr + 16, x.sum(0) - tl.sum(x, 0))


def test_tensor_methods_run_in_a_kernel():
    x = np.array([3, 1, 4, 1, 5, 9, 2, 6], np.int32)
    out = np.full(17, -99, np.int32)
    methods_and_functions_agree[(1,)](x, out)
    assert out[:8].tolist() == [0] * 8 and out[8:16].tolist() == x[::-1].tolist() and out[16] == 0


# -- tl.tensor members (triton-anatomy.md §1.0) ---------------------------------------------------
TENSOR_MEMBERS = [
    "T",
    "abs",
    "advance",
    "argmax",
    "argmin",
    "associative_scan",
    "atomic_add",
    "atomic_and",
    "atomic_cas",
    "atomic_max",
    "atomic_min",
    "atomic_or",
    "atomic_xchg",
    "atomic_xor",
    "broadcast_to",
    "cast",
    "cdiv",
    "ceil",
    "cos",
    "cumprod",
    "cumsum",
    "erf",
    "exp",
    "exp2",
    "expand_dims",
    "flip",
    "floor",
    "gather",
    "histogram",
    "item",
    "log",
    "log2",
    "logical_and",
    "logical_or",
    "max",
    "min",
    "permute",
    "ravel",
    "reduce",
    "reduce_or",
    "reshape",
    "rsqrt",
    "sigmoid",
    "sin",
    "softmax",
    "sort",
    "split",
    "sqrt",
    "sqrt_rn",
    "store",
    "sum",
    "to",
    "trans",
    "view",
    "xor_sum",
]

TENSOR_OPERATORS = [
    "__add__",
    "__radd__",
    "__sub__",
    "__rsub__",
    "__mul__",
    "__rmul__",
    "__truediv__",
    "__rtruediv__",
    "__floordiv__",
    "__rfloordiv__",
    "__mod__",
    "__rmod__",
    "__neg__",
    "__invert__",
    "__and__",
    "__rand__",
    "__or__",
    "__ror__",
    "__xor__",
    "__rxor__",
    "__lshift__",
    "__rlshift__",
    "__rshift__",
    "__rrshift__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__eq__",
    "__ne__",
    "__getitem__",
]


@pytest.mark.parametrize("member", ["__pos__", "__abs__"])
def test_tensor_has_no_unary_plus_or_abs(member):
    # Triton 3.8's tensor has neither, so `+x` and `abs(x)` fail to compile there (tl.abs works).
    assert not hasattr(tl.tensor, member)


def test_tensor_member_list_is_the_documented_55():
    assert len(TENSOR_MEMBERS) == len(set(TENSOR_MEMBERS)) == 55


@pytest.mark.parametrize("member", TENSOR_MEMBERS + TENSOR_OPERATORS)
def test_tensor_has_member(member):
    assert hasattr(tl.tensor, member), member
    assert member == "T" or callable(getattr(tl.tensor, member))


def test_tensor_methods_are_the_free_functions():
    for name in (
        "sum",
        "max",
        "cumsum",
        "reshape",
        "trans",
        "permute",
        "store",
        "atomic_add",
        "softmax",
        "sigmoid",
        "exp",
        "cast",
    ):
        assert getattr(tl.tensor, name) is getattr(tl, name), name


def test_tensor_attributes_of_values():
    for name in ("dtype", "type", "handle"):
        assert name in tl.tensor.__slots__
    for name in ("shape", "numel"):  # made when asked
        assert isinstance(getattr(tl.tensor, name), property)
    value = tl.tensor(None, tl.block_type(tl.float16, [4, 8]))
    assert [s.value for s in value.shape] == [4, 8] and value.numel.value == 32
    scalar = tl.tensor(None, tl.float32)
    assert scalar.shape == [] and scalar.numel.value == 1
