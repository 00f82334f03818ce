"""The layout encodings of the `ttg` dialect: how a tensor's elements are spread over a CTA.

Each is an interned attribute with snake_case parameters (tuples of ints) that the passes compute
with, and Triton 3.8's spelling, which Triton's dumps print and Naiad reads back:

    #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], order = [1, 0]}>
    #ttg.slice<{dim = 1, parent = #blocked}>
    #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 4], instrShape = [16, 8]}>
    #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>
    #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
    #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
    #ttg.linear<{register = [[0, 1]], lane = [[1, 0], ...], warp = [], block = []}>
    #ttg.shared_memory

With several CTAs Triton adds `CGALayout = [[0, 1]]`: one basis per bit of the CTA index, in
units of the CTA's tile (`cga_layout` here; empty means one CTA). `alias_prefix` names the
`#blocked = ...` aliases the printer puts at the top of a module, as Triton's dialect does
(`slice` and `dot_op` print inline, their parents aliased).

What each encoding means - which thread holds which element - is its linear layout
(naiad/backends/nvidia/layouts/conversions.py); this module is data only.
"""  # noqa: E501

from __future__ import annotations

from ...ir import DialectAttribute
from ...ir.attributes import ArrayAttr, BoolAttr, IntegerAttr


def _ints(values) -> tuple[int, ...]:
    return tuple(int(v) for v in values)


def _bases(values) -> tuple[tuple[int, ...], ...]:
    return tuple(_ints(v) for v in values)


def _list(values) -> str:
    return "[" + ", ".join(map(str, values)) + "]"


def _bases_text(bases) -> str:
    return "[" + ", ".join(_list(b) for b in bases) + "]"


def _python(attr):
    """A parsed attribute value as Python data: arrays as lists, integers and bools as such,
    other attributes (a parent encoding) as themselves."""
    if isinstance(attr, ArrayAttr):
        return [_python(a) for a in attr.elements]
    if isinstance(attr, BoolAttr):
        return attr.value
    if isinstance(attr, IntegerAttr):
        return attr.value
    return attr


def _parse_fields(parser, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict:
    """`<{name = value, ...}>` as a dict of Python values, checking the field names."""
    start = parser.lex.pos
    parser.expect("<")
    entries = {k: _python(v) for k, v in parser.parse_attr_dict().items()}
    parser.expect(">")
    missing = [n for n in required if n not in entries]
    unknown = [n for n in entries if n not in required and n not in optional]
    if missing or unknown:
        what = f"missing {missing}" if missing else f"unknown {unknown}"
        raise parser.error(f"invalid encoding fields: {what}", start)
    return entries


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(value, high))


def _cga_text(cga_layout) -> str:
    return f", CGALayout = {_bases_text(cga_layout)}" if cga_layout else ""


class DistributedEncoding(DialectAttribute):
    """An encoding of a tensor in registers: each element held by some (register, lane,
    warp, block) of the CTA."""

    __slots__ = ()
    dialect = "ttg"
    alias_prefix = None


class SharedEncoding(DialectAttribute):
    """An encoding of a tensor in shared memory: where each element is stored."""

    __slots__ = ()
    dialect = "ttg"
    alias_prefix = "shared"


class BlockedEncodingAttr(DistributedEncoding):
    """Each thread holds a `size_per_thread` tile; lanes and then warps tile those, dimensions
    in `order` (fastest first); the CTA's tile repeats over a larger tensor and is broadcast
    over a smaller one."""

    __slots__ = ("size_per_thread", "threads_per_warp", "warps_per_cta", "order", "cga_layout")  # noqa: RUF023
    mnemonic = "blocked"
    alias_prefix = "blocked"

    def __new__(cls, size_per_thread, threads_per_warp, warps_per_cta, order, cga_layout=()):
        fields = (_ints(size_per_thread), _ints(threads_per_warp), _ints(warps_per_cta))
        order = _ints(order)
        if any(len(f) != len(order) for f in fields) or sorted(order) != list(range(len(order))):
            raise ValueError("blocked: fields of different ranks, or order not a permutation")
        return cls._intern(*fields, order, _bases(cga_layout))

    @property
    def rank(self) -> int:
        return len(self.order)

    @classmethod
    def for_shape(cls, shape, size_per_thread, order, num_warps: int, threads_per_warp: int = 32):
        """Triton's builder from a tensor shape (convert-to-ttgir and coalesce use it): along
        `order`, each dimension but the slowest takes as many threads as it has
        `size_per_thread` groups (lanes first, then warps, within what is left); the slowest
        dimension takes the remaining lanes and warps."""
        rank = len(shape)
        lanes = [1] * rank
        warps = [1] * rank
        left_threads = num_warps * threads_per_warp
        left_lanes = threads_per_warp
        left_warps = num_warps
        for d in order[:-1]:
            threads = _clamp(left_threads, 1, max(1, shape[d] // size_per_thread[d]))
            lanes[d] = _clamp(threads, 1, left_lanes)
            warps[d] = _clamp(threads // lanes[d], 1, left_warps)
            left_warps //= warps[d]
            left_lanes //= lanes[d]
            left_threads //= threads
        lanes[order[-1]] = left_lanes
        warps[order[-1]] = left_warps
        return cls(size_per_thread, lanes, warps, order)

    @classmethod
    def default(cls, shape, num_warps: int, threads_per_warp: int = 32):
        """The layout convert-to-ttgir gives every tensor: one element per thread, the last
        dimension fastest."""
        rank = len(shape)
        order = list(range(rank - 1, -1, -1))
        return cls.for_shape(shape, [1] * rank, order, num_warps, threads_per_warp)

    def print_body(self) -> str:
        return (
            f"<{{sizePerThread = {_list(self.size_per_thread)}, "
            f"threadsPerWarp = {_list(self.threads_per_warp)}, "
            f"warpsPerCTA = {_list(self.warps_per_cta)}, order = {_list(self.order)}"
            f"{_cga_text(self.cga_layout)}}}>"
        )

    @classmethod
    def parse_body(cls, parser):
        f = _parse_fields(
            parser, ("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order"), ("CGALayout",)
        )
        return cls(
            f["sizePerThread"], f["threadsPerWarp"], f["warpsPerCTA"], f["order"],
            f.get("CGALayout", ()),
        )  # fmt: skip


class SliceEncodingAttr(DistributedEncoding):
    """The `parent` layout with dimension `dim` removed: threads that differed only along
    `dim` hold the same element (the result of a reduction along `dim`)."""

    __slots__ = ("dim", "parent")
    mnemonic = "slice"

    def __new__(cls, dim: int, parent: DistributedEncoding):
        return cls._intern(int(dim), parent)

    def print_body(self) -> str:
        return f"<{{dim = {self.dim}, parent = {self.parent}}}>"

    @classmethod
    def parse_body(cls, parser):
        f = _parse_fields(parser, ("dim", "parent"))
        return cls(f["dim"], f["parent"])


class NvidiaMmaEncodingAttr(DistributedEncoding):
    """The accumulator of NVIDIA tensor-core instructions: `version_major` 2 is `mma.sync`
    (Ampere, a warp's tile is `instr_shape` = [16, 8]), 3 is Hopper's `wgmma`; warps tile
    the CTA by `warps_per_cta`."""

    __slots__ = ("version_major", "version_minor", "warps_per_cta", "instr_shape", "cga_layout")  # noqa: RUF023
    mnemonic = "nvidia_mma"
    alias_prefix = "mma"

    def __new__(cls, version_major, version_minor, warps_per_cta, instr_shape, cga_layout=()):
        return cls._intern(
            int(version_major),
            int(version_minor),
            _ints(warps_per_cta),
            _ints(instr_shape),
            _bases(cga_layout),
        )

    @property
    def rank(self) -> int:
        return len(self.warps_per_cta)

    def print_body(self) -> str:
        return (
            f"<{{versionMajor = {self.version_major}, versionMinor = {self.version_minor}, "
            f"warpsPerCTA = {_list(self.warps_per_cta)}{_cga_text(self.cga_layout)}, "
            f"instrShape = {_list(self.instr_shape)}}}>"
        )

    @classmethod
    def parse_body(cls, parser):
        f = _parse_fields(
            parser, ("versionMajor", "versionMinor", "warpsPerCTA", "instrShape"), ("CGALayout",)
        )
        return cls(
            f["versionMajor"], f["versionMinor"], f["warpsPerCTA"], f["instrShape"],
            f.get("CGALayout", ()),
        )  # fmt: skip


class DotOperandEncodingAttr(DistributedEncoding):
    """Operand `op_idx` (0: A, 1: B) of a dot whose result has layout `parent`; each thread
    holds `k_width` consecutive elements along K (0 when the parent is blocked: FMA dots)."""

    __slots__ = ("op_idx", "parent", "k_width")  # noqa: RUF023
    mnemonic = "dot_op"

    def __new__(cls, op_idx: int, parent: DistributedEncoding, k_width: int = 0):
        if op_idx not in (0, 1):
            raise ValueError(f"dot_op: opIdx must be 0 or 1, got {op_idx}")
        return cls._intern(int(op_idx), parent, int(k_width))

    def print_body(self) -> str:
        k_width = f", kWidth = {self.k_width}" if self.k_width else ""
        return f"<{{opIdx = {self.op_idx}, parent = {self.parent}{k_width}}}>"

    @classmethod
    def parse_body(cls, parser):
        f = _parse_fields(parser, ("opIdx", "parent"), ("kWidth",))
        return cls(f["opIdx"], f["parent"], f.get("kWidth", 0))


class LinearEncodingAttr(DistributedEncoding):
    """A layout given by its linear-layout bases: for each input bit of (register, lane,
    warp, block), the tensor coordinates it selects."""

    __slots__ = ("register", "lane", "warp", "block")  # noqa: RUF023
    mnemonic = "linear"
    alias_prefix = "linear"

    def __new__(cls, register=(), lane=(), warp=(), block=()):
        return cls._intern(_bases(register), _bases(lane), _bases(warp), _bases(block))

    @property
    def bases(self) -> dict[str, tuple[tuple[int, ...], ...]]:
        return {
            "register": self.register,
            "lane": self.lane,
            "warp": self.warp,
            "block": self.block,
        }

    def print_body(self) -> str:
        fields = ", ".join(f"{k} = {_bases_text(v)}" for k, v in self.bases.items())
        return f"<{{{fields}}}>"

    @classmethod
    def parse_body(cls, parser):
        f = _parse_fields(parser, ("register", "lane", "warp", "block"))
        return cls(f["register"], f["lane"], f["warp"], f["block"])


class SwizzledSharedEncodingAttr(SharedEncoding):
    """Rows stored with their `vec`-element groups XOR-swizzled by the phase
    `(row // per_phase) % max_phase`, to spread accesses over the memory banks; `order` lists
    dimensions fastest first."""

    __slots__ = ("vec", "per_phase", "max_phase", "order", "cga_layout")  # noqa: RUF023
    mnemonic = "swizzled_shared"

    def __new__(cls, vec, per_phase, max_phase, order, cga_layout=()):
        return cls._intern(
            int(vec), int(per_phase), int(max_phase), _ints(order), _bases(cga_layout)
        )

    def print_body(self) -> str:
        return (
            f"<{{vec = {self.vec}, perPhase = {self.per_phase}, maxPhase = {self.max_phase}, "
            f"order = {_list(self.order)}{_cga_text(self.cga_layout)}}}>"
        )

    @classmethod
    def parse_body(cls, parser):
        f = _parse_fields(parser, ("vec", "perPhase", "maxPhase", "order"), ("CGALayout",))
        return cls(f["vec"], f["perPhase"], f["maxPhase"], f["order"], f.get("CGALayout", ()))


class NVMMASharedEncodingAttr(SharedEncoding):
    """The shared layout Hopper's tensor-core instructions (`wgmma`) and TMA read: a 2-D tile
    stored in rows of `swizzling_byte_width` bytes along its contiguous dimension (the last,
    or the first when `transposed`), the 16-byte groups of row r XOR-ed by r's phase, as the
    hardware's 32/64/128-byte swizzle modes address them; a wider contiguous extent is split
    into column blocks of one row's width, each stored whole before the next."""

    __slots__ = ("swizzling_byte_width", "transposed", "element_bit_width", "cga_layout")  # noqa: RUF023
    mnemonic = "nvmma_shared"

    def __new__(cls, swizzling_byte_width, transposed, element_bit_width, cga_layout=()):
        if int(swizzling_byte_width) not in (0, 32, 64, 128):
            raise ValueError(f"nvmma_shared: no {swizzling_byte_width}-byte swizzle")
        return cls._intern(
            int(swizzling_byte_width),
            bool(transposed),
            int(element_bit_width),
            _bases(cga_layout),
        )

    @property
    def order(self) -> tuple[int, int]:
        """The dimensions fastest first (a 2-D tile)."""
        return (0, 1) if self.transposed else (1, 0)

    def print_body(self) -> str:
        transposed = "true" if self.transposed else "false"
        return (
            f"<{{swizzlingByteWidth = {self.swizzling_byte_width}, transposed = {transposed}, "
            f"elementBitWidth = {self.element_bit_width}{_cga_text(self.cga_layout)}}}>"
        )

    @classmethod
    def parse_body(cls, parser):
        f = _parse_fields(
            parser,
            ("swizzlingByteWidth", "transposed", "elementBitWidth"),
            ("CGALayout", "fp4Padded"),
        )
        if f.get("fp4Padded"):
            raise parser.error("nvmma_shared: fp4Padded buffers are not supported")
        return cls(
            f["swizzlingByteWidth"], f["transposed"], f["elementBitWidth"],
            f.get("CGALayout", ()),
        )  # fmt: skip


class SharedMemorySpaceAttr(DialectAttribute):
    """`#ttg.shared_memory`: the memory space of a `!ttg.memdesc` in shared memory."""

    __slots__ = ()
    dialect = "ttg"
    mnemonic = "shared_memory"
    alias_prefix = "smem"

    def __new__(cls):
        return cls._intern()


SHARED_MEMORY = SharedMemorySpaceAttr()
