"""What a failing program does, out of line: claim the launch's status record, and count the
failing lanes of a bounds check's view.

A kernel calls, only on its failing paths, two functions its module defines once:

    void naiad.fail(ptr status, i32 code, i32 site, i64 pid, ptr info)
        claims the status record with `code` if no program did (abi.py), then writes site and
        pid, and the `STATUS_INFO_SLOTS` values at `info` unless it is null;
    void naiad.bounds.view(ptr info, ptr dims, i64 rank, i64 start, i64 first, i64 last,
                           i64 elements, i64 origin)
        fills the info slots of a view's bounds report (middle/linalg/bounds_checks.py): the
        count of its lanes `start + Σ_d i_d · dims[rank + d]`, `0 <= i_d < dims[d]`, that fall
        outside `[first, last]`, the storage's elements, and the first `SHOWN_OFFSETS` of
        those offsets in row-major lane order, counted from `origin`.

Both are `optnone` (and `cold`, `noinline`): LLVM's pipeline passes over them and code
generation takes its fastest path. Written inline at every check, the claim and the lane loop
made a sixth of the IR of tutorial 06's attention and as much of LLVM's time, for code that
runs once, when a launch fails.
"""

from __future__ import annotations

from llvmlite import ir

from ....middle.linalg.bounds_checks import SHOWN_OFFSETS
from ..abi import (
    STATUS_CODE_OFFSET,
    STATUS_INFO_OFFSET,
    STATUS_INFO_SLOTS,
    STATUS_PID_OFFSET,
    STATUS_SITE_OFFSET,
)
from .function import I8, I32, I64, PTR, FunctionLowering
from .loops import counted_loop, if_then

_FAIL = "naiad.fail"
_VIEW = "naiad.bounds.view"


def fail_site(fl: FunctionLowering, op, message: str, template: bool = False) -> int:
    """The id of a new failure site at `op`'s source location; `message` is shown as it is
    unless it is a `template` over the status record's values (abi.py)."""
    from ....ir import file_line_col

    loc = file_line_col(op.location)
    file, line, column = ("<unknown>", 0, 0) if loc is None else (loc.filename, loc.line, loc.col)
    if not template:
        message = message.replace("{", "{{").replace("}", "}}")
    fl.sites.append((file, line, message, column, fl.kernel))
    return len(fl.sites) - 1


def record_failure(fl: FunctionLowering, code: int, site: int, with_info: bool = False) -> None:
    """Claim the status record with `code` if no program did, then write site and pid (and
    the program's info slots, `with_info`)."""
    b = fl.builder
    info = info_slots(fl) if with_info else ir.Constant(PTR, None)
    function = _helper(fl.module, _FAIL, [PTR, I32, I32, I64, PTR], _build_fail)
    b.call(
        function, [fl.status, ir.Constant(I32, code), ir.Constant(I32, site), fl.linear_pid, info]
    )


def fault_info(fl: FunctionLowering, op) -> None:
    """The middle layer's `call @naiad_bounds_info_<n>(values...)`: keep the values in the
    program's info slots (scratch), which the failing bounds check that follows copies into
    the status record if its program is the one that claims it."""
    b = fl.builder
    slots = info_slots(fl)
    for k, value in enumerate(op.operands[:STATUS_INFO_SLOTS]):
        b.store(fl.value(value), b.gep(slots, [ir.Constant(I64, k)], source_etype=I64))


def view_info(fl: FunctionLowering, op) -> None:
    """The middle layer's `call @naiad_bounds_view_<n>(start, first, last, elements, origin,
    sizes..., strides...)`: the report's values counted by `naiad.bounds.view` into the
    program's info slots."""
    b = fl.builder
    start, first, last, elements, origin, *dims = (fl.value(v) for v in op.operands)
    offset = fl.arena.allocate(max(len(dims), 1) * 8)
    table = b.gep(fl.scratch, [ir.Constant(I64, offset)], source_etype=I8)
    for k, value in enumerate(dims):
        b.store(value, b.gep(table, [ir.Constant(I64, k)], source_etype=I64))
    rank = ir.Constant(I64, len(dims) // 2)
    function = _helper(fl.module, _VIEW, [PTR, PTR] + [I64] * 6, _build_view)
    b.call(function, [info_slots(fl), table, rank, start, first, last, elements, origin])


def info_slots(fl: FunctionLowering) -> ir.Value:
    """The program's info slots (`STATUS_INFO_SLOTS` i64 in scratch, made on first use)."""
    if fl.fault_info is None:
        fl.fault_info = fl.arena.allocate(STATUS_INFO_SLOTS * 8)
    return fl.builder.gep(fl.scratch, [ir.Constant(I64, fl.fault_info)], source_etype=I8)


def _helper(module: ir.Module, name: str, arguments, build) -> ir.Function:
    """The module's `name`, defined by `build(builder, arguments)` on first use."""
    function = module.globals.get(name)
    if function is None:
        function = ir.Function(module, ir.FunctionType(ir.VoidType(), arguments), name)
        function.linkage = "internal"
        for attribute in ("noinline", "optnone", "cold", "nounwind"):
            function.attributes.add(attribute)
        b = ir.IRBuilder(function.append_basic_block("entry"))
        build(b, function.args)
        b.ret_void()
    return function


def _field(b: ir.IRBuilder, base: ir.Value, offset: int) -> ir.Value:
    return b.gep(base, [ir.Constant(I64, offset)], source_etype=I8)


def _build_fail(b: ir.IRBuilder, arguments) -> None:
    status, code, site, pid, info = arguments
    code_ptr = _field(b, status, STATUS_CODE_OFFSET)
    old = b.cmpxchg(code_ptr, ir.Constant(I32, 0), code, "monotonic", "monotonic")
    with if_then(b, b.extract_value(old, 1), name="claimed"):
        b.store(site, _field(b, status, STATUS_SITE_OFFSET))
        b.store(pid, _field(b, status, STATUS_PID_OFFSET))
        with if_then(b, b.icmp_unsigned("!=", info, ir.Constant(PTR, None)), name="info"):
            values = _field(b, status, STATUS_INFO_OFFSET)
            for k in range(STATUS_INFO_SLOTS):
                value = b.load(b.gep(info, [ir.Constant(I64, k)], source_etype=I64), typ=I64)
                b.store(value, b.gep(values, [ir.Constant(I64, k)], source_etype=I64))


def _build_view(b: ir.IRBuilder, arguments) -> None:
    info, dims, rank, start, first, last, elements, origin = arguments

    def dim(k: ir.Value) -> ir.Value:
        return b.load(b.gep(dims, [k], source_etype=I64), typ=I64)

    def slot(k) -> ir.Value:
        return b.gep(
            info, [k if isinstance(k, ir.Value) else ir.Constant(I64, k)], source_etype=I64
        )

    zero, one = ir.Constant(I64, 0), ir.Constant(I64, 1)
    lanes = b.alloca(I64)  # a variable: optnone code keeps it in memory anyway
    b.store(one, lanes)
    with counted_loop(b, 0, rank, name="size") as d:
        size = dim(d)
        product = b.mul(b.load(lanes), size)
        b.store(b.select(b.icmp_signed("<=", size, zero), zero, product), lanes)
    b.store(zero, slot(0))
    b.store(elements, slot(1))
    rest, offset = b.alloca(I64), b.alloca(I64)
    with counted_loop(b, 0, b.load(lanes), name="lane") as lane:
        b.store(lane, rest)
        b.store(start, offset)
        with counted_loop(b, 0, rank, name="axis") as k:  # the last dimension varies fastest
            d = b.sub(b.sub(rank, one), k)
            size, here = dim(d), b.load(rest)
            step = b.mul(b.srem(here, size), dim(b.add(rank, d)))
            b.store(b.add(b.load(offset), step), offset)
            b.store(b.sdiv(here, size), rest)
        at = b.load(offset)
        outside = b.or_(b.icmp_signed("<", at, first), b.icmp_signed(">", at, last))
        with if_then(b, outside, name="outside"):
            count = b.load(slot(0), typ=I64)
            shown = b.icmp_signed("<", count, ir.Constant(I64, SHOWN_OFFSETS))
            with if_then(b, shown, name="shown"):
                b.store(b.sub(at, origin), slot(b.add(count, ir.Constant(I64, 2))))
            b.store(b.add(count, one), slot(0))
