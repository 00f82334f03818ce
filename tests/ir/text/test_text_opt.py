"""`naiad-opt FILE | -`: prints the module, runs passes, reports one-line errors."""

import io
import os
import subprocess
import sys

import pytest

from naiad.tools.opt import main

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures")
VECTOR_ADD = os.path.join(FIXTURES, "01_vector_add.ttir")


def run(capsys, *args):
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_prints_a_triton_dump_back(capsys):
    status, out, err = run(capsys, VECTOR_ADD)
    assert status == 0 and err == ""
    with open(VECTOR_ADD) as f:
        assert out == f.read()


def test_runs_passes(capsys):
    status, out, _ = run(
        capsys, os.path.join(FIXTURES, "01_vector_add.source.ttir"), "-p", "cse,dce"
    )
    assert status == 0
    assert out.startswith("#loc = ") and "tt.func public @add_kernel" in out


def test_generic_and_no_locations(capsys, tmp_path):
    target = tmp_path / "out.mlir"
    status, out, _ = run(capsys, VECTOR_ADD, "--generic", "--no-locations", "-o", str(target))
    assert status == 0 and out == ""
    text = target.read_text()
    assert text.startswith('"builtin.module"() ({') and "loc(" not in text


def test_reads_standard_input(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO('module {\n  "x.y"() : () -> ()\n}\n'))
    status, out, _ = run(capsys, "-", "--no-locations")
    assert status == 0 and out == 'module {\n  "x.y"() : () -> ()\n}\n'


@pytest.mark.parametrize(
    "text, expected",
    [
        ("module {\n  %0 = arith.addi %a, : i32\n}\n", "in.mlir:2:23: error: expected SSA operand"),
        (
            "module {\n  %0 = foo.bar %a : i32\n}\n",
            "in.mlir:2:8: error: custom op 'foo.bar' is unknown",
        ),
        ('module {\n  "x.y"(%v) : (i32) -> ()\n}\n', "in.mlir:2:9: error: use of undeclared SSA"),
    ],
)
def test_errors_are_one_line_with_position(capsys, tmp_path, monkeypatch, text, expected):
    source = tmp_path / "in.mlir"
    source.write_text(text)
    monkeypatch.chdir(tmp_path)
    status, out, err = run(capsys, "in.mlir")
    assert status == 1 and out == ""
    assert err.startswith(expected) and err.count("\n") == 1


def test_unknown_pass_and_missing_file(capsys, tmp_path):
    status, _, err = run(capsys, VECTOR_ADD, "-p", "no-such-pass")
    assert status == 1 and "unknown pass 'no-such-pass'" in err and err.count("\n") == 1
    status, _, err = run(capsys, str(tmp_path / "missing.mlir"))
    assert status == 1 and "missing.mlir: error:" in err


def test_verifier_errors_are_one_line(capsys, tmp_path):
    source = tmp_path / "bad.mlir"
    source.write_text(
        'module {\n  tt.func @f(%x: i32) {\n    %0 = arith.addi %x, %x : i32 loc("k.py":3:5)\n'
        "  }\n}\n"
    )
    status, _, err = run(capsys, str(source))
    assert status == 1 and err.count("\n") == 1 and "error:" in err


def test_command_line_entry_point():
    result = subprocess.run(
        [sys.executable, "-m", "naiad.tools.opt", VECTOR_ADD, "--no-locations"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("module {\n  tt.func public @add_kernel(")


def test_lists_passes_without_input(capsys):
    status, out, err = run(capsys, "--list-passes")
    assert status == 0 and err == ""
    lines = out.splitlines()
    names = [line.split()[0] for line in lines if not line.startswith(" ")]
    assert {"canonicalize", "cse", "tt-to-linalg", "cpu-fuse-elementwise", "coalesce"} <= set(names)
    canonicalize = lines.index(next(line for line in lines if line.startswith("canonicalize ")))
    assert "Fold and canonicalize" in lines[canonicalize]
    assert lines[canonicalize + 1].strip() == "max-iterations=10"


def test_no_input_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert exit_info.value.code == 2
    assert "an input file is needed" in capsys.readouterr().err


_PLUGIN = '''
from dataclasses import dataclass

from naiad.ir import Pass, register_pass


@register_pass("test-count-ops")
@dataclass(frozen=True)
class CountOps(Pass):
    """Print how many ops the module holds (a plugin's pass)."""

    def run(self, module):
        print("ops:", sum(1 for _ in module.walk()))
'''


def test_loads_passes_from_a_plugin_file(capsys, tmp_path):
    plugin = tmp_path / "count_plugin.py"
    plugin.write_text(_PLUGIN)
    status, out, err = run(capsys, "--load", str(plugin), "--list-passes")
    assert status == 0 and "test-count-ops  Print how many ops" in out
    status, out, err = run(capsys, VECTOR_ADD, "--load", str(plugin), "-p", "test-count-ops")
    assert status == 0, err
    assert out.startswith("ops: ")


def test_a_plugin_that_does_not_load_is_one_line(capsys):
    status, _, err = run(capsys, "--load", "naiad_no_such_plugin", "--list-passes")
    assert status == 1 and err.startswith("naiad_no_such_plugin: error: cannot load the module")


_DIAGNOSED = """tt.func @f(%x: tensor<16xi32>) {
  // expected-error @+1 {{number of src and dst elements}}
  %a = tt.reshape %x : tensor<16xi32> -> tensor<8xi32>
  tt.return
}
// -----
tt.func @g(%x: i32) {
  tt.return
}
"""


def test_verify_diagnostics_checks_each_part(capsys, tmp_path):
    path = tmp_path / "invalid.mlir"
    path.write_text(_DIAGNOSED)
    status, out, err = run(capsys, str(path), "--split-input-file", "--verify-diagnostics")
    assert status == 0 and err == "" and "tt.func @g" in out
    path.write_text(_DIAGNOSED.replace("number of src", "nothing like"))
    status, _, err = run(capsys, str(path), "--split-input-file", "--verify-diagnostics")
    assert status == 1
    assert "unexpected error: " in err and ":3:8: error: 'tt.reshape' op number of src" in err
    assert "invalid.mlir:3: expected error not produced: {{nothing like" in err
