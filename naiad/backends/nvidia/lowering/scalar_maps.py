"""`tt.map_elementwise`: the scalar region inlined once per pack of a thread's registers.

A thread holds its elements in registers (lowering/__init__.py); pack `k` hands the region `k`
consecutive registers of each operand (operand by operand), and its `k` values per result go
back to those registers. Where a thread holds fewer registers than a multiple of `k`, the last
pack is completed with copies of the thread's last register and those results are dropped:
each element's value is the function of its own operands either way. Branches and loops in the
region diverge per thread as any scalar control flow does (control.py).
"""

from __future__ import annotations

from .context import Context, lowers, register_count
from .control import lower_region


@lowers("tt.map_elementwise")
def _map_elementwise(ctx: Context, op) -> None:
    pack = int(op.pack.value)
    count = register_count(op.srcs[0].type)
    operands = [ctx[v] for v in op.srcs]
    block = op.scalarOp.entry_block
    results: list[list[str]] = [[] for _ in op.results]
    for start in range(0, count, pack):
        registers = [min(i, count - 1) for i in range(start, start + pack)]
        arguments = [[values[i]] for values in operands for i in registers]
        returned = lower_region(ctx, block, arguments)
        for k, result in enumerate(results):
            kept = returned[k * pack : k * pack + min(pack, count - start)]
            result += [value for (value,) in kept]
    for result, registers in zip(op.results, results):
        ctx[result] = registers
