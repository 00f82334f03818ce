"""docs/ops.md is the table the registries make today (naiad/tools/ops_table.py): an op gained
or lost by an executor shows in the diff of the doc, and a stale doc fails here."""

import pathlib
import subprocess
import sys

from naiad.tools import ops_table

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "ops.md"


def test_docs_ops_table_is_current():
    """Made in a fresh process: tests register toy ops of their own in this one."""
    made = subprocess.run(
        [sys.executable, "-m", "naiad.tools.ops_table"], capture_output=True, text=True, check=True
    ).stdout
    assert DOC.read_text() == made, (
        "docs/ops.md is stale: run `python -m naiad.tools.ops_table > docs/ops.md`"
    )


def test_the_table_reads_the_registries():
    rows = {name: cells for name, *cells in ops_table.rows()}
    assert rows["arith.addi"] == ["yes", "yes", "yes", "yes"]
    assert rows["tt.load"][2:] == ["yes", "yes"]  # CPU and NVIDIA
    # converters registered only as the first conversion imports their modules
    for name in ("tt.dot", "tt.reduce", "tt.get_program_id", "tt.return", "cf.br", "scf.yield"):
        assert rows[name][2] == "yes", name
    assert rows["linalg.generic"] == ["", "", "yes", ""]  # the CPU back end's own
    assert rows["ttg.convert_layout"][3] == "yes"  # the NVIDIA back end's own
