"""Each `ttg` encoding as a linear layout, for a given tensor shape.

`to_linear_layout(encoding, shape)` is the one meaning of an encoding that the GPU lowering
reads: distributed encodings map (register, lane, warp, block) to (dim0, dim1, ...); shared
encodings map `offset` (the element's position in the buffer) to (dim0, dim1, ...). The maps are
Triton's, bit for bit, so that TTGIR read from Triton means what it meant there:

- a CTA tile is built per encoding (registers, lanes and warps of one CTA), its output
  dimensions in the encoding's repetition order (fastest first);
- `_fit_to_shape` then fits it to the tensor: each dimension smaller than the tensor is repeated
  with more registers (added per dimension in that order, above the tile's registers); each
  dimension larger than the tensor has its largest bases zeroed: those registers, lanes or
  warps hold copies (broadcast).

Results are cached: encodings are interned, layouts immutable.
"""

from __future__ import annotations

from functools import lru_cache

from ....dialects.ttg.attributes import (
    BlockedEncodingAttr,
    DotOperandEncodingAttr,
    LinearEncodingAttr,
    NvidiaMmaEncodingAttr,
    NVMMASharedEncodingAttr,
    SliceEncodingAttr,
    SwizzledSharedEncodingAttr,
)
from .linear_layout import LinearLayout

REGISTER, LANE, WARP, BLOCK, OFFSET = "register", "lane", "warp", "block", "offset"


def dim_names(rank: int) -> list[str]:
    """`dim0, dim1, ...`: the output dimensions of a rank-`rank` tensor's layout."""
    return [f"dim{i}" for i in range(rank)]


def to_linear_layout(encoding, shape) -> LinearLayout:
    """The linear layout of `encoding` over a tensor of `shape` (see the module doc).

    Raises:
        NotImplementedError: for an encoding with no linear layout here (an unswizzled
            nvmma_shared, ...).
        ValueError: when the shape does not suit the encoding.
    """
    return _cached(encoding, tuple(int(d) for d in shape))


@lru_cache(maxsize=4096)
def _cached(encoding, shape: tuple[int, ...]) -> LinearLayout:
    convert = _CONVERSIONS.get(type(encoding))
    if convert is None:
        raise NotImplementedError(f"no linear layout for {encoding}")
    if isinstance(encoding, BlockedEncodingAttr | NvidiaMmaEncodingAttr) and (
        encoding.rank != len(shape)
    ):
        raise ValueError(f"{encoding} does not have rank {len(shape)}")
    for d in shape:
        if d < 1 or d & (d - 1):
            raise ValueError(f"tensor dimensions must be powers of two, got {shape}")
    return convert(encoding, shape)


def identity_nd(in_dim: str, sizes, order) -> LinearLayout:
    """`in_dim` laid over dimensions `sizes`, `order[0]` fastest; outputs in `order`."""
    names = dim_names(len(sizes))
    layout = LinearLayout.empty()
    for d in order:
        layout = layout * LinearLayout.identity1d(sizes[d], in_dim, names[d])
    return layout


def _broadcast_nd(in_dim: str, sizes, order, k_dim: int) -> LinearLayout:
    """As `identity_nd`, but the bits along `k_dim` are broadcast (zero bases): the lanes or
    warps of a dot operand that split K all hold the whole K extent."""
    names = dim_names(len(sizes))
    layout = LinearLayout.empty()
    for d in order:
        make = LinearLayout.zeros1d if d == k_dim else LinearLayout.identity1d
        layout = layout * make(sizes[d], in_dim, names[d])
    return layout


def _fit_to_shape(tile: LinearLayout, cga_layout, shape) -> LinearLayout:
    """The CTA `tile` repeated or broadcast to cover `shape` exactly (module doc), times the
    CTAs' layout (`block`); outputs in the standard order dim0, dim1, ..."""
    names = dim_names(len(shape))
    cga = _cga(cga_layout, len(shape))
    first_in = tile.in_dims[0]
    layout = tile
    per_cta = {}
    for name in tile.out_dims:
        per_cta[name] = max(1, shape[names.index(name)] // cga.out_dim_size(name))
        if per_cta[name] > tile.out_dim_size(name):
            layout = layout * LinearLayout.identity1d(
                per_cta[name] // tile.out_dim_size(name), first_in, name
            )
    # Each CTA's part first, so that CTAs hold distinct elements before threads share them.
    layout = _shrink_to_shape(layout, per_cta)
    layout = (layout * cga).transpose_outs(names)
    return _shrink_to_shape(layout, dict(zip(names, shape)))


def _cga(cga_layout, rank: int) -> LinearLayout:
    """The CTAs' layout: block bits -> CTA-tile coordinates (none: one CTA)."""
    names = dim_names(rank)
    if not cga_layout:
        return LinearLayout({BLOCK: []}, {n: 1 for n in names})
    return LinearLayout({BLOCK: cga_layout}, names)


def _shrink_to_shape(layout: LinearLayout, shape: dict[str, int]) -> LinearLayout:
    """Zero the largest bases of each dimension larger than `shape` (which lists the layout's
    output dimensions in its order): those inputs broadcast.
    Registers are zeroed too, not removed, as Triton 3.8 does: a thread then holds some
    elements twice (duplicate elimination finds them with `free_variable_masks`)."""
    bases = layout.all_bases()
    out_names = layout.out_dims
    for k, name in enumerate(out_names):
        actual = layout.out_dim_size(name)
        wanted = shape[name]
        if actual <= wanted:
            continue
        candidates = [
            (vector[k], in_dim, i)
            for in_dim, vectors in bases.items()
            for i, vector in enumerate(vectors)
            if vector[k]
        ]
        candidates.sort(key=lambda c: -c[0])
        for _, in_dim, i in candidates:
            if actual <= wanted:
                break
            vector = list(bases[in_dim][i])
            vector[k] = 0
            bases[in_dim][i] = tuple(vector)
            actual //= 2
    return LinearLayout(bases, shape)


# -- distributed encodings


def blocked_to_linear_layout(enc: BlockedEncodingAttr, shape) -> LinearLayout:
    """Registers tile `size_per_thread`, then lanes `threads_per_warp`, then warps
    `warps_per_cta`, each over the dimensions in `order`."""
    tile = (
        identity_nd(REGISTER, enc.size_per_thread, enc.order)
        * identity_nd(LANE, enc.threads_per_warp, enc.order)
        * identity_nd(WARP, enc.warps_per_cta, enc.order)
    )
    return _fit_to_shape(tile, enc.cga_layout, shape)


def slice_to_linear_layout(enc: SliceEncodingAttr, shape) -> LinearLayout:
    """The parent's layout over `shape` with a size-1 dimension at `dim`, that dimension then
    dropped; registers left holding nothing are removed, lanes and warps stay (broadcast)."""
    parent_shape = list(shape)
    parent_shape.insert(enc.dim, 1)
    parent = to_linear_layout(enc.parent, parent_shape)
    names = dim_names(len(shape))
    parent_names = dim_names(len(parent_shape))
    bases = {}
    for in_dim, vectors in parent.all_bases().items():
        kept = [tuple(v[: enc.dim] + v[enc.dim + 1 :]) for v in vectors]
        if in_dim == REGISTER:
            kept = [v for v in kept if any(v)]
        bases[in_dim] = kept
    sizes = {n: parent.out_dim_size(p) for n, p in zip(names, _without(parent_names, enc.dim))}
    return LinearLayout(bases, sizes)


def _without(items: list, index: int) -> list:
    return items[:index] + items[index + 1 :]


def _matrix_order(rank: int, row_major: bool) -> list[int]:
    """Dimensions fastest first: the last two swapped unless `row_major`, batch ones last."""
    order = list(range(rank - 1, -1, -1))
    if not row_major:
        order[0], order[1] = order[1], order[0]
    return order


def _mma_tile(tile_shape, k_width: int, order, rep_order) -> LinearLayout:
    """One mma.sync fragment: along the fastest dimension `k_width` registers and 4 lanes,
    along the next 8 lanes, then registers repeating the 8-row group and the
    (`k_width` x 4)-wide column group to fill `tile_shape`."""
    rank = len(tile_shape)
    names = dim_names(rank)
    inner, outer = order[0], order[1]
    rows, cols = tile_shape[outer], tile_shape[inner]
    return (
        identity_nd(REGISTER, [1] * rank, rep_order)
        * LinearLayout.identity1d(k_width, REGISTER, names[inner])
        * LinearLayout.identity1d(4, LANE, names[inner])
        * LinearLayout.identity1d(8, LANE, names[outer])
        * LinearLayout.identity1d(rows // 8, REGISTER, names[outer])
        * LinearLayout.identity1d(cols // (k_width * 4), REGISTER, names[inner])
    )


def _with_warps(tile: LinearLayout, warps: LinearLayout) -> LinearLayout:
    return tile * warps.transpose_outs(tile.out_dims)


def mma_to_linear_layout(enc: NvidiaMmaEncodingAttr, shape) -> LinearLayout:
    """The accumulator of `mma.sync` (version 2): each warp holds a 16x8 tile (two registers
    side by side, two rows 8 apart); warps tile `warps_per_cta`, the last dimension first.
    Version 3 is `wgmma`'s (`wgmma_to_linear_layout`)."""
    if enc.version_major == 3:
        return wgmma_to_linear_layout(enc, shape)
    if enc.version_major != 2:
        raise NotImplementedError(f"nvidia_mma version {enc.version_major} has no layout here")
    rank = len(shape)
    tile = _mma_tile(enc.instr_shape, 2, _matrix_order(rank, True), _matrix_order(rank, True))
    warps = identity_nd(WARP, enc.warps_per_cta, _matrix_order(rank, True))
    return _fit_to_shape(_with_warps(tile, warps), enc.cga_layout, shape)


def wgmma_to_linear_layout(
    enc: NvidiaMmaEncodingAttr, shape, n: int | None = None, k_width: int = 2
):
    """The accumulator of `wgmma` (version 3, `instr_shape` = [16, n, k]): a warp holds 16 rows
    of the instruction's n columns as `mma.sync` holds its 16x8 tile, repeated every 8
    columns (registers); the four warps of a warpgroup stack 64 rows, and warpgroups tile
    `warps_per_cta` rows first, as the instruction's M is theirs. `n` overrides the columns
    one instruction covers (an A operand's: its whole K), `k_width` the consecutive columns a
    lane holds (an A operand's kWidth: four 8-bit elements to a 32-bit register)."""
    if len(shape) != 2:
        raise ValueError(f"{enc} is 2-D, not {len(shape)}-D")
    n = enc.instr_shape[1] if n is None else n
    names = dim_names(2)
    tile = (
        identity_nd(REGISTER, [1, 1], [1, 0])
        * LinearLayout.identity1d(k_width, REGISTER, names[1])
        * LinearLayout.identity1d(4, LANE, names[1])
        * LinearLayout.identity1d(8, LANE, names[0])
        * LinearLayout.identity1d(2, REGISTER, names[0])
        * LinearLayout.identity1d(n // (4 * k_width), REGISTER, names[1])
    )
    warps = identity_nd(WARP, enc.warps_per_cta, [0, 1])
    return _fit_to_shape(_with_warps(tile, warps), enc.cga_layout, shape)


def dot_operand_to_linear_layout(enc: DotOperandEncodingAttr, shape) -> LinearLayout:
    """Operand A (op_idx 0, M x K) or B (K x N) of a dot whose result has layout `parent`."""
    parent = enc.parent
    if isinstance(parent, BlockedEncodingAttr):
        return _fma_operand(enc, parent, shape)
    if isinstance(parent, NvidiaMmaEncodingAttr) and parent.version_major == 2:
        return _mma_operand(enc, parent, shape)
    if isinstance(parent, NvidiaMmaEncodingAttr) and parent.version_major == 3 and not enc.op_idx:
        # wgmma's A from registers: per K step, the mma.sync fragment of A (kWidth columns
        # side by side, rows 8 apart, the next 4 kWidth columns), which for 16-bit elements is
        # the accumulator's layout with K for its columns; B is always read from shared memory.
        return wgmma_to_linear_layout(parent, shape, n=shape[1], k_width=enc.k_width)
    raise NotImplementedError(f"no linear layout for {enc}")


def _mma_operand(enc: DotOperandEncodingAttr, mma: NvidiaMmaEncodingAttr, shape) -> LinearLayout:
    """The mma.sync operand fragments: A is 16 x (8 k_width), B is (8 k_width) x 8, K fastest;
    warps are laid as for the accumulator, broadcast along K."""
    rank = len(shape)
    is_a = enc.op_idx == 0
    tile_shape = [1] * rank
    if is_a:
        tile_shape[-2], tile_shape[-1] = 16, enc.k_width * 8
    else:
        tile_shape[-2], tile_shape[-1] = enc.k_width * 8, 8
    # K fastest: A's order is row-major, B's column-major (also their repetition order).
    order = _matrix_order(rank, is_a)
    tile = _mma_tile(tile_shape, enc.k_width, order, order)
    k_dim = rank - 1 if is_a else rank - 2
    warps = _broadcast_nd(WARP, mma.warps_per_cta, _matrix_order(rank, True), k_dim)
    return _fit_to_shape(_with_warps(tile, warps), mma.cga_layout, shape)


def _fma_operand(enc: DotOperandEncodingAttr, blocked: BlockedEncodingAttr, shape) -> LinearLayout:
    """An FMA dot's operand: the parent's blocked layout, each thread holding the whole K
    extent, lanes and warps along K broadcast."""
    rank = len(shape)
    k_dim = rank - 1 if enc.op_idx == 0 else rank - 2
    per_thread = list(blocked.size_per_thread)
    per_thread[k_dim] = shape[k_dim]
    order = blocked.order
    names = [dim_names(rank)[d] for d in order]
    tile = (
        identity_nd(REGISTER, per_thread, order)
        * _broadcast_nd(LANE, blocked.threads_per_warp, order, k_dim).transpose_outs(names)
        * _broadcast_nd(WARP, blocked.warps_per_cta, order, k_dim).transpose_outs(names)
    )
    return _fit_to_shape(tile, blocked.cga_layout, shape)


def linear_encoding_to_linear_layout(enc: LinearEncodingAttr, shape) -> LinearLayout:
    """The bases as written, fitted to `shape` as every other encoding is: a dimension they
    cover only partly is repeated with registers, one they cover beyond the shape broadcast
    (its largest bases zeroed), as Triton does. The latter is how a layout inferred for one
    shape serves the shapes derived from it (a reduction kept as a size-1 dimension)."""
    names = dim_names(len(shape))
    bases = enc.bases
    if any(len(v) != len(shape) for vectors in bases.values() for v in vectors):
        raise ValueError(f"{enc} does not have rank {len(shape)}")
    return _fit_to_shape(LinearLayout(bases, names), (), shape)


# -- shared encodings


def swizzled_shared_to_linear_layout(enc: SwizzledSharedEncodingAttr, shape) -> LinearLayout:
    """offset -> element: offsets run along `order[0]` (a row), then `order[1]`; the row `r`
    holds its elements with column groups of `vec` XOR-ed by `(r // per_phase) % max_phase`."""
    rank = len(shape)
    names = dim_names(rank)
    cga = _cga(enc.cga_layout, rank)
    per_cta = [max(1, d // cga.out_dim_size(n)) for d, n in zip(shape, names)]
    if rank == 1:
        tile = LinearLayout.identity1d(per_cta[0], OFFSET, names[0])
        return _fit_to_shape(tile, enc.cga_layout, shape)
    col_dim, row_dim = enc.order[0], enc.order[1]
    cols, rows = per_cta[col_dim], per_cta[row_dim]
    bases = [(0, 1 << i) for i in range(cols.bit_length() - 1)]
    for i in range(rows.bit_length() - 1):
        row = 1 << i
        bases.append((row, (enc.vec * ((row // enc.per_phase) % enc.max_phase)) % cols))
    tile = LinearLayout({OFFSET: bases}, {names[row_dim]: rows, names[col_dim]: cols})
    for d in enc.order[2:]:
        tile = tile * LinearLayout.identity1d(per_cta[d], OFFSET, names[d])
    return _fit_to_shape(tile, enc.cga_layout, shape)


def nvmma_shared_to_linear_layout(enc: NVMMASharedEncodingAttr, shape) -> LinearLayout:
    """offset -> element of a 2-D tile: a row holds `swizzling_byte_width` bytes of the
    contiguous dimension, its 16-byte groups XOR-ed by the row's phase as the hardware swizzle
    modes read them (128 bytes: row r's group g at g ^ (r % 8); 64: g ^ (r // 2 % 4); 32:
    g ^ (r // 4 % 2)); all rows of one column block, then the next block."""
    if len(shape) != 2:
        raise ValueError(f"{enc} is 2-D, not {len(shape)}-D")
    if enc.swizzling_byte_width == 0:
        raise NotImplementedError(f"no linear layout for the unswizzled {enc}")
    col_dim, row_dim = enc.order
    cols, rows = shape[col_dim], shape[row_dim]
    row_elements = enc.swizzling_byte_width * 8 // enc.element_bit_width
    if cols < row_elements:
        raise ValueError(f"{enc}: {cols} elements do not fill a row")
    vec = 128 // enc.element_bit_width
    per_phase, max_phase = 128 // enc.swizzling_byte_width, enc.swizzling_byte_width // 16

    def at(row: int, col: int) -> tuple[int, int]:
        return (row, col) if row_dim == 0 else (col, row)

    bases = [at(0, 1 << i) for i in range(row_elements.bit_length() - 1)]
    for i in range(rows.bit_length() - 1):
        row = 1 << i
        bases.append(at(row, vec * ((row // per_phase) % max_phase)))
    bases += [at(0, row_elements << i) for i in range((cols // row_elements).bit_length() - 1)]
    return LinearLayout({OFFSET: bases}, {"dim0": shape[0], "dim1": shape[1]})


_CONVERSIONS = {
    BlockedEncodingAttr: blocked_to_linear_layout,
    SliceEncodingAttr: slice_to_linear_layout,
    NvidiaMmaEncodingAttr: mma_to_linear_layout,
    DotOperandEncodingAttr: dot_operand_to_linear_layout,
    LinearEncodingAttr: linear_encoding_to_linear_layout,
    SwizzledSharedEncodingAttr: swizzled_shared_to_linear_layout,
    NVMMASharedEncodingAttr: nvmma_shared_to_linear_layout,
}


def to_linear_encoding(layout: LinearLayout) -> LinearEncodingAttr:
    """The `#ttg.linear` encoding of a distributed layout (the inverse of the conversion of
    `#ttg.linear`): what a pass writes when no named encoding describes a layout."""
    names = dim_names(len(layout.out_dims))
    layout = layout.transpose_outs(names)
    return LinearEncodingAttr(*(layout.bases(n) for n in (REGISTER, LANE, WARP, BLOCK)))
