"""A text chart of naiad.ops' speed per op against torch, from op_goals.py's printed tables.

    python bench/ops/ratio_chart.py GPU_TABLE.txt [CPU_TABLE.txt ...] [--width 40]

Each file is the standard output of one `op_goals.py` run (its header line names the device).
One bar per case and run, on a log scale centred on 1.0 (`|`): bars to the right of it are
cases where Naiad is faster than torch, to the left slower; each doubling is `width / 4`
characters. The chart is text, so that bench/RESULTS.md shows it as it is and its diffs stay
readable.
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path

# A case row of op_goals.py's table: group, case, "ok" and the check's seconds, the ratio.
_ROW = re.compile(r"^(?P<group>\S+(?: \S+)?)\s{2,}(?P<case>.+?)\s+ok\s+[\d.]+s\s+(?P<ratio>[\d.]+)")
_DEVICE = re.compile(r"^# naiad\.ops vs torch eager: (?P<device>[^,]+)")
_OCTAVES = 2  # the chart spans 1/4 to 4


def read_table(path: Path) -> tuple[str, list[tuple[str, float]]]:
    """(device, [(group and case, torch time / Naiad time)]) of one op_goals.py output."""
    device, rows = path.stem, []
    for line in path.read_text().splitlines():
        if found := _DEVICE.match(line):
            device = found["device"]
        elif found := _ROW.match(line):
            rows.append((f"{found['group']}: {found['case']}", float(found["ratio"])))
    return device, rows


def bar(ratio: float, width: int) -> str:
    """`ratio` as a bar either side of the centre, clipped to the chart's span."""
    half = width // 2
    cells = round(max(-1.0, min(1.0, math.log2(ratio) / _OCTAVES)) * half)
    left = " " * (half - max(0, -cells)) + "█" * max(0, -cells)
    right = "█" * max(0, cells) + " " * (half - max(0, cells))
    return f"{left}|{right}"


def chart(tables: list[tuple[str, list[tuple[str, float]]]], width: int) -> str:
    label_width = max(len(label) for _, rows in tables for label, _ in rows)
    lines = [f"{'':{label_width}}  {'1/4':<{width // 2}}1{'4':>{width // 2}}"]
    for device, rows in tables:
        lines.append(f"-- {device}")
        lines += [f"{label:{label_width}}  {bar(r, width)}  {r:.2f}" for label, r in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tables", nargs="+", type=Path)
    parser.add_argument("--width", type=int, default=40)
    args = parser.parse_args()
    print(chart([read_table(path) for path in args.tables], args.width))


if __name__ == "__main__":
    main()
