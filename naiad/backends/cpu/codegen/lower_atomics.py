"""Atomics: `memref.atomic_rmw` as LLVM `atomicrmw` where LLVM has the operation on the
element's representation, else (float maximum / minimum, 16-bit and 8-bit floats held as their
bits) and for `memref.generic_atomic_rmw` (compare-and-swap) a compare-exchange loop: read
the element, compute the new value, `cmpxchg` the bits, retry with what was there if another
thread changed it. Every atomic is acquire-release, as the language's default `sem`; each
returns the value the element held before. Each first publishes the program's streamed stores
(publish.py): another program may wait on the atomic and then read them."""

from __future__ import annotations

from types import SimpleNamespace

from llvmlite import ir

from ....dialects.memref.atomics import AtomicRMWKind
from ..lower_scalar.registry import lower_scalar_op
from ..lower_scalar.types import llvm_type
from .function import FunctionLowering, lowers
from .publish import publish

_ORDER = "acq_rel"
_FAIL_ORDER = "acquire"
_NATIVE = {
    "addi": "add",
    "andi": "and",
    "ori": "or",
    "xori": "xor",
    "maxs": "max",
    "mins": "min",
    "maxu": "umax",
    "minu": "umin",
    "assign": "xchg",
}


def _address(fl: FunctionLowering, op):
    view = fl.value(op.memref)
    return view.address(fl.builder, [fl.value(v) for v in op.indices])


def _bits_type(t: ir.Type) -> ir.IntType:
    if isinstance(t, ir.IntType):
        return t
    return ir.IntType(32 if t == ir.FloatType() else 64)


def compare_exchange_loop(fl: FunctionLowering, address, element: ir.Type, update) -> ir.Value:
    """Atomically replace the element at `address` by `update(old)`; the old value."""
    b = fl.builder
    bits = _bits_type(element)
    first = b.load(address, typ=bits)
    entry = b.block
    loop = b.function.append_basic_block("cas.loop")
    done = b.function.append_basic_block("cas.done")
    b.branch(loop)
    b.position_at_end(loop)
    seen = b.phi(bits)
    seen.add_incoming(first, entry)
    old = seen if element == bits else b.bitcast(seen, element)
    new = update(old)
    new_bits = new if element == bits else b.bitcast(new, bits)
    pair = b.cmpxchg(address, seen, new_bits, _ORDER, _FAIL_ORDER)
    current, swapped = b.extract_value(pair, 0), b.extract_value(pair, 1)
    seen.add_incoming(current, b.block)
    b.cbranch(swapped, done, loop)
    b.position_at_end(done)
    return seen if element == bits else b.bitcast(seen, element)


_COMBINE = {  # what a compare-exchange loop computes for the kinds LLVM has no atomicrmw for
    "addf": "arith.addf",
    "mulf": "arith.mulf",
    "muli": "arith.muli",
    "maximumf": "arith.maximumf",
    "minimumf": "arith.minimumf",
    "maxnumf": "arith.maxnumf",
    "minnumf": "arith.minnumf",
}


@lowers("memref.atomic_rmw")
def _atomic_rmw(fl: FunctionLowering, op) -> None:
    kind = AtomicRMWKind.keyword(op.kind)
    t = op.results[0].type
    element = llvm_type(t)
    address = _address(fl, op)
    value = fl.value(op.value)
    b = fl.builder
    publish(b)
    native = _NATIVE.get(kind)
    if kind == "addf" and isinstance(element, ir.FloatType | ir.DoubleType):
        native = "fadd"
    if native is not None:
        fl.bind(op.results[0], b.atomic_rmw(native, address, value, _ORDER))
        return
    scalar = SimpleNamespace(
        name=_COMBINE[kind],
        results=[SimpleNamespace(type=t)],
        operands=[op.value, op.value],
        attributes={},
        location=op.location,
    )

    def update(old):
        return lower_scalar_op(b, scalar, [old, value], fl.context)[0]

    fl.bind(op.results[0], compare_exchange_loop(fl, address, element, update))


@lowers("memref.generic_atomic_rmw")
def _generic_atomic_rmw(fl: FunctionLowering, op) -> None:
    block = op.atomic_body.entry_block
    element = llvm_type(op.results[0].type)
    publish(fl.builder)

    def update(old):
        fl.bind(block.arguments[0], old)
        for inner in block:
            if inner is block.last_op:
                return fl.value(inner.operands[0])
            fl.lower_op(inner)
        raise AssertionError("generic_atomic_rmw ends with atomic_yield")

    fl.bind(op.results[0], compare_exchange_loop(fl, _address(fl, op), element, update))
