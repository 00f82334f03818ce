"""Ops that make, reshape and combine whole tensors, and the debug ops.

Each is the interpreter builder's method of the same meaning (`interpreter/builder.py`), which
keeps the provenance of pointer tensors through shape changes, and `interpreter/regions.py` for
reductions, scans and dots: pairwise combining in the same order, so results agree bit for bit
with the interpreter. A combine region runs on whole slices at once; if its control flow needs
one scalar at a time, it falls back to one element at a time, as the interpreter's does.
"""

from __future__ import annotations

import numpy as np

from ...dialects.tt.attributes import InputPrecision
from ...ir import IntegerType, element_type
from ..interpreter import floats
from ..interpreter.memory import Pointers
from .errors import UnsupportedOpError, handles, unsupported
from .values import constant, host_dtype, int_width, lang_type, unsigned, zeros


@handles("arith.constant")
def arith_constant(ev, op, operands):
    """Made once per op and launch (a loop body's constants are not rebuilt each iteration);
    values are never written in place, so sharing them is safe."""
    value = ev.constants.get(op)
    if value is None:
        value = ev.constants[op] = constant(op.value, op.result.type)
    return value


@handles("ub.poison")
def poison(ev, op, operands):
    return zeros(op.result.type)


@handles("tt.make_range")
def make_range(ev, op, operands):
    return ev.builder.make_range(op.start.value, op.end.value, lang_type(op.result.type))


@handles("tt.get_program_id")
def program_id(ev, op, operands):
    return ev.builder.program_id(op.axis_index)


@handles("tt.get_num_programs")
def num_programs(ev, op, operands):
    return ev.builder.num_programs(op.axis_index)


# -- shapes ----------------------------------------------------------------------------------------
@handles("tt.splat")
def splat(ev, op, operands):
    return ev.builder.splat(operands[0], lang_type(op.result.type))


@handles("tt.broadcast")
def broadcast(ev, op, operands):
    return ev.builder.broadcast(operands[0], lang_type(op.result.type))


@handles("ttg.convert_layout")
def convert_layout(ev, op, operands):
    """A layout says which thread holds an element, not its value: TTGIR runs as TTIR."""
    return operands[0]


@handles("tt.expand_dims")
def expand_dims(ev, op, operands):
    return ev.builder.expand_dims(operands[0], op.axis.value, lang_type(op.result.type))


@handles("tt.reshape")
def reshape(ev, op, operands):
    reorder = op.allow_reorder is not None
    return ev.builder.reshape(operands[0], lang_type(op.result.type), reorder)


@handles("tt.trans")
def trans(ev, op, operands):
    return ev.builder.permute(operands[0], list(op.order), lang_type(op.result.type))


@handles("tt.join")
def join(ev, op, operands):
    return ev.builder.join(*operands, lang_type(op.result.type))


@handles("tt.split")
def split(ev, op, operands):
    return list(ev.builder.split(operands[0], lang_type(op.outLHS.type)))


@handles("tt.cat")
def cat(ev, op, operands):
    return ev.builder.cat(*operands, lang_type(op.result.type))


@handles("tt.unsplat")
def unsplat(ev, op, operands):
    return ev.builder.unsplat(operands[0], lang_type(op.result.type))


@handles("tt.gather")
def gather(ev, op, operands):
    src, indices = operands
    return ev.builder.gather(src, indices, op.axis.value, lang_type(op.result.type))


@handles("tt.histogram")
def histogram(ev, op, operands):
    bins = op.result.type.shape[0]
    counts = ev.builder.histogram(operands[0], bins, ev.value(op.mask), lang_type(op.result.type))
    return counts.astype(host_dtype(op.result.type))


# -- regions ---------------------------------------------------------------------------------------
def _arrays(op, operands) -> list:
    if any(isinstance(x, Pointers) for x in operands):
        raise UnsupportedOpError(
            f"the reference evaluator cannot run '{op.name}' on pointer tensors: the "
            "interpreter's combining works on numbers"
        )
    return [np.asarray(x) for x in operands]


def _typed(op, results) -> list:
    return [
        np.asarray(r).astype(host_dtype(v.type), copy=False) for r, v in zip(results, op.results)
    ]


@handles("tt.reduce")
def reduce(ev, op, operands):
    combine = ev.combiner(op.combineOp)
    return _typed(op, ev.builder.reduce(_arrays(op, operands), op.axis.value, combine, None))


@handles("tt.scan")
def scan(ev, op, operands):
    combine = ev.combiner(op.combineOp)
    values = _arrays(op, operands)
    return _typed(op, ev.builder.scan(values, op.axis.value, op.reverse.value, combine, None))


@handles("tt.map_elementwise")
def map_elementwise(ev, op, operands):
    """The scalar region applied to every element (`pack` at a time) as the interpreter applies
    a mapped function: on whole blocks of lanes at once, or group by group when its control flow
    needs scalars."""
    arrays = _arrays(op, operands)
    shape = list(np.broadcast_shapes(*(a.shape for a in arrays)))
    arrays = [np.broadcast_to(a, shape) for a in arrays]

    def body(handles, lanes_shape):
        return ev.run_combine(op.scalarOp, handles)

    return _typed(op, ev.builder.map_elementwise(arrays, shape, op.pack.value, body))


def _dot_operand(value, ir_type):
    """fp8e4b15 is held as its bits (uint8): give the dot its values (fp16, exact)."""
    if floats.numpy_dtype("fp8e4b15") == value.dtype and not isinstance(
        element_type(ir_type), IntegerType
    ):
        return floats.convert(value, "fp8e4b15", "fp16")
    return value


@handles("tt.dot", "ttng.warp_group_dot")
def dot(ev, op, operands):
    """`tt.dot`, and Hopper's `ttng.warp_group_dot`, whose operands are buffers (arrays) and
    whose `useC`, where given and false, leaves the accumulator out."""
    a, b, c = (np.array(x) for x in operands[:3])
    if len(operands) > 3 and not operands[3]:
        c = np.zeros_like(c)
    precision = "ieee" if op.inputPrecision is None else InputPrecision.keyword(op.inputPrecision)
    imprecise = 0 if op.maxNumImpreciseAcc is None else op.maxNumImpreciseAcc.value
    a, b = _dot_operand(a, op.a.type), _dot_operand(b, op.b.type)
    return ev.builder.dot(a, b, c, precision, imprecise, lang_type(op.d.type))


# -- debug -----------------------------------------------------------------------------------------
@handles("tt.print")
def device_print(ev, op, operands):
    """`isSigned` says, per argument, whether its integers print signed."""
    signs = list(op.isSigned) + [1] * len(operands)
    values, types = [], []
    for value, arg, is_signed in zip(operands, op.args, signs):
        ir_type = arg.type
        integer = isinstance(element_type(ir_type), IntegerType) and int_width(ir_type) > 1
        if integer and not is_signed:
            value = unsigned(value, int_width(ir_type))
        values.append(value)
        types.append(lang_type(ir_type, unsigned=integer and not is_signed))
    ev.builder.device_print(op.prefix.value, op.hex.value, values, types)


@handles("tt.assert")
def device_assert(ev, op, operands):
    """Checked whenever it runs: the op is in TTIR only when the kernel was built in debug."""
    ev.builder.device_assert(operands[0], op.message.value)


@handles("llvm.intr.assume")
def assume(ev, op, operands):
    ev.builder.assume(operands[0])


@handles("ttg.barrier", "gpu.barrier")
def barrier(ev, op, operands):
    """Programs run one at a time, each as a whole: there is nothing to wait for."""


unsupported(
    "tt.elementwise_inline_asm",
    why="inline assembly (PTX) runs only on the GPU back end",
)
unsupported(
    "tt.dot_scaled",
    why="block-scaled dots (tl.dot_scaled) have no interpreter meaning in Naiad yet",
)
