"""Debug mode's bounds checks: every global access through an argument's pointer is checked
against that argument's extent before it happens.

With `debug` (`NAIAD_DEBUG=1` or `debug=True` at launch), every pointer argument of the kernel
brings two hidden `i64` parameters, its *extent*: the bytes `[low, high)` around the pointer
that the tensor's storage allows (`low <= 0` for a view into a larger buffer). They follow the
kernel's own parameters, in the order of the pointers - the CPU path's convention
(naiad/middle/linalg/bounds_checks.py); runtime/cuda_launcher.py passes them.

**Which argument a pointer comes from.** Before lowering, each pointer value of the kernel is
traced to the argument it derives from (`trace_bases`): through `tt.addptr` chains, `splat`,
`broadcast`, `expand_dims`, `reshape`, `trans`, `join`/`cat`/`split`, `gather`, layout
conversions and `arith.select` (when every pointer operand comes from the same argument), and
through the values `scf.for`, `scf.while` and `scf.if` carry or merge (a loop-carried pointer
keeps its argument when every iteration yields a pointer from that argument). Block pointers and
tensor descriptors arrive here already materialized as such chains. A pointer that cannot be
traced - made from an integer (`tt.int_to_ptr`), loaded from memory, merged from two arguments,
or made by an op not listed above - is **not checked**: the check would have no extent to use.

**The check.** For each vector the access moves (`width` consecutive elements, memory.py), the
offset of its first byte from the argument's pointer must be at least `low`, and the end of its
last element at most `high`, for every vector whose predicate (the mask) is on. A thread with a
failing vector calls `__assertfail` with the access's `file:line` and the interpreter's message
without the offsets (runtime values: `out-of-bounds load through argument `x`: ...`), and the
failing vectors are taken out of the access's predicate, so an out-of-bounds store or atomic
writes nothing and a load reads nothing. Masked-off lanes are never reported. The launch then
fails with CUDA's device-side assert, which leaves the context unusable, as any device assert.
"""

from __future__ import annotations

from dataclasses import dataclass

from ....dialects.tt.types import PointerType
from ....ir.locations import NameLoc, file_line_col
from .context import Context
from .debug_ops import string_constant
from .emitter import GLOBAL_PTR, bit_width, element_of
from .guards import predicated

# Ops whose pointer results address the same argument as their pointer operands.
_VIEWS = frozenset(
    {
        "tt.addptr",
        "tt.splat",
        "tt.broadcast",
        "tt.expand_dims",
        "tt.reshape",
        "tt.trans",
        "tt.bitcast",
        "tt.join",
        "tt.cat",
        "tt.split",
        "tt.unsplat",
        "tt.gather",
        "ttg.convert_layout",
        "arith.select",
    }
)
_WHAT = {
    "tt.load": "load",
    "tt.store": "store",
    "tt.atomic_rmw": "atomic",
    "tt.atomic_cas": "atomic",
    "tt.atomic_poll": "atomic_poll",
}
_UNSEEN = object()  # not reached yet by the tracing: compatible with any argument


def _is_pointer(value) -> bool:
    return isinstance(element_of(value.type), PointerType)


def _flows(func) -> list[tuple[object, tuple | None]]:
    """(value, sources) for every pointer value the kernel makes: the value derives from the
    argument all `sources` derive from (None: from no argument that can be known)."""
    flows = []

    def add(value, sources):
        if _is_pointer(value):
            flows.append((value, sources))

    for op in func.walk():
        if op.name in _VIEWS:
            sources = tuple(v for v in op.operands if _is_pointer(v))
            for result in op.results:
                add(result, sources)
        elif op.name == "scf.for":
            carried = op.region.block.arguments[1:]
            yielded = op.region.block.terminator.operands
            for init, arg, out, result in zip(op.initArgs, carried, yielded, op.results):
                add(arg, (init, out))
                add(result, (arg,))
        elif op.name == "scf.while":
            forwarded = op.before.block.terminator.operands[1:]
            yielded = op.after.block.terminator.operands
            for init, arg, out in zip(op.inits, op.before.block.arguments, yielded):
                add(arg, (init, out))
            for value, arg, result in zip(forwarded, op.after.block.arguments, op.results):
                add(arg, (value,))
                add(result, (value,))
        elif op.name == "scf.if":
            arms = [r.block.terminator.operands for r in (op.thenRegion, op.elseRegion) if r.blocks]
            for i, result in enumerate(op.results):
                add(result, tuple(arm[i] for arm in arms))
        else:
            for result in op.results:
                add(result, None)
    return flows


def _meet(a, b):
    if a is _UNSEEN:
        return b
    if b is _UNSEEN or a == b:
        return a
    return None


def trace_bases(func, arguments) -> dict:
    """The index in `arguments` (the kernel's pointer arguments) of the argument each pointer
    value of `func` derives from; untraced values are absent (see the module doc).

    An optimistic fixed point: every value starts unseen and only descends, unseen -> one
    argument -> none, so a loop-carried pointer keeps its argument unless some iteration
    yields another."""
    state = {arg: k for k, arg in enumerate(arguments)}
    flows = _flows(func)
    changed = True
    while changed:
        changed = False
        for value, sources in flows:
            found = None
            if sources is not None:
                found = _UNSEEN
                for source in sources:
                    found = _meet(found, state.get(source, _UNSEEN))
            old = state.get(value, _UNSEEN)
            new = _meet(old, found)
            if new != old:
                state[value] = new
                changed = True
    return {value: base for value, base in state.items() if isinstance(base, int)}


@dataclass(frozen=True)
class Extent:
    """One pointer argument as the checks see it: its LLVM value and its hidden extent."""

    name: str  # the argument's name, for the message
    pointer: str
    low: str
    high: str


def _argument_name(arg, index: int) -> str:
    """The argument's name (its name location, as the launcher names it), else `arg<index>`."""
    return arg.location.name if isinstance(arg.location, NameLoc) else f"arg{index}"


class BoundsChecks:
    """The checks of one kernel: which argument each pointer derives from, and the extents."""

    def __init__(self, func, extents: list[Extent], bases: dict):
        self.kernel = func.sym_name.value
        self.extents = extents
        self.bases = bases

    def guard(self, ctx: Context, op, masks: list[str] | None, width: int) -> list[str] | None:
        """Check access `op` (a load, store or atomic whose pointers are `ctx[op.ptr]`, moved
        `width` registers at a time under `masks`, None: all on); the masks the access must
        use instead: the vectors found outside the extent are off."""
        k = self.bases.get(op.ptr)
        if k is None:
            return masks
        em = ctx.em
        extent = self.extents[k]
        pointee = element_of(op.ptr.type).pointee_type
        size = bit_width(pointee) // 8
        base = self._entry_value(
            em, ("extent-base", k), f"ptrtoint {GLOBAL_PTR} {extent.pointer} to i64"
        )
        last = self._entry_value(em, ("extent-last", k, size), f"sub i64 {extent.high}, {size}")
        ptrs = ctx[op.ptr]
        checked, failing = [], None
        for start in range(0, len(ptrs), width):
            first = em.op(f"ptrtoint {GLOBAL_PTR} {ptrs[start]} to i64")
            end = em.op(f"ptrtoint {GLOBAL_PTR} {ptrs[start + width - 1]} to i64")
            above = em.op(f"icmp sge i64 {em.op(f'sub i64 {first}, {base}')}, {extent.low}")
            below = em.op(f"icmp sle i64 {em.op(f'sub i64 {end}, {base}')}, {last}")
            inside = em.op(f"and i1 {above}, {below}")
            active = masks[start] if masks is not None else "true"
            outside = em.op(f"xor i1 {inside}, true")
            if active != "true":
                inside = em.op(f"and i1 {active}, {inside}")
                outside = em.op(f"and i1 {active}, {outside}")
            failing = outside if failing is None else em.op(f"or i1 {failing}, {outside}")
            checked += [inside] * min(width, len(ptrs) - start)
        self._report(ctx, op, extent, failing)
        return checked

    @staticmethod
    def _entry_value(em, key, text: str) -> str:
        if key not in em.cache:
            em.cache[key] = em.entry_op(text, "extent")
        return em.cache[key]

    def _report(self, ctx: Context, op, extent: Extent, failing: str) -> None:
        """`__assertfail` with the interpreter's message where `failing` holds."""
        message = (
            f"out-of-bounds {_WHAT[op.name]} through argument `{extent.name}`: active lane(s) "
            "address element offset(s) outside its storage"
        )
        where = file_line_col(op.location)
        filename, line = (where.filename, where.line) if where is not None else ("<unknown>", 0)
        args = [
            ("ptr", string_constant(ctx, message, "bounds.msg")),
            ("ptr", string_constant(ctx, filename, "assert.file")),
            ("i32", str(line)),
            ("ptr", string_constant(ctx, self.kernel, "assert.func")),
            ("i64", "1"),
        ]
        em = ctx.em
        predicated(ctx, failing, lambda: em.call("void", "__assertfail", args), "bounds")


def install(ctx: Context, func) -> list[str]:
    """Set up the checks of kernel `func` on `ctx` (`ctx.bounds`); return the hidden
    parameters' declarations, after the kernel's own."""
    extents, params, arguments = [], [], []
    for index, arg in enumerate(func.body.block.arguments):
        if not isinstance(arg.type, PointerType):
            continue
        k = len(arguments)
        low, high = f"%extent.low.{k}", f"%extent.high.{k}"
        params += [f"i64 {low}", f"i64 {high}"]
        extents.append(Extent(_argument_name(arg, index), ctx[arg][0], low, high))
        arguments.append(arg)
    ctx.bounds = BoundsChecks(func, extents, trace_bases(func, arguments))
    return params
