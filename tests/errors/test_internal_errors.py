"""A bug in one of the compiler's passes reaches the user as Naiad's InternalError: it names the
pass and the file, under NAIAD_DUMP_DIR when set, holding the kernel's IR."""

from dataclasses import dataclass
from pathlib import Path

import pytest

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.errors import CompilationError, InternalError
from naiad.ir import Pass, register_pass
from naiad.ir.parser import parse_module
from naiad.ir.passes import PassFailure
from naiad.runtime import compiler


@register_pass("test-broken-pass")
@dataclass(frozen=True)
class BrokenPass(Pass):
    """A pass with a bug."""

    def run(self, module):
        raise KeyError("a bug in the pass")


@register_pass("test-user-error-pass")
@dataclass(frozen=True)
class UserErrorPass(Pass):
    """A pass that finds a mistake of the user's."""

    def run(self, module):
        raise CompilationError("the kernel is wrong")


@naiad.jit
def copy_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


@pytest.mark.parametrize("verify", [False, True], ids=["plain", "NAIAD_VERIFY"])
def test_a_failing_pass_is_an_internal_error_with_the_ir_dumped(tmp_path, monkeypatch, verify):
    monkeypatch.setattr(compiler, "TTIR_PIPELINE", ("canonicalize", "test-broken-pass", "cse"))
    failure = pytest.raises(InternalError, match="pass 'test-broken-pass' failed: KeyError")
    with knobs.override(NAIAD_DUMP_DIR=str(tmp_path), NAIAD_VERIFY=int(verify)), failure as caught:
        copy_kernel.warmup("*fp32", "*fp32", grid=(1,), BLOCK=16)
    cause = caught.value.__cause__
    assert isinstance(cause, PassFailure) and isinstance(cause.__cause__, KeyError)
    path = Path(cause.path)
    assert path.parent == tmp_path and str(caught.value).endswith(f" is in {path}")
    module = parse_module(path.read_text(), str(path))  # the kernel's TTIR, after canonicalize
    assert module.lookup_symbol("copy_kernel") is not None


def test_a_users_error_from_a_pass_passes_through(tmp_path, monkeypatch):
    monkeypatch.setattr(compiler, "TTIR_PIPELINE", ("test-user-error-pass",))
    with knobs.override(NAIAD_DUMP_DIR=str(tmp_path)), pytest.raises(CompilationError) as caught:
        copy_kernel.warmup("*fp32", "*fp32", grid=(1,), BLOCK=16)
    assert not isinstance(caught.value, InternalError)
    assert "the kernel is wrong" in str(caught.value)
    assert list(tmp_path.rglob("*.mlir")) == []
