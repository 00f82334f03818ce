"""Linear layouts: maps over GF(2) from hardware indices to tensor coordinates.

A layout has named input dimensions (`register`, `lane`, `warp`, `block` for a distributed
tensor; `offset` for shared memory) and named output dimensions (`dim0`, `dim1`, ...), every
size a power of two. Each bit of each input owns a *basis*: the output coordinates it selects.
The image of an input is the XOR of the bases of its set bits, so the whole map is a matrix over
GF(2), and composing, inverting and multiplying layouts is linear algebra on bit vectors.

    L = LinearLayout({"register": [[0, 1]], "lane": [[0, 2], [1, 0]]}, {"dim0": 2, "dim1": 4})
    L.apply(register=1, lane=3)        # (1, 3): bases [0,1] ^ [0,2] ^ [1,0]

Representation (why it is fast): the output coordinates are packed into one Python int, output
dimension `k` in a bit field above those of dimensions `0..k-1` (the first output dimension is
the most minor). XOR of packed ints is the XOR of the coordinate vectors, so applying a layout is
a loop of XORs, composing is applying, and `reshape_outs` only moves field boundaries. Inputs are
packed the same way (first input dimension lowest) where a layout is read as one matrix.
Layouts are immutable and hashable; the encodings cache theirs (conversions.py). Products,
composition and inverses are linear algebra on these bits (layout_algebra.py, mixed in).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from .bits import field_shifts, log2_exact, pack, repack, xor_bits
from .layout_algebra import LayoutAlgebra


class LinearLayout(LayoutAlgebra):
    """A linear map from named input bits to named output coordinates (see the module doc).

    Args:
        bases: input dimension -> one basis per input bit, each a vector with one coordinate
            per output dimension (in the order of `outs`).
        outs: the output dimensions in order: a mapping name -> size, or names only, each size
            then the smallest power of two holding every basis coordinate.
    """

    __slots__ = ("_bases", "_by_name", "_hash", "_ins", "_out_bits", "_outs", "_shifts")

    def __init__(self, bases: Mapping[str, Sequence[Sequence[int]]], outs):
        out_names = tuple(outs)
        if isinstance(outs, Mapping):
            bits = tuple(log2_exact(outs[n], f"size of {n}") for n in out_names)
        else:
            bits = []
            for k in range(len(out_names)):
                top = 0
                for vectors in bases.values():
                    for v in vectors:
                        top |= v[k]
                bits.append(top.bit_length())
        shifts = field_shifts(bits)
        packed = []
        for name, vectors in bases.items():
            row = []
            for v in vectors:
                if len(v) != len(out_names):
                    raise ValueError(f"basis {list(v)} of {name} needs {len(out_names)} entries")
                row.append(pack(v, bits, shifts, out_names))
            packed.append(tuple(row))
        self._init(tuple(bases), tuple(packed), out_names, tuple(bits))

    def _init(self, ins, bases, outs, out_bits) -> None:
        self._ins = ins
        self._bases = bases
        self._outs = outs
        self._out_bits = out_bits
        self._shifts = field_shifts(out_bits)
        self._by_name = dict(zip(ins, bases))
        self._hash = None

    @classmethod
    def _make(cls, ins, bases, outs, out_bits) -> LinearLayout:
        layout = object.__new__(cls)
        layout._init(tuple(ins), tuple(tuple(b) for b in bases), tuple(outs), tuple(out_bits))
        return layout

    # -- constructors

    @classmethod
    def empty(cls) -> LinearLayout:
        """The layout of no inputs and no outputs: the unit of `*`."""
        return cls._make((), (), (), ())

    @classmethod
    def identity1d(cls, size: int, in_dim: str, out_dim: str) -> LinearLayout:
        """`in_dim` i -> `out_dim` i, for i < size."""
        bits = log2_exact(size, "size")
        return cls._make((in_dim,), ((1 << i for i in range(bits)),), (out_dim,), (bits,))

    @classmethod
    def zeros1d(cls, size: int, in_dim: str, out_dim: str, out_size: int = 1) -> LinearLayout:
        """Every `in_dim` i -> `out_dim` 0: `size` inputs holding the same element (broadcast)."""
        bits = log2_exact(size, "size")
        return cls._make((in_dim,), ((0,) * bits,), (out_dim,), (log2_exact(out_size, "out_size"),))

    @classmethod
    def identity(cls, shape: Mapping[str, int], in_dim: str) -> LinearLayout:
        """`in_dim` -> the output dimensions `shape` (name -> size), the first one minor."""
        bits = [log2_exact(size, f"size of {name}") for name, size in shape.items()]
        return cls._make((in_dim,), ([1 << i for i in range(sum(bits))],), tuple(shape), bits)

    # -- shape

    @property
    def in_dims(self) -> tuple[str, ...]:
        return self._ins

    @property
    def out_dims(self) -> tuple[str, ...]:
        return self._outs

    def in_dim_size_log2(self, name: str) -> int:
        return len(self._by_name.get(name, ()))

    def in_dim_size(self, name: str) -> int:
        return 1 << self.in_dim_size_log2(name)

    def out_dim_size_log2(self, name: str) -> int:
        return self._out_bits[self._outs.index(name)] if name in self._outs else 0

    def out_dim_size(self, name: str) -> int:
        return 1 << self.out_dim_size_log2(name)

    @property
    def out_shape(self) -> dict[str, int]:
        """Output dimension -> size, in order."""
        return {n: 1 << b for n, b in zip(self._outs, self._out_bits)}

    @property
    def in_shape(self) -> dict[str, int]:
        """Input dimension -> size, in order."""
        return {n: 1 << len(b) for n, b in zip(self._ins, self._bases)}

    @property
    def total_in_bits(self) -> int:
        return sum(len(b) for b in self._bases)

    @property
    def total_out_bits(self) -> int:
        return sum(self._out_bits)

    # -- bases

    def bases(self, in_dim: str) -> list[tuple[int, ...]]:
        """The bases of `in_dim`, each a vector of output coordinates."""
        if in_dim not in self._ins:
            return []
        return [self._unpack(b) for b in self._bases[self._ins.index(in_dim)]]

    def all_bases(self) -> dict[str, list[tuple[int, ...]]]:
        """Input dimension -> its bases (as `bases`), the form `LinearLayout(...)` takes."""
        return {name: self.bases(name) for name in self._ins}

    def packed_bases(self, in_dim: str) -> tuple[int, ...]:
        """The bases of `in_dim` as packed output ints (see the module doc)."""
        return self._by_name.get(in_dim, ())

    def _unpack(self, packed: int) -> tuple[int, ...]:
        return tuple((packed >> s) & ((1 << b) - 1) for s, b in zip(self._shifts, self._out_bits))

    def _columns(self) -> list[int]:
        """Every basis, packed, in input order: the columns of the layout's matrix."""
        return [b for row in self._bases for b in row]

    # -- evaluation

    def apply(self, **inputs: int) -> tuple[int, ...]:
        """The output coordinates (in `out_dims` order) of the named inputs (absent ones: 0)."""
        return self._unpack(self.apply_packed(inputs))

    def apply_packed(self, inputs: Mapping[str, int]) -> int:
        """Like `apply`, but the output coordinates stay packed in one int."""
        result = 0
        for name, value in inputs.items():
            if value:
                bases = self._by_name.get(name)
                if bases is None:
                    raise KeyError(f"{name!r} is not an input of this layout")
                if value >> len(bases):
                    raise ValueError(f"{name} = {value} is out of range ({1 << len(bases)})")
                result ^= xor_bits(bases, value)
        return result

    def apply_flat(self, value: int) -> int:
        """The packed output of the packed input `value` (first input dimension lowest)."""
        return xor_bits(self._columns(), value)

    # -- reshaping

    def transpose_outs(self, order: Iterable[str]) -> LinearLayout:
        """The same map with the output dimensions reordered (`order` names each once)."""
        order = tuple(order)
        if sorted(order) != sorted(self._outs):
            raise ValueError(f"transpose_outs: {order} is not a permutation of {self._outs}")
        bits = [self.out_dim_size_log2(n) for n in order]
        shifts = field_shifts(bits)
        mapping = [(shifts[order.index(n)], b) for n, b in zip(self._outs, self._out_bits)]
        rows = [[repack(b, self._shifts, mapping) for b in row] for row in self._bases]
        return LinearLayout._make(self._ins, rows, order, bits)

    def transpose_ins(self, order: Iterable[str]) -> LinearLayout:
        """The same map with the input dimensions reordered."""
        order = tuple(order)
        if sorted(order) != sorted(self._ins):
            raise ValueError(f"transpose_ins: {order} is not a permutation of {self._ins}")
        return LinearLayout._make(
            order, [self.packed_bases(n) for n in order], self._outs, self._out_bits
        )

    def reshape_outs(self, outs: Mapping[str, int]) -> LinearLayout:
        """The outputs flattened (first dimension minor) and split again into `outs` (name ->
        size, the first minor): a row-major reshape of the reversed dimensions."""
        bits = [log2_exact(s, f"size of {n}") for n, s in outs.items()]
        if sum(bits) != self.total_out_bits:
            raise ValueError("reshape_outs: the total size changes")
        return LinearLayout._make(self._ins, self._bases, tuple(outs), bits)

    def flatten_outs(self, name: str = "dim0") -> LinearLayout:
        """One output dimension `name` holding all outputs, the first one minor."""
        return self.reshape_outs({name: 1 << self.total_out_bits})

    def sublayout(self, in_dims: Iterable[str], out_dims: Iterable[str]) -> LinearLayout:
        """The restriction to `in_dims` (in that order) and the projection onto `out_dims`."""
        in_dims = tuple(in_dims)
        out_dims = tuple(out_dims)
        bits = [self.out_dim_size_log2(n) for n in out_dims]
        shifts = field_shifts(bits)
        mapping = []
        for n, b in zip(self._outs, self._out_bits):
            mapping.append((shifts[out_dims.index(n)], b) if n in out_dims else None)
        rows = [[repack(b, self._shifts, mapping) for b in self.packed_bases(n)] for n in in_dims]
        return LinearLayout._make(in_dims, rows, out_dims, bits)

    # -- queries

    def zero_bases_mask(self, in_dim: str) -> int:
        """The bits of `in_dim` whose basis is zero: inputs differing there hold the same
        element (broadcast lanes or warps)."""
        mask = 0
        for i, b in enumerate(self.packed_bases(in_dim)):
            if not b:
                mask |= 1 << i
        return mask

    def contiguous_registers(self, out_dim: str, in_dim: str = "register") -> int:
        """How many consecutive `in_dim` indices hold consecutive elements along `out_dim`: the
        largest 2**k such that the first k bases are 1, 2, ..., 2**(k-1) along `out_dim` and
        zero elsewhere (the vector width of a per-thread access along that dimension)."""
        if out_dim not in self._outs:
            return 1
        shift = self._shifts[self._outs.index(out_dim)]
        count = 0
        for i, b in enumerate(self.packed_bases(in_dim)):
            if b != 1 << (shift + i):
                break
            count += 1
        return 1 << count

    # -- identity, printing

    def _key(self):
        return (self._ins, self._bases, self._outs, self._out_bits)

    def __eq__(self, other) -> bool:
        return isinstance(other, LinearLayout) and self._key() == other._key()

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self._key())
        return self._hash

    def __repr__(self) -> str:
        outs = ", ".join(f"{n}: {1 << b}" for n, b in zip(self._outs, self._out_bits))
        lines = [f"LinearLayout(-> {outs}"]
        for name in self._ins:
            bases = ", ".join("[" + ", ".join(map(str, v)) + "]" for v in self.bases(name))
            lines.append(f"  {name}: [{bases}]")
        return "\n".join(lines) + ")"
