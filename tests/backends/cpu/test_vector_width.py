"""The loops LLVM vectorizes use the CPU's whole vector width where it has AVX-512
(target._full_width): LLVM's models of Intel's server cores prefer 256 bits, which left a layer
norm's loops on ymm registers on a Xeon (0.51-0.63 of torch, 0.89-0.92 at 512 bits). Checked by
optimizing a loop for those models, compiled only: nothing here runs code for another CPU."""

from __future__ import annotations

import re

import pytest

from naiad.backends.cpu import llvm_tools, target

pytestmark = pytest.mark.skipif(
    not llvm_tools.host_triple().startswith("x86_64"), reason="x86-64 CPU models"
)

# y[i] = x[i] * s + y[i] over n floats: a loop LLVM's loop vectorizer takes.
SCALED_ADD = """
define void @scaled_add(ptr noalias %x, ptr noalias %y, float %s, i64 %n) {
entry:
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %px = getelementptr inbounds float, ptr %x, i64 %i
  %py = getelementptr inbounds float, ptr %y, i64 %i
  %vx = load float, ptr %px
  %vy = load float, ptr %py
  %m = fmul fast float %vx, %s
  %r = fadd fast float %m, %vy
  store float %r, ptr %py
  %next = add nuw i64 %i, 1
  %more = icmp ult i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}
"""


def _vector_widths(cpu: str, features: str) -> set[int]:
    """The float vector lengths of SCALED_ADD optimized for `cpu` with `features`."""
    machine = llvm_tools.create_target_machine(llvm_tools.host_triple(), cpu, features)
    module = llvm_tools.parse_module(SCALED_ADD, "scaled_add")
    llvm_tools.optimize(module, machine)
    return {int(lanes) for lanes in re.findall(r"<(\d+) x float>", str(module))}


def test_full_width_only_where_avx512():
    assert target._full_width("+avx,+avx2,+fma").split(",")[-1] == "+fma"
    assert target._full_width("+avx2,+avx512f").endswith(",-prefer-256-bit")


@pytest.mark.parametrize("cpu", ["skylake-avx512", "icelake-server", "sapphirerapids"])
def test_intel_server_models_vectorize_on_zmm(cpu):
    features = target.HOST_CPU_MODELS["x86_64"][cpu]
    assert max(_vector_widths(cpu, features)) == 8  # LLVM's own choice: 256 bits
    assert max(_vector_widths(cpu, target._full_width(features))) == 16


def test_avx2_models_keep_their_width():
    features = target.HOST_CPU_MODELS["x86_64"]["haswell"]
    assert max(_vector_widths("haswell", target._full_width(features))) == 8
