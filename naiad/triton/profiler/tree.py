"""A profile's tree: one node per scope or kernel name under its parent, with the node's
metrics, and its text as Proton's viewer reads it (`<name>.hatchet`).

The file is JSON: a list of the root node and the device table. A node is
`{"frame": {"name": ..., "type": "function"}, "metrics": {...}, "children": [...]}`; its
metrics are its own (exclusive), as hatchet's literal format has them, so that a reader that
sums a subtree (the viewer here, hatchet's `update_inclusive_columns`) gets the inclusive
value: "time (ns)" is the node's measured time less its children's, "count" the times it was
entered, every other metric (bytes, flops16, ...) the sum of what its entries passed. The
device table is `{"CUDA": {"0": {"arch", "num_sms", "clock_rate", "memory_clock_rate",
"bus_width"}}}` (kHz and bits, as the CUDA driver gives them), empty on the CPU.
"""

from __future__ import annotations

import json

TIME = "time (ns)"
CPU_TIME = "cpu_time (ns)"
COUNT = "count"
ROOT = "ROOT"


class Node:
    """A scope or kernel of the profile: its `metrics` (time in ns where measured, count,
    what the user or the kernel's launch metadata passed) and its children by name."""

    __slots__ = ("children", "metrics", "name")

    def __init__(self, name: str):
        self.name = name
        self.metrics: dict = {}
        self.children: dict[str, Node] = {}

    def child(self, name: str) -> Node:
        """The child named `name`, made on first use (a name entered twice is one node)."""
        found = self.children.get(name)
        if found is None:
            found = self.children[name] = Node(name)
        return found

    def add(self, metrics) -> None:
        """Sum `metrics` (name -> number) into the node's."""
        for name, value in metrics.items():
            self.metrics[name] = self.metrics.get(name, 0) + value

    def walk(self, depth: int = 0):
        """(node, depth) of the subtree, parents before children, children in entry order."""
        yield self, depth
        for node in self.children.values():
            yield from node.walk(depth + 1)


def to_literal(node: Node, measured: dict) -> dict:
    """`node` as the file's JSON object; `measured` has each node's measured time (its own
    entries', children's included), of which the file keeps what its children's leave."""
    metrics = dict(node.metrics)
    own = measured.get(node)
    if own is not None:
        inner = sum(measured.get(child, 0) for child in node.children.values())
        metrics[TIME] = max(own - inner, 0)
    return {
        "frame": {"name": node.name, "type": "function"},
        "metrics": metrics,
        "children": [to_literal(child, measured) for child in node.children.values()],
    }


def from_literal(literal: dict) -> Node:
    """The node a file's JSON object describes (exclusive metrics, as written)."""
    node = Node(literal["frame"]["name"])
    node.metrics = dict(literal.get("metrics", {}))
    for child in literal.get("children", []):
        made = from_literal(child)
        node.children[made.name] = made
    return node


def write(path: str, root: Node, measured: dict, devices: dict) -> None:
    with open(path, "w") as f:
        json.dump([to_literal(root, measured), devices], f, indent=1)


def read(path: str) -> tuple[Node, dict]:
    """The root and the device table of a profile file."""
    with open(path) as f:
        database = json.load(f)
    if not isinstance(database, list) or len(database) != 2:
        raise ValueError(f"{path}: not a profile (a JSON list of the tree and the device table)")
    return from_literal(database[0]), database[1]
