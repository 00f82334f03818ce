"""`tt.make_tensor_descriptor` on sm_90: the tensor map of a descriptor made in the kernel
(frontend/tensor_maps.py says which descriptors have one), built by each program in global memory,
where the copy engine reads maps from.

The launch gives the kernel global scratch: a last, hidden parameter (`%global_scratch`) over
`global_scratch_size` bytes per program, which the launcher allocates (runtime/cuda_launcher.py,
through `naiad.set_allocator`'s allocator). A program's maps lie at `scratch + program *
bytes_per_program + index * 128`, `program` its linear id (x fastest) and `index` the map op's
place in the kernel, so no two programs write one map.

A map is assembled in the op's shared scratch, as the `tensormap.replace` instructions write it:
warp 0 zeroes the 128 bytes, thread 0 writes the fields, and warp 0 copies the map to its global
slot with `tensormap.cp_fenceproxy` (a release to the tensor-map proxy) and acquires it there
(`fence.proxy.tensormap::generic.acquire`) before thread 0, the thread that issues every copy
(lowering/tma.py), reads it. The fields are those the launcher gives a host map
(runtime/tensor_maps.py): the tensor's sizes and byte strides innermost first, the box and
swizzle of the block's scratch (`tma.box`), element strides of 1, and the out-of-bounds fill
(zero, or NaN for `padding="nan"`). The element type is numbered as PTX numbers it, which is not
the driver's numbering (bf16 is 10 here, 9 there).
"""

from __future__ import annotations

from ....dialects import tt
from ....dialects.tt.attributes import PaddingOption
from ....dialects.ttg import GlobalScratchAllocOp
from ....ir import FloatType
from ....passes.diagnostics import unsupported
from . import barriers
from .context import Context, lowers
from .emitter import SHARED_PTR
from .tma import box, swizzle_bytes

TENSOR_MAP_BYTES = 128
GLOBAL_SCRATCH = "%global_scratch"
_SWIZZLE_MODES = {32: 1, 64: 2, 128: 3}
_FLOAT_TYPES = {"bf16": 10, "f16": 6, "f32": 7, "f64": 9}
_UNSIGNED_TYPES = {1: 0, 2: 1, 4: 2, 8: 4}  # bytes -> u8, u16, u32, u64: copies move bits
_REPLACE = "tensormap.replace.tile.{}.shared::cta.b1024.{}"


def map_ops(func) -> list:
    """The kernel's `tt.make_tensor_descriptor` ops and the global scratch slots of Triton's
    maps (`ttg.global_scratch_alloc`), in the order their maps are laid out."""
    ops = [op for op in func.walk() if isinstance(op, (tt.MakeTensorDescOp, GlobalScratchAllocOp))]
    for op in ops:
        if isinstance(op, GlobalScratchAllocOp) and (
            op.nbytes.value > TENSOR_MAP_BYTES or TENSOR_MAP_BYTES % op.alignment.value
        ):
            unsupported(op, "global scratch is given out in 128-byte slots, for tensor maps")
    return ops


def scratch_bytes_per_program(func) -> int:
    """The global scratch one program of the kernel needs (its launch metadata)."""
    return TENSOR_MAP_BYTES * len(map_ops(func))


def install(ctx: Context, func) -> list[str]:
    """Give the kernel its global scratch parameter when it makes tensor maps; return the
    hidden parameter's declaration (none without maps)."""
    ops = map_ops(func)
    ctx.tensor_map_slots = {op: index for index, op in enumerate(ops)}
    return [f"ptr addrspace(1) {GLOBAL_SCRATCH}"] if ops else []


def _program_slot(ctx: Context) -> str:
    """This program's first map in the global scratch (a global pointer), computed once."""
    em = ctx.em
    if "tensor_map_slot" not in em.cache:
        ids = {}
        for name in ("ctaid.x", "ctaid.y", "ctaid.z", "nctaid.x", "nctaid.y"):
            intrinsic = f"llvm.nvvm.read.ptx.sreg.{name}"
            em.declare(intrinsic, f"declare i32 @{intrinsic}()")
            ids[name] = em.entry_op(f"call i32 @{intrinsic}()", "pid")
        row = em.entry_op(f"mul i32 {ids['ctaid.z']}, {ids['nctaid.y']}")
        row = em.entry_op(f"add i32 {row}, {ids['ctaid.y']}")
        program = em.entry_op(f"mul i32 {row}, {ids['nctaid.x']}")
        program = em.entry_op(f"add i32 {program}, {ids['ctaid.x']}")
        wide = em.entry_op(f"zext i32 {program} to i64")
        per_program = TENSOR_MAP_BYTES * len(ctx.tensor_map_slots)
        offset = em.entry_op(f"mul i64 {wide}, {per_program}")
        em.cache["tensor_map_slot"] = em.entry_op(
            f"getelementptr i8, ptr addrspace(1) {GLOBAL_SCRATCH}, i64 {offset}"
        )
    return em.cache["tensor_map_slot"]


def element_type_code(element) -> int:
    """The `.elemtype` of a tensor map of `element`s, in PTX's numbering."""
    if isinstance(element, FloatType) and element.kind in _FLOAT_TYPES:
        return _FLOAT_TYPES[element.kind]
    return _UNSIGNED_TYPES[element.width // 8]  # 8-bit floats move as bytes


@lowers("tt.make_tensor_descriptor")
def _make_tensor_descriptor(ctx: Context, op) -> None:
    em = ctx.em
    block = op.result.type.block_type
    nbytes = block.element_type.width // 8
    ctx.need_shared(TENSOR_MAP_BYTES)
    staging = em.shared_address("0")
    index = ctx.tensor_map_slots[op]
    slot = em.op(
        f"getelementptr i8, ptr addrspace(1) {_program_slot(ctx)}, i64 {index * TENSOR_MAP_BYTES}"
    )
    _zero_staging(ctx, staging)
    (rows_size,), (columns_size,) = (ctx[s] for s in op.shape)
    (row_stride,) = ctx[op.strides[0]]
    row_bytes = em.op(f"mul i64 {row_stride}, {nbytes}")
    box_columns, box_rows = box(block.shape, nbytes)
    fields = [  # (field, width, ordinal: the dimension innermost first, value)
        ("global_address", "b64", None, ("ptr addrspace(1)", ctx[op.base][0])),
        ("box_dim", "b32", 0, ("i32", str(box_columns))),
        ("box_dim", "b32", 1, ("i32", str(box_rows))),
        ("global_dim", "b32", 0, ("i32", columns_size)),
        ("global_dim", "b32", 1, ("i32", rows_size)),
        ("global_stride", "b64", 0, ("i64", row_bytes)),  # the row's: the last stride is 1
        ("element_stride", "b32", 0, ("i32", "1")),
        ("element_stride", "b32", 1, ("i32", "1")),
    ]
    swizzle = _SWIZZLE_MODES[swizzle_bytes(block.shape[1], nbytes)]
    fill = 1 if op.padding is not None and PaddingOption.keyword(op.padding) == "nan" else 0
    immediates = (  # the rank less one: two dimensions
        ("rank", 1),
        ("elemtype", element_type_code(block.element_type)),
        ("interleave_layout", 0),
        ("swizzle_mode", swizzle),
        ("fill_mode", fill),
    )
    _write_map(ctx, staging, slot, fields, immediates, acquire=True)
    ctx[op.result] = [em.op(f"addrspacecast ptr addrspace(1) {slot} to ptr")]
    barriers.owe(ctx)  # the staging bytes are free once every warp has passed a barrier


def _zero_staging(ctx: Context, staging: str) -> None:
    """Warp 0 zeroes the 128 bytes at `staging` (shared) where a map is assembled."""
    em = ctx.em
    warp0 = em.op(f"icmp ult i32 {em.tid()}, 32")
    word = em.op(f"shl i32 {em.tid()}, 2")
    em.asm(
        "void", "@$0 st.shared.b32 [$1], 0;", "b,r",
        [("i1", warp0), (SHARED_PTR, em.shared_address(word))],
    )  # fmt: skip
    em.call("void", "llvm.nvvm.bar.warp.sync", [("i32", "-1")])


def _write_map(ctx: Context, staging, slot, fields, immediates, acquire: bool) -> None:
    """Thread 0 writes `fields` ((field, width, ordinal or None, (type, value))) and
    `immediates` ((field, value)) into the zeroed map at `staging`; warp 0 copies it to `slot`
    (global) with a release to the tensor-map proxy, and acquires it there where `acquire`."""
    em = ctx.em
    first = em.op(f"icmp eq i32 {em.tid()}, 0")
    for name, width, dim, value in fields:
        ordinal = "" if dim is None else f"{dim}, "
        text = f"@$0 {_REPLACE.format(name, width)} [$1], {ordinal}$2;"
        constraint = "l" if width == "b64" else "r"
        em.asm("void", text, f"b,r,{constraint}", [("i1", first), (SHARED_PTR, staging), value])
    for name, value in immediates:
        text = f"@$0 {_REPLACE.format(name, 'b32')} [$1], {value};"
        em.asm("void", text, "b,r", [("i1", first), (SHARED_PTR, staging)])
    warp0 = em.op(f"icmp ult i32 {em.tid()}, 32")
    acquired = "@$0 fence.proxy.tensormap::generic.acquire.gpu [$1], 128; " if acquire else ""
    em.asm(
        "void",
        "@$0 tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu"
        ".sync.aligned [$1], [$2], 128; " + acquired +
        "@$0 cp.async.bulk.commit_group; @$0 cp.async.bulk.wait_group.read 0;",
        "b,l,r",
        [("i1", warp0), ("ptr addrspace(1)", slot), (SHARED_PTR, staging)],
    )  # fmt: skip


# -- Triton's spelling: a map made by ops of its own (dialects/ttng/tensor_maps.py) ---------------
@lowers("ttg.global_scratch_alloc")
def _global_scratch_alloc(ctx: Context, op) -> None:
    """This program's slot of the map (`map_ops`), a global pointer."""
    index = ctx.tensor_map_slots[op]
    ctx[op.result] = [
        ctx.em.op(
            f"getelementptr i8, ptr addrspace(1) {_program_slot(ctx)}, "
            f"i64 {index * TENSOR_MAP_BYTES}"
        )
    ]


@lowers("ttng.tensormap_create")
def _tensormap_create(ctx: Context, op) -> None:
    """The map the op's operands and attributes spell, assembled and released as
    `tt.make_tensor_descriptor`'s is; `ttng.tensormap_fenceproxy_acquire` acquires it."""
    ctx.need_shared(TENSOR_MAP_BYTES)
    staging = ctx.em.shared_address("0")
    _zero_staging(ctx, staging)
    fields = [("global_address", "b64", None, ("ptr addrspace(1)", ctx[op.global_address][0]))]
    for name, values, kind in (
        ("box_dim", op.box_dim, "i32"),
        ("global_dim", op.global_dim, "i32"),
        ("global_stride", op.global_stride, "i64"),
        ("element_stride", op.element_stride, "i32"),
    ):
        width = "b64" if kind == "i64" else "b32"
        fields += [(name, width, k, (kind, ctx[v][0])) for k, v in enumerate(values)]
    immediates = [("rank", len(op.box_dim) - 1)]
    immediates += [
        (name, op.attributes[attribute].value)
        for name, attribute in (
            ("elemtype", "elem_type"),
            ("interleave_layout", "interleave_layout"),
            ("swizzle_mode", "swizzle_mode"),
            ("fill_mode", "fill_mode"),
        )
    ]
    _write_map(ctx, staging, ctx[op.desc_ptr][0], fields, immediates, acquire=False)
    barriers.owe(ctx)


@lowers("ttng.tensormap_fenceproxy_acquire")
def _tensormap_acquire(ctx: Context, op) -> None:
    """Every thread acquires the map in the tensor-map proxy (the copies' issuer among them)."""
    text = "fence.proxy.tensormap::generic.acquire.gpu [$0], 128;"
    ctx.em.asm("void", text, "l", [("ptr addrspace(1)", ctx[op.desc_ptr][0])])


@lowers("ttng.reinterpret_tensor_descriptor")
def _reinterpret(ctx: Context, op) -> None:
    """The map's generic address: a descriptor's register (lowering/tma.py). The copies
    through it move its block in the boxes and swizzle of Naiad's rule (`tma.box`), so a map
    the kernel writes itself with other constant ones is refused, where it would be misread."""
    for user, index in op.rawDesc.uses:
        if user.name == "ttng.tensormap_create" and index == 0:
            _check_box(user, op.result.type.block_type)
    (slot,) = ctx[op.rawDesc]
    ctx[op.result] = [ctx.em.op(f"addrspacecast ptr addrspace(1) {slot} to ptr")]


def _check_box(create, block) -> None:
    """Refuse `create` (a `ttng.tensormap_create`) where its constant box or swizzle is not
    the one Naiad's copies of `block` use."""
    nbytes = block.element_type.width // 8
    expected = (
        *box(block.shape, nbytes),
        _SWIZZLE_MODES.get(swizzle_bytes(block.shape[1], nbytes), 0),
    )
    values = [getattr(v.defining_op, "value", None) for v in create.box_dim]
    written = (*(getattr(v, "value", None) for v in values), create.swizzle_mode.value)
    if None not in written and written != expected:
        unsupported(
            create,
            f"this tensor map's box {list(written[:-1])} and swizzle mode {written[-1]} are not "
            f"those Naiad's copies of a {'x'.join(map(str, block.shape))} block use "
            f"({list(expected[:-1])}, swizzle mode {expected[-1]})",
        )
