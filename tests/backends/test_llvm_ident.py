"""Every LLVM module Naiad writes names what made it in `!llvm.ident`, on both back ends: Naiad's
version with the Triton release whose language it follows (that release first under the
switch), and LLVM's version."""

import re
import subprocess
import sys

import llvmlite.binding as llvm
import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import versions
from naiad.llvm_util import ident_strings


@naiad.jit
def _incremented(x, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(x + offsets, tl.load(x + offsets, mask=offsets < n) + 1.0, mask=offsets < n)


def test_the_strings_name_naiad_triton_and_llvm():
    maker, llvm_text = ident_strings()
    assert maker == f"Naiad version {versions.NAIAD} (Triton language {versions.TRITON})"
    assert llvm_text == "LLVM version " + ".".join(map(str, llvm.llvm_version_info))
    assert naiad.__version__ == versions.NAIAD


def test_under_the_switch_the_triton_release_leads():
    """In a process of its own: the switch refuses a process where something (torch, with
    the real Triton installed beside it) imported `triton` already."""
    program = (
        "import naiad; naiad.install_as_triton()\n"
        "from naiad.llvm_util import ident_strings; print(ident_strings()[0])"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"Triton version {versions.TRITON} (Naiad {versions.NAIAD})"


@pytest.mark.parametrize("target", ["cpu", "cuda:sm_90a"])
def test_each_back_ends_module_carries_them(target):
    x = np.random.default_rng(0).standard_normal(20).astype(np.float32)
    llir = _incremented.warmup(x, 20, BLOCK=32, grid=(1,), target=target).asm["llir"]
    (named,) = re.findall(r"^!llvm\.ident = !\{(.*)\}$", llir, re.M)
    nodes = dict(re.findall(r'^(!\d+) = !\{!"([^"]*)"\}$', llir, re.M))
    assert [nodes[ref.strip()] for ref in named.split(",")][:2] == list(ident_strings())
