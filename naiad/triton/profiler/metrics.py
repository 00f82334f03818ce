"""The viewer's metrics: what a profile's nodes hold, summed over each subtree, and what is
derived from it.

A node's value of a metric is inclusive: its own plus its descendants' (a scope's bytes and
flops include those of the kernels launched in it), except `count`, the node's own entries.
Derived metrics, per node:

    time/s, time/ms, time/us, time/ns        the node's time
    avg_time/<unit>                          its time over its count
    cpu_time/<unit>, avg_cpu_time/<unit>     the host's time of a cpu_timed_scope
    flop/s, gflop/s, tflop/s                 flops of every width (flops, flops8 ... flops64)
                                             over the time; flop<W>/s ... those of width W
    byte/s, gbyte/s, tbyte/s                 bytes over the time
    util                                     max(flops at the device's peak, bytes at its
                                             peak bandwidth) as a fraction of the time
                                             (devices.py; GPU profiles only)
    <metric>/%                               the node's share of the root's

Any other name is a metric as recorded, matched without case or unit (`bytes`, `count`,
`time`). A name whose source no node holds is an error that names both.
"""

from __future__ import annotations

import re

from . import devices
from .tree import COUNT, CPU_TIME, TIME, Node

NS_PER_UNIT = {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1.0}
RATE_SCALE = {"": 1.0, "g": 1e9, "t": 1e12}
WIDTHS = (8, 16, 32, 64)
_TIME = re.compile(r"(avg_)?(cpu_)?time/(s|ms|us|ns)")
_FLOPS = re.compile(r"([gt]?)flop(8|16|32|64)?/s")
_BYTES = re.compile(r"([gt]?)byte/s")


def inclusive(root: Node) -> dict:
    """node -> {metric: value over its subtree} (count: the node's own)."""
    sums: dict = {}

    def visit(node: Node) -> dict:
        total = {k: v for k, v in node.metrics.items() if _is_number(v)}
        for child in node.children.values():
            for name, value in visit(child).items():
                if name != COUNT:
                    total[name] = total.get(name, 0) + value
        sums[node] = total
        return total

    visit(root)
    return sums


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def derive(root: Node, name: str, sums: dict, table: dict, where: str) -> dict:
    """node -> the value of metric `name` (None where it has no meaning, as a rate over no
    time). `table` is the profile's device table; `where` names the profile in errors."""
    held = sorted({metric for values in sums.values() for metric in values})

    def need(*sources: str) -> None:
        if not any(source in held for source in sources):
            raise ValueError(
                f"metric {name!r} needs {' or '.join(repr(s) for s in sources)}, which no node "
                f"of {where} holds (it holds: {', '.join(held)})"
            )

    lowered = name.lower()
    if match := _TIME.fullmatch(lowered):
        avg, cpu, unit = match.groups()
        source = CPU_TIME if cpu else TIME
        need(source)
        return {node: _time(values, source, avg, unit) for node, values in sums.items()}
    if match := _FLOPS.fullmatch(lowered):
        scale, width = match.groups()
        sources = [f"flops{width}"] if width else ["flops", *(f"flops{w}" for w in WIDTHS)]
        need(*sources)
        return {node: _rate(values, sources, RATE_SCALE[scale]) for node, values in sums.items()}
    if match := _BYTES.fullmatch(lowered):
        need("bytes")
        return {
            node: _rate(values, ["bytes"], RATE_SCALE[match[1]]) for node, values in sums.items()
        }
    if lowered == "util":
        need("bytes", *(f"flops{w}" for w in WIDTHS))
        need(TIME)
        return {node: _util(values, _device(table, where)) for node, values in sums.items()}
    if lowered.endswith("/%"):
        metric = _recorded(name[:-2], held, where)
        whole = sums[root].get(metric)
        return {node: _share(values.get(metric), whole) for node, values in sums.items()}
    metric = _recorded(name, held, where)
    return {node: values.get(metric) for node, values in sums.items()}


def _recorded(name: str, held: list, where: str) -> str:
    """The recorded metric `name` names, matched without case or unit."""
    wanted = name.lower()
    for metric in held:
        if wanted in (metric.lower(), metric.split("(")[0].strip().lower()):
            return metric
    raise ValueError(f"metric {name!r} is not in {where} (it holds: {', '.join(held)})")


def _time(values: dict, source: str, avg, unit: str):
    ns = values.get(source)
    if ns is None:
        return None
    if avg:
        count = values.get(COUNT)
        return ns / count / NS_PER_UNIT[unit] if count else None
    return ns / NS_PER_UNIT[unit]


def _rate(values: dict, sources: list, scale: float):
    ns = values.get(TIME)
    if not ns:
        return None
    return sum(values.get(source, 0) for source in sources) / (ns * 1e-9) / scale


def _share(value, whole):
    return None if value is None or not whole else 100.0 * value / whole


def _device(table: dict, where: str) -> dict:
    gpus = table.get("CUDA") or {}
    if not gpus:
        raise ValueError(f"metric 'util' needs the GPU's peak rates: {where} was not timed on one")
    return next(iter(gpus.values()))


def _util(values: dict, device: dict):
    ns = values.get(TIME)
    if not ns:
        return None
    flops = sum(
        values.get(f"flops{w}", 0) / devices.peak_flops(device, w)
        for w in WIDTHS
        if values.get(f"flops{w}")
    )
    memory = values.get("bytes", 0) / devices.peak_bytes(device)
    return max(flops, memory) / (ns * 1e-9)
