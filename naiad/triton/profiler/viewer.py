"""`triton.profiler.viewer`: read a profile (`<name>.hatchet`, tree.py), derive the metrics
asked for (metrics.py) and print the tree with them.

    tree, metrics = viewer.parse(["tflop16/s", "time/ms"], "matmul.hatchet")
    viewer.print_tree(tree, metrics)

prints one line per node, the metrics' values right-aligned in columns under a header, then
the node's name drawn in its tree:

       tflop16/s      time/ms  name
         612.410     1120.503  ROOT
         655.120      104.880  |- cublas [M=8192, N=8192, K=512]

`python -m naiad.triton.profiler.viewer -m tflop16/s,time/ms matmul.hatchet` (or
`triton.profiler.viewer` under the switch) prints the same; `-l` lists the metrics a file holds.
"""

from __future__ import annotations

import argparse
import re
import sys

from . import metrics as derived
from .tree import Node
from .tree import read as read_file

WIDTH = 12


class Profile:
    """A profile read and derived: its root, the device table, and per metric asked for the
    value of each node; `shown` the nodes the filters keep (every node without them)."""

    def __init__(self, root: Node, table: dict, path: str):
        self.root, self.table, self.path = root, table, path
        self.sums = derived.inclusive(root)
        self.values: dict[str, dict] = {}
        self.shown = {node for node, _ in root.walk()}

    def value(self, metric: str, node: Node):
        return self.values[metric].get(node)


def read(filename: str) -> tuple[Profile, list[str], dict]:
    """The profile in `filename`, the metrics its nodes hold, and its device table."""
    root, table = read_file(filename)
    profile = Profile(root, table, filename)
    held = sorted({metric for values in profile.sums.values() for metric in values})
    return profile, held, table


def parse(metrics, filename: str, include=None, exclude=None, threshold=None):
    """(the profile, the metric names as given) with `metrics` derived for every node. The
    filters keep the paths through nodes whose name matches `include` (a regular expression),
    drop the nodes matching `exclude` with what is under them, and those whose first metric is
    under `threshold`. Raises ValueError naming a metric that cannot be derived."""
    profile, _, table = read(filename)
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    for name in names:
        profile.values[name] = derived.derive(profile.root, name, profile.sums, table, filename)
    profile.shown = _kept(profile, names[0], include, exclude, threshold)
    return profile, names


def _kept(profile: Profile, first: str, include, exclude, threshold) -> set:
    kept = set()

    def visit(node: Node, through: bool) -> bool:
        """Whether the subtree has a node kept; `through`: a matching ancestor was passed."""
        if exclude and re.search(exclude, node.name):
            return False
        value = profile.value(first, node)
        if threshold is not None and (value is None or value < threshold):
            return False
        through = through or not include or bool(re.search(include, node.name))
        below = [visit(child, through) for child in node.children.values()]
        if through or any(below):
            kept.add(node)
            return True
        return False

    visit(profile.root, False)
    return kept


def print_tree(tree: Profile, metrics, depth: int = 100, format=None, print_sorted=False):
    """Print the tree's nodes down to `depth` with `metrics` (names `parse` derived), then,
    with `print_sorted`, every node but the root by the first metric, largest first.
    `format` is accepted for Proton's frame-name styles: names here are scopes' and kernels',
    printed whole."""
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    print("".join(f"{name:>{WIDTH}} " for name in names) + " name")
    _print_node(tree, tree.root, names, "", "", depth)
    if print_sorted:
        print(f"Sorted by {names[0]}:")
        nodes = [node for node, _ in tree.root.walk() if node is not tree.root]
        nodes = [node for node in nodes if node in tree.shown]
        nodes.sort(key=lambda node: tree.value(names[0], node) or 0, reverse=True)
        for node in nodes:
            print(f"{_cell(tree.value(names[0], node))} {node.name}")


def _print_node(tree: Profile, node: Node, names, lead: str, branch: str, depth: int) -> None:
    cells = "".join(_cell(tree.value(name, node)) + " " for name in names)
    print(f"{cells} {lead}{branch}{node.name}")
    if depth <= 0:
        return
    children = [child for child in node.children.values() if child in tree.shown]
    inner = lead + ("|  " if branch == "|- " else "   " if branch else "")
    for index, child in enumerate(children):
        last = index == len(children) - 1
        _print_node(tree, child, names, inner, "`- " if last else "|- ", depth - 1)


def _cell(value) -> str:
    if value is None:
        return f"{'-':>{WIDTH}}"
    if isinstance(value, int):
        return f"{value:>{WIDTH}}"
    return f"{value:>{WIDTH}.3f}"


def show_metrics(filename: str) -> None:
    """Print the metrics the nodes of `filename` hold."""
    _, held, _ = read(filename)
    print("Available metrics:")
    for metric in held:
        print(f"- {metric.split('(')[0].strip().lower()}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Print a profile's tree with its metrics.")
    parser.add_argument("file")
    parser.add_argument("-l", "--list", action="store_true", help="list the metrics it holds")
    parser.add_argument("-m", "--metrics", default="time/ms", help="comma-separated metrics")
    parser.add_argument("-i", "--include", help="keep the paths through names matching this")
    parser.add_argument("-e", "--exclude", help="drop the names matching this, and below")
    parser.add_argument("-t", "--threshold", type=float, help="drop under this first metric")
    parser.add_argument("-d", "--depth", type=int, default=100)
    parser.add_argument("--print-sorted", "--print_sorted", action="store_true")
    options = parser.parse_args(argv)
    if options.list:
        show_metrics(options.file)
        return 0
    tree, names = parse(
        options.metrics.split(","),
        options.file,
        options.include,
        options.exclude,
        options.threshold,
    )
    print_tree(tree, names, options.depth, print_sorted=options.print_sorted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
