"""The source of a generated elementwise kernel, for one scalar function, one operand pattern
and one rank.

The kernel is ordinary Naiad source, made as text and registered in `linecache` under a name of
its own so the frontend reads it like any other kernel. Each program takes BLOCK consecutive
elements of the collapsed index space (layout.py), splits each flat index into the dims' indices
(innermost first: `i % size`, then `// size`), loads every tensor operand at its own strides,
casts the promoted operands to COMPUTE, calls the scalar function and stores the result cast to
the output's element type. Scalars arrive as kernel arguments and are not specialized on (a new
value must not cost a compile); sizes, counts and strides are, as any argument: a stride of 1
becomes a constant, and with sizes that are multiples of 16 contiguous operands load and store
as vectors.
"""

from __future__ import annotations

import itertools
import linecache

from ... import language as tl
from ...runtime.jit import jit

__all__ = ["ROW", "SCALAR", "TENSOR", "generate", "source"]

# How an argument of the scalar function reaches the kernel: loaded from a tensor, loaded once a
# row (ROW: a tensor constant along the inner dim, in a kernel that walks rows), or passed.
TENSOR, ROW, SCALAR = "T", "R", "S"
_serial = itertools.count(1)


def _parameters(pattern, rank):
    names = [f"in{i}" for i in range(len(pattern))] + ["out", "n"]
    names += [f"s{d}" for d in range(1, rank)]
    for i, (kind, _) in enumerate(pattern):
        if kind == TENSOR:
            names += [f"st{i}_{d}" for d in range(rank)]
        elif kind == ROW:
            names += [f"st{i}_{d}" for d in range(rank - 1)]
    names += [f"so_{d}" for d in range(rank)]
    return names


def _split(first: int, last: int, indent: str):
    """Lines splitting `rest` into the indices of dims last..first (innermost first)."""
    lines = []
    for d in range(last, first, -1):
        lines.append(f"{indent}i{d} = rest % s{d}")
        lines.append(f"{indent}rest = rest // s{d}")
    lines.append(f"{indent}i{first} = rest")
    return lines


def _index_lines(rank):
    """The indices of each dim: from one flat range over all dims, or (ROWS) a block of the
    innermost dim per program, the outer dims' indices one scalar each (no division per
    element: an operand contiguous or broadcast along the inner dim loads as a vector)."""
    flat = [
        "    offs = pid * BLOCK + tl.arange(0, BLOCK)",
        "    mask = offs < n",
        "    rest = offs",
        *_split(0, rank - 1, "    "),
    ]
    if rank == 1:
        return flat
    inner = rank - 1
    rows = [
        "    if ROWS:",
        f"        blocks = (s{inner} + BLOCK - 1) // BLOCK",
        "        rest = pid // blocks",
        f"        i{inner} = (pid % blocks) * BLOCK + tl.arange(0, BLOCK)",
        f"        mask = i{inner} < s{inner}",
        *_split(0, inner - 1, "        "),
        "    else:",
    ]
    return rows + ["    " + line for line in flat]


def _offset(prefix, rank):
    return " + ".join(f"i{d} * {prefix}{d}" for d in range(rank))


def _operand_lines(pattern, rank):
    lines = []
    for i, (kind, promoted) in enumerate(pattern):
        if kind == TENSOR:
            value = f"tl.load(in{i} + {_offset(f'st{i}_', rank)}, mask=mask)"
        elif kind == ROW:  # the row's one element (the kernel walks rows: i0.. are scalars)
            value = f"tl.load(in{i} + {_offset(f'st{i}_', rank - 1)})"
        else:
            value = f"in{i}"
        lines.append(f"    a{i} = {value}.to(COMPUTE)" if promoted else f"    a{i} = {value}")
    return lines


def source(name: str, pattern, rank: int) -> str:
    """The kernel's text: `pattern` is one (kind, promoted) pair per scalar-function argument."""
    params = ", ".join(_parameters(pattern, rank))
    args = ", ".join(f"a{i}" for i in range(len(pattern)))
    lines = [
        f"def {name}({params}, INDEX64: tl.constexpr, COMPUTE: tl.constexpr, "
        "ROWS: tl.constexpr, BLOCK: tl.constexpr):",
        "    pid = tl.program_id(0)",
        "    if INDEX64:",
        "        pid = pid.to(tl.int64)",
        *_index_lines(rank),
        *_operand_lines(pattern, rank),
        f"    result = fn({args})",
        f"    tl.store(out + {_offset('so_', rank)}, result.to(out.dtype.element_ty), mask=mask)",
    ]
    return "\n".join(lines) + "\n"


def generate(fn, pattern, rank: int):
    """A JIT kernel applying `fn` (a `@naiad.jit` scalar function) over `rank` dims."""
    name = f"{fn.__name__}_pointwise_{''.join(k for k, _ in pattern)}_{rank}d"
    text = source(name, pattern, rank)
    filename = f"<naiad.ops generated {next(_serial)}: {name}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {"tl": tl, "fn": fn}
    exec(compile(text, filename, "exec"), namespace)
    return jit(namespace[name], do_not_specialize=_unspecialized(pattern, rank))


def _unspecialized(pattern, rank):
    """The scalars: values that change from call to call. The count and the sizes are
    specialized as any argument (a multiple of 16, 1, or neither: at most three kernels each),
    so that a mask over a multiple of 16 is uniform over 16-byte pieces and the loads and
    stores are vectors (unspecialized, every element was loaded and stored on its own)."""
    return [f"in{i}" for i, (kind, _) in enumerate(pattern) if kind == SCALAR]
