"""The contract between the semantic layer and a builder (the interpreter's NumPy one, the IR one).

The semantic layer decides types and shapes; a builder only makes values. Handles are opaque to the
semantic layer. Types passed in are language types (`dtypes.dtype` / `block_type`): the result type
of the value to make, already checked. Elementwise operations are named after the TTIR operation
they become (`arith.addi`, `math.exp`, `tt.addptr`, ...), so the IR builder makes exactly that
operation and the NumPy builder keeps one table of their meanings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

Handle = Any

# Elementwise operation names and their attributes, as the semantic layer emits them.
ELEMENTWISE_OPS = {
    # integer and float arithmetic
    "arith.addi": (),
    "arith.addf": (),
    "arith.subi": (),
    "arith.subf": (),
    "arith.muli": (),
    "arith.mulf": (),
    "arith.divf": (),
    "arith.remf": (),
    "arith.negf": (),
    "arith.divsi": (),
    "arith.divui": (),
    "arith.remsi": (),
    "arith.remui": (),
    "arith.andi": (),
    "arith.ori": (),
    "arith.xori": (),
    "arith.shli": (),
    "arith.shrsi": (),
    "arith.shrui": (),
    "arith.maxsi": (),
    "arith.maxui": (),
    "arith.minsi": (),
    "arith.minui": (),
    "arith.maximumf": (),
    "arith.minimumf": (),
    "arith.maxnumf": (),
    "arith.minnumf": (),
    "arith.cmpi": ("predicate",),
    "arith.cmpf": ("predicate",),
    "arith.select": (),
    # conversions
    "arith.extsi": ("src",),
    "arith.extui": ("src",),
    "arith.trunci": ("src",),
    "arith.sitofp": ("src",),
    "arith.uitofp": ("src",),
    "arith.fptosi": ("src",),
    "arith.fptoui": ("src",),
    "arith.extf": ("src",),
    "arith.truncf": ("src",),
    "arith.bitcast": (),
    "tt.fp_to_fp": ("src", "rounding"),
    "tt.bitcast": (),
    "tt.int_to_ptr": (),
    "tt.ptr_to_int": (),
    # pointers and special arithmetic
    "tt.addptr": (),
    "tt.mulhiui": (),
    "tt.precise_sqrt": (),
    "tt.precise_divf": (),
    "tt.clampf": ("propagate_nan",),
    "tt.extern_elementwise": ("symbol", "pure", "libname"),
    # math
    "math.exp": (),
    "math.exp2": (),
    "math.log": (),
    "math.log2": (),
    "math.sin": (),
    "math.cos": (),
    "math.sqrt": (),
    "math.rsqrt": (),
    "math.erf": (),
    "math.floor": (),
    "math.ceil": (),
    "math.absf": (),
    "math.absi": (),
    "math.fma": (),
}


class Builder(Protocol):
    """What a builder provides. Every method returns a new handle unless stated otherwise."""

    # Whether what it builds can hold inline PTX (the IR builder's kernels, compiled for an
    # NVIDIA target); the interpreter executes what it builds, and cannot.
    holds_inline_ptx: bool

    def constant(self, value, ty) -> Handle: ...
    def splat(self, scalar: Handle, ty) -> Handle: ...
    def elementwise(self, op: str, operands: Sequence[Handle], ty, **attrs) -> Handle: ...
    def retype(self, value: Handle, ty) -> Handle: ...  # same bits, other signedness
    def make_range(self, start: int, end: int, ty) -> Handle: ...
    def program_id(self, axis: int) -> Handle: ...
    def num_programs(self, axis: int) -> Handle: ...

    # shapes
    def broadcast(self, value: Handle, ty) -> Handle: ...
    def expand_dims(self, value: Handle, axis: int, ty) -> Handle: ...
    def reshape(self, value: Handle, ty, can_reorder: bool) -> Handle: ...
    def permute(self, value: Handle, order: Sequence[int], ty) -> Handle: ...
    def join(self, lhs: Handle, rhs: Handle, ty) -> Handle: ...
    def split(self, value: Handle, ty) -> tuple[Handle, Handle]: ...
    def cat(self, lhs: Handle, rhs: Handle, ty) -> Handle: ...
    def unsplat(self, value: Handle, ty) -> Handle: ...
    def gather(self, src: Handle, index: Handle, axis: int, ty) -> Handle: ...
    def histogram(self, value: Handle, num_bins: int, mask: Handle | None, ty) -> Handle: ...

    # memory
    def load(
        self,
        ptr: Handle,
        mask: Handle | None,
        other: Handle | None,
        ty,
        cache: str = "",
        evict: str = "",
        volatile: bool = False,
    ) -> Handle: ...
    def store(
        self, ptr: Handle, value: Handle, mask: Handle | None, cache: str = "", evict: str = ""
    ) -> None: ...
    def atomic_rmw(
        self, kind: str, ptr: Handle, value: Handle, mask: Handle, sem: str, scope: str, ty
    ) -> Handle: ...
    def atomic_cas(
        self, ptr: Handle, cmp: Handle, value: Handle, sem: str, scope: str, ty
    ) -> Handle: ...
    def atomic_poll(
        self, ptr: Handle, expected: Handle, timeout: Handle | None, sem: str, scope: str
    ) -> Handle: ...

    # regions: `combine(lhs_handles, rhs_handles, shape) -> handles`
    def reduce(self, values: Sequence[Handle], axis: int, combine: Callable, types) -> list: ...
    def scan(
        self, values: Sequence[Handle], axis: int, reverse: bool, combine: Callable, types
    ) -> list: ...
    # `body(handles, shape) -> handles` calls the mapped function on `pack` elements of each
    # value (value by value); `shape` is () for scalars, or the shape of blocks whose lanes are
    # independent elements (a builder may call it once on whole blocks, so). It returns `pack`
    # handles per result, result by result.
    def map_elementwise(
        self, values: Sequence[Handle], shape: Sequence[int], pack: int, body: Callable
    ) -> list: ...
    def dot(
        self,
        lhs: Handle,
        rhs: Handle,
        acc: Handle,
        input_precision: str,
        max_num_imprecise_acc: int,
        ty,
    ) -> Handle: ...

    # side effects and hints
    def static_print(self, text: str) -> None: ...
    def device_print(self, prefix: str, hex: bool, values: Sequence[Handle], types) -> None: ...
    def device_assert(self, cond: Handle, message: str) -> None: ...
    def inline_asm(
        self,
        asm: str,
        constraints: str,
        values: Sequence[Handle],
        result_types,
        is_pure: bool,
        pack: int,
    ) -> list[Handle]: ...
    def barrier(self) -> None: ...
    def assume(self, cond: Handle) -> None: ...
    def hint(self, value: Handle, kind: str, values: Sequence[int]) -> Handle: ...
    # A descriptor made in the kernel: its tensor map where the target copies its blocks by
    # tensor copies, else None (frontend/tensor_maps.py)
    def tensor_map(
        self, target, base, shape, strides, wide_strides, block_type, padding
    ) -> Any: ...
    # A block pointer's pointers (`ty`, a block of pointers) and bounds mask (the dimensions in
    # `checks`; None if none), from its base, int32/int64 offsets and int64 strides and shape, all
    # at once; None where the builder makes them from operations (block_ptr in memory.py)
    def block_pointers(
        self,
        base: Handle,
        offsets: Sequence[Handle],
        strides: Sequence[Handle],
        shape: Sequence[Handle],
        checks: Sequence[int],
        ty,
    ) -> tuple[Handle, Handle | None] | None: ...
    # Block accesses through such a map (only a builder that made or received one is asked):
    # the loaded block, or None where pointers load it; the store; the block atomic of `kind`
    # (tensor_descriptors.BULK_REDUCTIONS)
    def tensor_map_load(self, tensor_map: Handle, offsets: Sequence[Handle], desc_type) -> Any: ...
    def tensor_map_store(
        self, tensor_map: Handle, offsets: Sequence[Handle], value: Handle
    ) -> None: ...
    def tensor_map_reduce(
        self, tensor_map: Handle, offsets: Sequence[Handle], value: Handle, kind: str
    ) -> None: ...

    # Python protocols (the interpreter answers; a compiler raises)
    def to_python(self, value: Handle, ty, kind: type): ...
    def to_string(self, value: Handle, ty) -> str: ...
