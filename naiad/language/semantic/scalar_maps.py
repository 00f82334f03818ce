"""`map_elementwise`: a user's `@jit` function of scalars, applied to every element of blocks.

The function sees one element of each argument (or `pack` elements of each, operand by operand:
`fn(a0, a1, b0, b1)` for two arguments and `pack=2`), so it may branch and loop on them, which a
block cannot. It returns one value or a tuple; with `pack > 1` it returns `pack` values per
result, result by result (`c0, c1, d0, d1`). The arguments broadcast together first, as in an
arithmetic operation. Which elements share a pack is the builder's choice (consecutive elements
here, a thread's registers on a GPU); a function that treats each of its elements on its own
computes the same values either way.
"""

from __future__ import annotations

from .. import dtypes as t
from ..core import _unwrap_if_constexpr, tensor
from ..core import tuple as lang_tuple


def _is_jit_function(fn) -> bool:
    return bool(getattr(fn, "__naiad_jit__", False))


class ScalarMapsMixin:
    """Mixed into `Semantic`."""

    def map_elementwise(self, scalar_fn, args, pack=1):
        scalar_fn = _unwrap_if_constexpr(scalar_fn)
        pack = _unwrap_if_constexpr(pack)
        if not _is_jit_function(scalar_fn):
            raise TypeError(
                "tl.map_elementwise: the scalar function must be a @jit function, got "
                f"{getattr(scalar_fn, '__name__', type(scalar_fn).__name__)!r}"
            )
        if not isinstance(pack, int) or isinstance(pack, bool) or pack < 1:
            raise ValueError(f"tl.map_elementwise: pack must be an int of at least 1, got {pack!r}")
        if not args:
            raise ValueError("tl.map_elementwise needs at least one argument to map over")
        args = self._broadcast_all([self.to_tensor(a) for a in args])
        arg_types = [a.type.scalar for a in args for _ in range(pack)]
        made = {}  # what the last call of the function returned: one value or a tuple, types

        def body(handles, shape):
            """Call the function on scalars (`shape == ()`) or on blocks of `shape` whose lanes
            are independent elements; the handles of its results, `pack` per result."""

            def wrap(handle, scalar):
                return tensor(handle, t.block_type(scalar, shape) if shape else scalar)

            results = scalar_fn(*[wrap(h, s) for h, s in zip(handles, arg_types)])
            made["single"] = not isinstance(results, (tuple, list, lang_tuple))
            results = self._map_results(results, pack, shape)
            made["types"] = [r.type.scalar for r in results[::pack]]
            return [r.handle for r in results]

        if args[0].type.is_block():
            shape = list(args[0].type.get_block_shapes())
            handles = self.builder.map_elementwise([a.handle for a in args], shape, pack, body)
            values = [tensor(h, t.block_type(s, shape)) for h, s in zip(handles, made["types"])]
        else:  # scalars: one call, each argument standing for all of its pack elements
            handles = body([a.handle for a in args for _ in range(pack)], ())[::pack]
            values = [tensor(h, s) for h, s in zip(handles, made["types"])]
        return values[0] if made["single"] else lang_tuple(values)

    def _broadcast_all(self, args):
        for i in range(len(args)):
            for j in range(len(args)):
                args[i], args[j] = self.broadcast_impl_value(args[i], args[j])
        return args

    def _map_results(self, results, pack, shape):
        """The function's results as tensors of `shape` (a scalar result broadcasts), checked:
        `pack` values per result, of one type each."""
        if results is None:
            raise ValueError("tl.map_elementwise: the scalar function returns no value")
        results = list(results) if isinstance(results, (tuple, list, lang_tuple)) else [results]
        if not results or len(results) % pack:
            raise ValueError(
                f"tl.map_elementwise: with pack={pack} the scalar function must return a "
                f"multiple of {pack} values ({pack} per result), but it returns {len(results)}"
            )
        values = []
        for result in results:
            value = self.to_tensor(result)
            if value.type.is_block() and not shape:
                raise ValueError(
                    "tl.map_elementwise: the scalar function must return scalars, but it "
                    f"returns a block of shape {list(value.type.get_block_shapes())}"
                )
            if shape and not value.type.is_block():
                value = self.splat(value, shape)
            values.append(value)
        for first in range(0, len(values), pack):
            kinds = {v.type.scalar for v in values[first : first + pack]}
            if len(kinds) > 1:
                raise TypeError(
                    f"tl.map_elementwise: the {pack} values of result {first // pack} have "
                    f"different types ({', '.join(sorted(map(str, kinds)))})"
                )
        return values
