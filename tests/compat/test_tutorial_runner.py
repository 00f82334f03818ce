"""scripts/triton_tutorials.py: a tutorial that prints a red cross for a failed check fails,
though its process exits 0, its detail naming the check; `--log-dir` keeps each run's output."""

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).parents[2] / "scripts" / "triton_tutorials.py"

CROSSED = """
print("M=32, verification naive vs: ")
print("  Torch: ...", end="")
print("\\r  Torch: \\u2705  ")
print("  TMA (warp_specialize=False): ...", end="")
print("\\r  TMA (warp_specialize=False): \\u274c  ")
print("  Persistent: ...", end="")
print("\\r  Persistent: \\u274c  ")
"""


def _runner():
    spec = importlib.util.spec_from_file_location("triton_tutorials", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_printed_failed_check_fails_the_tutorial_and_logs_are_written(tmp_path, capsys):
    tutorials = tmp_path / "triton" / "python" / "tutorials"
    tutorials.mkdir(parents=True)
    (tutorials / "01-checked.py").write_text(CROSSED)
    (tutorials / "02-clean.py").write_text('print("all good \\u2705")\n')
    runner = _runner()
    assert runner.main([str(tmp_path / "triton"), "--log-dir", str(tmp_path / "logs")]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].split()[:2] == ["01-checked.py", "failed"]
    assert rows[0].endswith("2 check(s) printed \u274c, first: TMA (warp_specialize=False): \u274c")
    assert rows[1].split() == ["02-clean.py", "passed"]
    assert rows[2] == "1 of 2 passed"
    log = (tmp_path / "logs" / "01-checked.log").read_text("utf-8")
    assert "Persistent: \u274c" in log and log.endswith("== exit status 0\n")
    assert "all good" in (tmp_path / "logs" / "02-clean.log").read_text("utf-8")
