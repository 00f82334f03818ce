"""The table bench/gpu/tensor_cores.py prints as it goes, and the JSON and markdown it writes with
`--out`. Rows are dicts of measure.py (one per variant, the ratios, "case" and "config")."""

from __future__ import annotations

import json
from pathlib import Path

VARIANTS = ("naiad", "triton_mma", "triton")  # measure.VARIANTS (no torch needed here)

HEADER = (
    "| case | config | Naiad TFLOP/s | Triton mma.sync | Triton default "
    "| Naiad / mma.sync | Naiad / default | rel err (N / mma / def) "
    "| regs/spills (N / mma / def) | instruction (N / mma / def) |"
)
RULE = "|---" * (HEADER.count("|") - 1) + "|"


def _speed(column: dict) -> str:
    if "tflops" in column:
        return f"{column['tflops']:.0f}"
    status = column.get("status", "—")
    if status == "FAIL":
        return "FAIL"
    return "—" if status in ("ok", "no config ran", "—") else "error"


def _ratio(value) -> str:
    return f"{value:.2f}" if value else "—"


def _err(column: dict) -> str:
    error = column.get("rel_err")
    return "—" if error is None else f"{error:.1e}"


def _regs(column: dict) -> str:
    regs, spills = column.get("n_regs"), column.get("n_spills")
    return "—" if regs is None else f"{regs}/{spills}"


def line(row: dict) -> str:
    """One markdown line of `row`."""
    columns = [row.get(v, {}) for v in VARIANTS]
    config = row.get("config", "")
    if config == "best":
        config = "best: " + " / ".join(c.get("config", "—") for c in columns)
    cells = [
        row.get("case", ""),
        config,
        *(_speed(c) for c in columns),
        _ratio(row.get("vs_triton_mma")),
        _ratio(row.get("vs_triton")),
        " / ".join(_err(c) for c in columns),
        " / ".join(_regs(c) for c in columns),
        " / ".join(c.get("instruction", "—") for c in columns),
    ]
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def problems(row: dict) -> list[str]:
    """What went wrong in `row`, one line per column (printed under its table line)."""
    lines = [f"    row: {row['error']}"] if "error" in row else []
    for variant in VARIANTS:
        column = row.get(variant, {})
        status = column.get("status", "ok")
        if status not in ("ok", "no config ran"):
            note = f" ({column['note']})" if "note" in column else ""
            error = f", rel err {column['rel_err']:.2e}" if "rel_err" in column else ""
            lines.append(f"    {variant}: {status}{note}{error}")
    return lines


def markdown(header: str, rows: list) -> str:
    body = [line(row) for row in rows]
    return "\n".join([header, "", HEADER, RULE, *body]) + "\n"


def write(out: Path, header: str, facts: dict, rows: list) -> None:
    """`tensor_cores.json` (every field of every row, and the run's facts) and
    `tensor_cores.md` (the printed table) in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    payload = {"facts": facts, "rows": rows}
    (out / "tensor_cores.json").write_text(json.dumps(payload, indent=1, default=str) + "\n")
    (out / "tensor_cores.md").write_text(markdown(header, rows))
