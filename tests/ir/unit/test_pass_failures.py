"""A pass that fails, or leaves invalid IR behind, is reported as a PassFailure that names the
pass and the file holding the IR; the exceptions the caller expects pass through untouched.
(tests/errors/test_internal_errors.py: the compiler reports a PassFailure as an InternalError.)"""

import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from ir_toy import ConstantOp, FuncOp, ReturnOp

from naiad.errors import CompilationError, NaiadError
from naiad.ir import (
    IntegerAttr,
    ModuleOp,
    Pass,
    PassManager,
    StringAttr,
    VerificationError,
    i32,
    register_pass,
)
from naiad.ir.equality import difference
from naiad.ir.parser import parse_module
from naiad.ir.passes import PassFailure
from naiad.ir.printer import print_module
from naiad.tools.opt import main as naiad_opt


def _add_constant(func, value: int) -> None:
    """A constant before the return of `func`."""
    block = func.body.block
    block.insert_before(ConstantOp(value=IntegerAttr(value, i32), result=i32), block.last_op)


@register_pass("toy-crash")
@dataclass(frozen=True)
class ToyCrash(Pass):
    """Changes the module (a constant 4242 before the return), then hits a bug."""

    def run(self, module):
        _add_constant(module.body.first_op, 4242)
        raise ZeroDivisionError("a bug in the pass")


@register_pass("toy-user-error")
@dataclass(frozen=True)
class ToyUserError(Pass):
    """Reports a mistake of the user's, as a frontend-level check inside a pass would."""

    def run(self, module):
        raise CompilationError("the kernel is wrong")


@register_pass("toy-invalid")
@dataclass(frozen=True)
class ToyInvalid(Pass):
    """Appends an op after the terminator of the first function: invalid IR."""

    def run(self, module):
        module.body.first_op.body.block.append(ConstantOp(value=IntegerAttr(1, i32), result=i32))


def module_with_function():
    f = FuncOp(sym_name=StringAttr("f"))
    f.body.add_block().append(ReturnOp([]))
    _add_constant(f, 7)
    return ModuleOp([f])


def _dumped(error: PassFailure) -> Path:
    """The file the error names (at the end of its message), which must exist."""
    assert str(error).endswith(f" is in {error.path}")
    path = Path(error.path)
    assert path.is_file()
    return path


def test_a_crashing_pass_names_itself_and_dumps_the_module_as_it_left_it(tmp_path):
    module = module_with_function()
    with pytest.raises(PassFailure) as caught:
        PassManager(["toy-crash"], dump_dir=str(tmp_path / "dumps")).run(module)
    error = caught.value
    assert str(error).startswith("pass 'toy-crash' failed: ZeroDivisionError: a bug in the pass")
    assert isinstance(error.__cause__, ZeroDivisionError)
    path = _dumped(error)
    assert path.parent == tmp_path / "dumps" and path.name.startswith("naiad-toy-crash-")
    text = path.read_text()
    assert "possibly partly rewritten" in text.splitlines()[0]
    assert "possibly partly rewritten" in str(error)
    # Without a copy kept up front, the file holds the module after the pass's change.
    assert difference(parse_module(text), module, locations=False) is None
    assert "4242" in text


def test_with_verification_the_dump_is_the_pass_input(tmp_path):
    module = module_with_function()
    original = print_module(module)
    with pytest.raises(PassFailure) as caught:
        PassManager(["toy-crash"], verify_each=True, dump_dir=str(tmp_path)).run(module)
    path = _dumped(caught.value)
    text = path.read_text()
    assert "the IR it ran on" in text.splitlines()[0]
    assert "4242" not in text  # printed from the copy made before the pass
    assert difference(parse_module(text), parse_module(original), locations=False) is None


def test_invalid_output_is_a_failure_with_the_input_dumped(tmp_path):
    module = module_with_function()
    original = print_module(module)
    PassManager(["toy-invalid"]).run(module_with_function())  # no verification: no error
    with pytest.raises(PassFailure) as caught:
        PassManager(["toy-invalid"], verify_each=True, dump_dir=str(tmp_path)).run(module)
    error = caught.value
    assert str(error).startswith("pass 'toy-invalid' produced invalid IR: ")
    assert "must end with a terminator, found 'test.constant'" in str(error)
    assert isinstance(error.__cause__, VerificationError)
    text = _dumped(error).read_text()
    assert difference(parse_module(text), parse_module(original), locations=False) is None


def test_expected_errors_pass_through_unwrapped(tmp_path):
    manager = PassManager(["toy-user-error"], dump_dir=str(tmp_path), expected=(NaiadError,))
    with pytest.raises(CompilationError, match="the kernel is wrong"):
        manager.run(module_with_function())
    assert list(tmp_path.iterdir()) == []  # nothing dumped for the user's mistake
    # Not declared expected, the same exception is a failure of the pass.
    with pytest.raises(PassFailure, match="pass 'toy-user-error' failed: CompilationError"):
        PassManager(["toy-user-error"], dump_dir=str(tmp_path)).run(module_with_function())


def test_without_a_dump_dir_the_ir_goes_to_a_temporary_file():
    with pytest.raises(PassFailure) as caught:
        PassManager(["toy-crash"]).run(module_with_function())
    path = _dumped(caught.value)
    try:
        assert path.parent == Path(tempfile.gettempdir())
    finally:
        path.unlink()


def test_naiad_opt_reports_a_failing_pass_on_one_line(tmp_path, capsys):
    source = tmp_path / "input.mlir"
    source.write_text(print_module(module_with_function()))
    assert naiad_opt([str(source), "-p", "toy-crash"]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("pass 'toy-crash' failed: ZeroDivisionError: a bug in the pass; ")
    Path(line.rsplit(" is in ", 1)[1]).unlink()
