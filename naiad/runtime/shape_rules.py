"""The shapes of the language's functions' results, for ast_shapes.py: the broadcast of their
arguments' for elementwise functions, and a rule of their own for the others (a dot, a
reduction, a reshape, a concatenation, a block pointer's or a descriptor's load, ...).
A function not named here is one the reading cannot tell (None)."""

from __future__ import annotations

import ast

from .shape_kinds import SCALAR, broadcast, dot, is_kind, plain, tagged

# The language's functions whose result is the broadcast of their arguments' shapes.
ELEMENTWISE = frozenset(
    {"load", "where", "maximum", "minimum", "fma", "clamp", "cdiv", "umulhi", "cast", "to"}
    | {"exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "abs", "sin", "cos", "erf"}
    | {"floor", "ceil", "sigmoid", "div_rn", "fdiv", "rand", "randn", "randint", "softmax"}
    | {"program_id", "num_programs", "multiple_of", "max_contiguous", "max_constancy"}
    | {"atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor"}
    | {"atomic_xchg", "atomic_cas", "cumsum", "cumprod", "flip", "sort", "zeros_like"}
    | {"full_like", "isnan", "isinf", "signbit", "pow", "tanh", "log1p", "expm1"}
)
REDUCTIONS = frozenset({"sum", "max", "min", "argmax", "argmin", "xor_sum", "reduce"})
NO_VALUE = frozenset({"store", "static_assert", "device_assert", "device_print", "static_print"})
# The calls that make a block pointer or a descriptor: where their `block_shape` is, the kind.
BLOCK_MAKERS = {"make_block_ptr": (4, "pointer"), "make_tensor_descriptor": (3, "descriptor")}
# The language's calls that make a constant (`tl.constexpr(32)`), not a tensor.
CONSTANTS = frozenset({"constexpr"})


class LanguageCall:
    """One call of a language function: `kinds` its arguments' in order (a method's value
    first, `shift` 1), keywords after the positional ones; `body` the reading of the function
    the call is in (its `constant`, `shape_of` and `reading.seen`)."""

    def __init__(self, body, name: str, node: ast.Call, kinds: list, shift: int):
        self.body, self.name, self.node, self.kinds, self.shift = body, name, node, kinds, shift

    def argument(self, position: int, keyword: str):
        """The AST of the argument at `position` (the method's value counted) or `keyword`."""
        for given in self.node.keywords:
            if given.arg == keyword:
                return given.value
        index = position - self.shift
        return self.node.args[index] if 0 <= index < len(self.node.args) else None

    def kind(self):
        """The kind of the call's result (None: not told)."""
        name, kinds = self.name, self.kinds
        if name in NO_VALUE or name in CONSTANTS:
            return SCALAR
        if name in ("load", "load_tensor_descriptor") and kinds and tagged(kinds[0]):
            return kinds[0][1] if kinds[0][0] in ("pointer", "descriptor") else None
        if kinds and is_kind(kinds[0], "descriptor"):  # (its other methods: gather, scatter, ...)
            return SCALAR if name in ("store", "store_tensor_descriptor") else None
        if name in ELEMENTWISE:
            return broadcast([k for k in kinds if not is_kind(k, "tuple")])
        if name in SHAPED:
            return SHAPED[name](self, [plain(k) for k in kinds])
        if name == "arange":
            bounds = [self.body.constant(a) for a in arguments(self.node)]
            if len(bounds) != 2 or any(type(b) is not int for b in bounds):
                return None
            return (bounds[1] - bounds[0],)
        if name in ("zeros", "full"):
            return self.shape(0, "shape")
        if name in ("reshape", "view", "broadcast_to"):
            return self.shape(1, "shape")
        if name in REDUCTIONS:
            return self.reduced()
        if name == "dot":
            return dot(kinds[0], kinds[1]) if len(kinds) >= 2 else None
        if name in ("trans", "permute"):
            return self.permuted()
        if name == "expand_dims":
            axis = self.body.constant(self.argument(1, "axis"))
            if type(axis) is not int or not isinstance(kinds[0], tuple):
                return None
            shape = list(kinds[0])
            shape.insert(axis % (len(shape) + 1), 1)
            return tuple(shape)
        if name in BLOCK_MAKERS:
            position, tag = BLOCK_MAKERS[name]
            shape = self.argument(position, "block_shape")
            found = None if shape is None else self.body.shape_of(shape)
            return None if found is None else (tag, found)
        if name == "advance":
            return kinds[0]
        return None

    def concatenated(self, kinds: list):
        """`tl.cat(a, b, dim=d)`: a's shape with b's size added along d."""
        axis = self.body.constant(self.argument(3, "dim")) if self.argument(3, "dim") else 0
        a, b = (kinds + [None, None])[:2]
        if a is None or b is None or len(a) != len(b) or type(axis) is not int:
            return None
        return tuple(
            x + y if i == axis % len(a) else max(x, y) for i, (x, y) in enumerate(zip(a, b))
        )

    def scaled_dot(self, kinds: list):
        """`tl.dot_scaled(a, a_scale, a_format, b, b_scale, b_format)`: the product's shape;
        its operands are unpacked to twice their packed size at most (e2m1), which the block
        bound counts too."""
        a, b = kinds[0], kinds[3] if len(kinds) > 3 else None
        if a is None or b is None or len(a) != 2 or len(b) != 2:
            return None
        self.body.reading.seen((a[0], 2 * a[1]))
        self.body.reading.seen((2 * b[0], b[1]))
        return (a[0], b[1])

    def shape(self, position: int, keyword: str):
        """The shape argument at `position`, or the sizes given one by one from there
        (`x.reshape(M, N)`, `tl.reshape(x, M, N)`)."""
        given = self.node.args[max(position - self.shift, 0) :]
        if len(given) > 1 and self.name in ("reshape", "view", "broadcast_to"):
            shape = tuple(self.body.constant(a) for a in given)
            return shape if all(type(d) is int and d > 0 for d in shape) else None
        node = self.argument(position, keyword)
        return None if node is None else self.body.shape_of(node)

    def reduced(self):
        kind = self.kinds[0]
        if plain(kind) is None:
            return None
        axis_node = self.argument(1, "axis")
        axis = None if axis_node is None else self.body.constant(axis_node)
        if axis is None:
            return SCALAR
        if type(axis) is not int or not -len(kind) <= axis < len(kind):
            return None
        keep = self.argument(2 if self.name != "reduce" else 3, "keep_dims")
        shape = list(kind)
        if keep is not None and self.body.constant(keep) is True:
            shape[axis] = 1
        else:
            del shape[axis]
        return tuple(shape)

    def permuted(self):
        kind = self.kinds[0]
        if plain(kind) is None:
            return None
        given = [a for a in self.node.args[1 - self.shift :]]
        if len(given) == 1 and isinstance(given[0], ast.Tuple | ast.List):
            given = list(given[0].elts)
        if not given:
            return tuple(reversed(kind))
        order = [self.body.constant(a) for a in given]
        if sorted(order) != list(range(len(kind))):
            return None
        return tuple(kind[i] for i in order)


def _joined(call: LanguageCall, kinds: list):
    both = broadcast(kinds[:2]) if None not in kinds[:2] else None
    return None if both is None else (*both, 2)


def _split(call: LanguageCall, kinds: list):
    a = kinds[0]
    return None if not a or a[-1] != 2 else ("tuple", (a[:-1], a[:-1]))


def _interleaved(call: LanguageCall, kinds: list):
    both = broadcast(kinds[:2]) if None not in kinds[:2] else None
    return None if not both else (*both[:-1], 2 * both[-1])


def _gathered(call: LanguageCall, kinds: list):
    return kinds[1] if len(kinds) > 1 else None


def _histogram(call: LanguageCall, kinds: list):
    bins = call.body.constant(call.argument(1, "num_bins"))
    return (bins,) if type(bins) is int and bins > 0 else None


# The language's functions whose result's shape is not their arguments' broadcast: the rule of
# each, given the call and its arguments' shapes (None where one is not a shape).
SHAPED = {
    "cat": LanguageCall.concatenated,
    "dot_scaled": LanguageCall.scaled_dot,
    "join": _joined,
    "split": _split,
    "interleave": _interleaved,
    "gather": _gathered,
    "histogram": _histogram,
}


def arguments(node: ast.Call) -> list:
    return [*node.args, *(k.value for k in node.keywords)]
