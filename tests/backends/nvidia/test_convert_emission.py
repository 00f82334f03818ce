"""The LLVM IR that `ttg.convert_layout` lowers to, executed for every thread of the CTA.

A small interpreter runs the conversion's instructions (the thread arithmetic of the entry
block, then the body) in lockstep over all threads: each instruction for every thread before
the next, so `bar.sync` holds by construction and `shfl.sync.idx` reads the other lanes'
operands of the same instruction; shared memory is a byte array; a thread that branches
around a block skips it. Values are bit patterns (a float's bitcast is the identity), which is
all a conversion moves. Each thread's source registers start as a value derived from the
element they hold; every destination register must end with its element's value.

This checks what the plan simulator (test_convert_plan.py) cannot: the text the lowering
writes, for each element type.
"""

import random
import re

import pytest
from test_convert_lowering import ELEMENTS, PAIRS, convert_module, convert_ttgir
from test_convert_plan import random_pair
from test_lowering import assemble, count
from test_toolchain import needs_ptxas

from naiad.backends.nvidia import ptx
from naiad.backends.nvidia import target as nv_target
from naiad.backends.nvidia.layouts import LinearLayout, to_linear_encoding, to_linear_layout
from naiad.backends.nvidia.lowering import lower_module
from naiad.backends.nvidia.lowering.context import Context
from naiad.backends.nvidia.lowering.convert_lanes import Shuffle, plan_shuffle
from naiad.backends.nvidia.lowering.convert_plan import Shared, plan_convert
from naiad.backends.nvidia.lowering.emitter import llvm_type
from naiad.dialects.ttg import attributes as attrs
from naiad.ir import FloatType, IntegerAttr, IntegerType, RankedTensorType
from naiad.ir.parser import parse_module
from naiad.ir.types import i32

_WIDTHS = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "half": 16, "bfloat": 16}
_WIDTHS |= {"float": 32, "double": 64, "ptr addrspace(1)": 64}
_TYPE = r"(<\d+ x [^>]+>|ptr addrspace\(\d\)|\w+)"
_BINARY = re.compile(rf"^(\w+)(?: nuw| nsw)* {_TYPE} (\S+), (\S+)$")
_CAST = re.compile(rf"^(zext|trunc|bitcast|ptrtoint|inttoptr) {_TYPE} (\S+) to {_TYPE}$")
_SELECT = re.compile(rf"^select i1 (\S+), {_TYPE} (\S+), {_TYPE} (\S+)$")
_INSERT = re.compile(rf"^insertelement {_TYPE} (\S+), {_TYPE} (\S+), i32 (\d+)$")
_EXTRACT = re.compile(rf"^extractelement {_TYPE} (\S+), i32 (\d+)$")
_LOAD = re.compile(rf"^load {_TYPE}, ptr addrspace\(3\) (\S+), align \d+$")
_STORE = re.compile(rf"^store {_TYPE} (\S+), ptr addrspace\(3\) (\S+), align \d+$")
_GEP = re.compile(r"^getelementptr inbounds i8, ptr addrspace\(3\) @global_smem, i32 (\S+)$")
_SHFL = re.compile(
    r"^call i32 @llvm\.nvvm\.shfl\.sync\.idx\.i32\(i32 -1, i32 (\S+), i32 (\S+), i32 31\)$"
)
_PRMT = re.compile(r"^call i32 @llvm\.nvvm\.prmt\(i32 (\S+), i32 (\S+), i32 (\S+)\)$")
_STMATRIX = re.compile(
    r'^call void asm sideeffect "stmatrix\.sync\.aligned\.m8n8\.x(\d)(\.trans)?\.shared\.b16 '
    r'\[\$0(?:\+(\d+))?\][^"]*", "[^"]*"\((.*)\)$'
)
_OPS = {
    "xor": lambda a, b: a ^ b,
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "shl": lambda a, b: a << b,
    "lshr": lambda a, b: a >> b,
}


def _vector(kind: str) -> tuple[int, int]:
    """(lanes, element bits) of an LLVM type."""
    match = re.fullmatch(r"<(\d+) x ([^>]+)>", kind)
    if match:
        return int(match[1]), _WIDTHS[match[2]]
    return 1, _WIDTHS[kind]


class Machine:
    """All threads of one CTA executing one function body in lockstep; shared memory of
    `scratch` bytes where given (an access past it fails)."""

    def __init__(self, threads: int, scratch: int | None = None):
        self.threads = threads
        self.values = [{} for _ in range(threads)]
        self.memory = {}
        self.scratch = scratch
        self.skipping = [None] * threads  # the label a thread jumped to, until it is reached

    def read(self, tid: int, operand: str):
        if operand.startswith("%"):
            return self.values[tid][operand]
        if operand == "poison":
            return operand
        if operand in ("true", "false"):
            return int(operand == "true")
        return int(operand)

    def run(self, lines: list[str]) -> None:
        for line in lines:
            line = line.strip()
            if line.endswith(":"):  # a label: threads that jumped here resume
                label = line[:-1]
                self.skipping = [None if s == label else s for s in self.skipping]
                continue
            active = [t for t in range(self.threads) if self.skipping[t] is None]
            if line.startswith("br "):
                self._branch(line, active)
            elif line.startswith(("call void @llvm.nvvm.barrier0", "call void @llvm.nvvm.bar.")):
                assert len(active) == self.threads, "a barrier some threads skip"
            elif line.startswith("store "):
                for tid in active:
                    self._store(tid, line)
            elif match := _STMATRIX.match(line):
                self._stmatrix(match, {t // 32 for t in active}, len(active))
            else:
                name, text = line.split(" = ", 1)
                match = _SHFL.match(text)
                if match:
                    self._shuffle(name, match, active)
                    continue
                for tid in active:
                    self.values[tid][name] = self._evaluate(tid, text)

    def _branch(self, line: str, active) -> None:
        match = re.match(r"br i1 (\S+), label %(\S+), label %(\S+)$", line)
        for tid in active:
            if match is None:
                self.skipping[tid] = re.match(r"br label %(\S+)$", line)[1]
            elif not self.read(tid, match[1]):
                self.skipping[tid] = match[3]

    def _shuffle(self, name, match, active) -> None:
        assert len(active) == self.threads, "a shuffle some lanes skip"
        sent = [self.read(t, match[1]) for t in range(self.threads)]
        for tid in active:
            lane = self.read(tid, match[2])
            assert 0 <= lane < 32
            self.values[tid][name] = sent[tid - tid % 32 + lane]

    def _store(self, tid: int, line: str) -> None:
        kind, value, address = _STORE.match(line).groups()
        lanes, bits = _vector(kind)
        value = self.read(tid, value)
        elements = value if lanes > 1 else (value,)
        nbytes = max(bits // 8, 1)
        address = self.read(tid, address)
        assert address % (lanes * nbytes) == 0, "a misaligned vector"
        assert self.scratch is None or address + lanes * nbytes <= self.scratch, "past the scratch"
        for i, element in enumerate(elements):
            self.memory[address + i * nbytes] = element

    def _stmatrix(self, match, warps: set[int], active: int) -> None:
        """`stmatrix` as the PTX manual defines it, by each of the `warps` (whole: `active`
        threads): lane l gives the address of row l % 8 of matrix l / 8; thread t's word of
        matrix m holds row t / 4, columns 2 (t % 4) and 2 (t % 4) + 1 (`.trans`: rows
        2 (t % 4) and 2 (t % 4) + 1, column t / 4)."""
        assert active == 32 * len(warps), "a stmatrix some lanes of a warp skip"
        matrices, trans = int(match[1]), bool(match[2])
        immediate = int(match[3] or 0)  # `[$0+N]`: N bytes past the operand's address
        operands = [o.split()[-1] for o in match[4].split(", ")]
        for warp in sorted(warps):
            lanes = range(32 * warp, 32 * warp + 32)
            address = [self.read(t, operands[0]) + immediate for t in lanes]
            for m in range(matrices):
                rows = address[8 * m : 8 * m + 8]
                assert all(r % 16 == 0 for r in rows), "a row not 16-byte aligned"
                for lane, tid in enumerate(lanes):
                    word = self.read(tid, operands[1 + m])
                    if isinstance(word, int):  # a register of two 16-bit elements
                        word = (word & 0xFFFF, word >> 16)
                    for i, element in enumerate(word):
                        if trans:
                            at = rows[2 * (lane % 4) + i] + 2 * (lane // 4)
                        else:
                            at = rows[lane // 4] + 2 * (2 * (lane % 4) + i)
                        self.memory[at] = element

    def _evaluate(self, tid: int, text: str):
        if text.startswith("call i32 @llvm.nvvm.read.ptx.sreg.tid.x"):
            return tid
        if match := _GEP.match(text):
            return self.read(tid, match[1])
        if match := _LOAD.match(text):
            lanes, bits = _vector(match[1])
            address = self.read(tid, match[2])
            values = tuple(self.memory[address + i * max(bits // 8, 1)] for i in range(lanes))
            return values if lanes > 1 else values[0]
        if match := _CAST.match(text):
            op, kind, value, to = match.groups()
            value = self.read(tid, value)
            if op == "bitcast" and kind != to:
                return _rebox(value, kind, to)
            return value & ((1 << _WIDTHS[to]) - 1) if op == "trunc" else value
        if match := _PRMT.match(text):
            a, b, selector = (self.read(tid, operand) for operand in match.groups())
            pool = a | b << 32
            nibbles = [selector >> 4 * k & 0xF for k in range(4)]
            assert all(n < 8 for n in nibbles), "prmt's sign-replicating mode"
            return sum((pool >> 8 * n & 0xFF) << 8 * k for k, n in enumerate(nibbles))
        if match := _SELECT.match(text):
            return self.read(tid, match[3] if self.read(tid, match[1]) else match[5])
        if match := _INSERT.match(text):
            lanes, _ = _vector(match[1])
            vector = self.read(tid, match[2])
            vector = [None] * lanes if vector == "poison" else list(vector)
            vector[int(match[5])] = self.read(tid, match[4])
            return tuple(vector)
        if match := _EXTRACT.match(text):
            return self.read(tid, match[2])[int(match[3])]
        if text.startswith("icmp "):
            cond, _, a, b = re.match(rf"icmp (\w+) {_TYPE} (\S+), (\S+)$", text).groups()
            a, b = self.read(tid, a), self.read(tid, b)
            return int(a == b) if cond == "eq" else int(a != b)
        op, kind, a, b = _BINARY.match(text).groups()
        result = _OPS[op](self.read(tid, a), self.read(tid, b))
        return result & ((1 << _WIDTHS[kind]) - 1)


def _rebox(value, kind: str, to: str):
    """A bitcast between a vector of integers and one integer (the first element lowest)."""
    if kind.startswith("<"):
        _, bits = _vector(kind)
        return sum(element << bits * i for i, element in enumerate(value))
    lanes, bits = _vector(to)
    if lanes == 1:
        return value  # a float's bits are its value here
    return tuple(value >> bits * i & ((1 << bits) - 1) for i in range(lanes))


def _value(coords: int, bits: int) -> int:
    """The value a thread holds for the element at packed `coords`: distinct where it fits."""
    return (coords * 0x9E3779B1 >> 7) & ((1 << bits) - 1) if bits < 16 else coords + 1


def execute_lowering(op, threads: int, operands, scratch=None) -> tuple[list[list[int]], list[str]]:
    """Lower `op` alone and execute its code for every thread (shared memory of `scratch`
    bytes where given). `operands` are (value, registers, value_of) triples: `value_of(tid, r)`
    is what register r of that operand holds in thread tid. Returns each thread's registers of
    `op.result`, and the code."""
    ctx = Context(threads // 32, 90, None)
    for k, (value, registers, _) in enumerate(operands):
        ctx[value] = [f"%in{k}.{r}" for r in range(registers)]
    ctx.lower_op(op)
    machine = Machine(threads, scratch)
    for tid in range(threads):
        for value, _, value_of in operands:
            for r, name in enumerate(ctx[value]):
                machine.values[tid][name] = value_of(tid, r)
    code = ctx.em.entry + ctx.em.body
    machine.run(code)
    return [[machine.values[t][name] for name in ctx[op.result]] for t in range(threads)], code


def run_conversion(src_t, dst_t, scratch=None):
    """Lower a conversion from `src_t` to `dst_t` alone and execute it, in the rounds that
    `scratch` bytes (planned as allocate-shared-memory does) leave where given; returns (each
    thread's results, the expected ones)."""
    src = to_linear_layout(src_t.encoding, src_t.shape)
    dst = to_linear_layout(dst_t.encoding, dst_t.shape)
    op = _Convert(src_t, dst_t)
    if scratch is not None:
        op.attributes["allocation.size"] = IntegerAttr(scratch, i32)
    threads = 32 * src.in_dim_size("warp")
    bits = _WIDTHS[llvm_type(src_t)]
    registers = src.in_dim_size("register")
    operand = (op.src, registers, lambda tid, r: _value(_held(src, r, tid), bits))
    got, _ = execute_lowering(op, threads, [operand], scratch)
    expected = [
        [_value(_held(dst, r, t), bits) for r in range(dst.in_dim_size("register"))]
        for t in range(threads)
    ]
    return got, expected


class _Value:
    def __init__(self, t):
        self.type = t


class _Convert:
    """What the lowering of a `ttg.convert_layout` reads of its op."""

    name = "ttg.convert_layout"
    next_op = None  # the last op: the barrier that frees the scratch stays owed

    def __init__(self, src_t, dst_t):
        self.src, self.result = _Value(src_t), _Value(dst_t)
        self.attributes = {}


def _held(layout: LinearLayout, register: int, tid: int) -> int:
    return layout.apply_packed({"register": register, "lane": tid % 32, "warp": tid // 32})


@pytest.mark.parametrize("element", ELEMENTS)
@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_emitted_code_delivers_every_element(pair, element):
    module = convert_module(pair, element)
    op = [o for o in module.walk() if o.name == "ttg.convert_layout"][-1]
    got, expected = run_conversion(op.src.type, op.result.type)
    assert got == expected


_ELEMENT_TYPES = {"f32": FloatType("f32"), "f64": FloatType("f64"), "i8": IntegerType(8)}


@pytest.mark.parametrize("rounds", [2, 4])
def test_matmul_accumulator_in_rounds_delivers_every_element(rounds):
    """Tutorial 03's 128 x 256 f32 accumulator (8 warps) to its store layout through a
    scratch of a half or a quarter of the tile, as allocate-shared-memory plans it where the
    whole one does not fit: every element arrives, no access goes past the scratch, a barrier
    between the stores and the loads of each round and one between rounds."""
    mma = attrs.NvidiaMmaEncodingAttr(2, 0, [2, 4], [16, 8])
    blocked = attrs.BlockedEncodingAttr([1, 4], [1, 32], [4, 2], [1, 0])
    types = [RankedTensorType((128, 256), FloatType("f32"), e) for e in (mma, blocked)]
    op = _Convert(*types)
    op.attributes["allocation.size"] = IntegerAttr(128 * 256 * 4 // rounds, i32)
    got, expected = run_conversion(*types, 128 * 256 * 4 // rounds)
    assert got == expected
    ctx = Context(8, 80, None)
    ctx[op.src] = [f"%in.{r}" for r in range(128)]
    ctx.lower_op(op)
    assert sum("llvm.nvvm.barrier0" in line for line in ctx.em.body) == 2 * rounds - 1


def test_random_conversions_run_as_planned():
    """Random layout pairs (shuffles and round trips among them) of f32, f64 and i8."""
    rng = random.Random(11)
    kinds = set()
    for i in range(24):
        src, dst = random_pair(rng)
        element = ("f32", "f64", "i8")[i % 3]
        shape = tuple(src.out_shape.values())
        types = [
            RankedTensorType(shape, _ELEMENT_TYPES[element], to_linear_encoding(layout))
            for layout in (src, dst)
        ]
        kinds.add(type(plan_convert(src, dst, _ELEMENT_TYPES[element].width)))
        got, expected = run_conversion(*types)
        assert got == expected, (src, dst, element)
    assert {Shared, Shuffle} <= kinds


@needs_ptxas
@pytest.mark.parametrize("element", ["i1", "i8", "f16", "bf16"])
def test_narrow_values_shuffle_packed(element, monkeypatch, tmp_path):
    """Rows of 2 to rows of 4 within warps: destination registers 0 and 1 come from one
    lane, so narrow values travel two (16-bit) or four (8-bit) to a shuffle. The shuffle plan
    is forced (a round trip costs less here)."""
    from naiad.backends.nvidia.lowering import convert

    monkeypatch.setattr(
        convert, "plan_convert", lambda src, dst, bits, _: plan_shuffle(src, dst, bits)
    )
    kinds = {"i1": IntegerType(1), "i8": IntegerType(8)}
    kind = kinds.get(element) or FloatType(element)
    encodings = [
        attrs.BlockedEncodingAttr([1, 2], [4, 8], [1, 4], [1, 0]),
        attrs.BlockedEncodingAttr([1, 4], [8, 4], [1, 4], [1, 0]),
    ]
    types = [RankedTensorType((16, 64), kind, e) for e in encodings]
    src, dst = (to_linear_layout(e, (16, 64)) for e in encodings)
    plan = plan_shuffle(src, dst, max(kind.width, 8))
    assert len(plan.packs()) < sum(len(r) for r in plan.rounds)
    got, expected = run_conversion(*types)
    assert got == expected
    if element != "bf16":  # and the kernel around it assembles
        text = [str(e) for e in encodings]
        module = parse_module(convert_ttgir(*text, (16, 64), element))
        llir = lower_module(module, "cuda:sm_80")
        code = ptx.compile_ptx(llir, nv_target.cuda_target("sm_80")).text
        assert count(r"shfl\.sync\.idx\.b32", code) == len(plan.packs())
        assemble(code, "sm_80", tmp_path)
