"""Passes users add to the JIT's pipelines (passes/extensions.py): placed where asked, for one
kernel or all, part of the cache key, seen in the dumps (NAIAD_DUMP_PASSES), and taking effect
on the next launch."""

from dataclasses import dataclass

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.dialects import arith
from naiad.dialects.base import is_splat_value
from naiad.ir import Pass, register_pass
from naiad.ir.rewriter import RewritePattern, apply_patterns_greedily, constant_value
from naiad.passes import extensions
from naiad.runtime import compiler


class DoubledIsAdded(RewritePattern):
    """`x * 2` (integers, either side) becomes `x + x`."""

    root = arith.MulIOp

    def match_and_rewrite(self, op, rewriter) -> bool:
        for x, two in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            if is_splat_value(constant_value(two), lambda v: v == 2):
                rewriter.replace_op(op, rewriter.create(arith.AddIOp, x, x))
                return True
        return False


@register_pass("test-double-to-add")
@dataclass(frozen=True)
class DoubleToAdd(Pass):
    """Rewrite `x * 2` on integers into `x + x` (the example of docs/passes.md)."""

    def run(self, module):
        apply_patterns_greedily(module, [DoubledIsAdded()])


SEEN: list = []


@register_pass("test-count-linalg-runs")
@dataclass(frozen=True)
class CountRuns(Pass):
    """Record that it ran (an analysis pass: changes nothing)."""

    def run(self, module):
        SEEN.append(module)


@naiad.jit
def twice(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2)


@naiad.jit
def thrice(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 3)


@pytest.fixture(autouse=True)
def fresh(cpu_fresh_cache):
    SEEN.clear()
    for kernel in (twice, thrice):
        kernel.forget_compiled()


def _inputs():
    x = np.random.default_rng(2).integers(-1000, 1000, 64).astype(np.int32)
    return x, np.full_like(x, -7)


def test_a_rewrite_pass_runs_in_the_jit_for_one_kernel():
    x, out = _inputs()
    with naiad.added_pass("test-double-to-add", after="canonicalize", kernel=twice):
        compiled = twice.warmup(x, out, grid=(1,), BLOCK=64)
        assert "arith.muli" not in compiled.asm["ttir"] and "arith.addi" in compiled.asm["ttir"]
        twice[(1,)](x, out, BLOCK=64)
        np.testing.assert_array_equal(out, x * 2)
        other = thrice.warmup(x, out, grid=(1,), BLOCK=64)  # not this kernel's pass
        assert "arith.muli" in other.asm["ttir"]
    compiled = twice.warmup(x, out, grid=(1,), BLOCK=64)
    assert "arith.muli" in compiled.asm["ttir"]


def test_a_pass_is_part_of_the_cache_key():
    x, out = _inputs()
    twice.warmup(x, out, grid=(1,), BLOCK=64)
    assert SEEN == []
    with naiad.added_pass("test-count-linalg-runs", pipeline="linalg", before="cse"):
        twice.warmup(x, out, grid=(1,), BLOCK=64)  # the TTIR is the same: only the key differs
        assert len(SEEN) == 1
        compiler.disk_cache().clear_memory()
        twice.warmup(x, out, grid=(1,), BLOCK=64)  # now this entry is cached
        assert len(SEEN) == 1


def test_adding_a_pass_makes_the_next_launch_compile_again():
    x, out = _inputs()
    twice[(1,)](x, out, BLOCK=64)
    assert twice._launches
    with naiad.added_pass("test-count-linalg-runs", pipeline="linalg"):
        assert not twice._launches  # forgotten: the next launch compiles with the pass
        twice[(1,)](x, out, BLOCK=64)
        assert len(SEEN) == 1
    np.testing.assert_array_equal(out, x * 2)


def test_placement_errors_name_the_pipeline():
    with pytest.raises(ValueError, match="no pass 'no-such' in the ttir pipeline"):
        extensions.extend(
            "ttir", ["inline", "cse"], [extensions.Insertion("ttir", DoubleToAdd(), "no-such")]
        )
    with pytest.raises(ValueError, match="unknown pipeline 'nope'"):
        naiad.add_pass("cse", pipeline="nope")
    with pytest.raises(ValueError, match="not both"):
        naiad.add_pass("cse", before="inline", after="cse")
    placed = extensions.extend(
        "ttir",
        ["inline", "cse", "dce"],
        [
            extensions.Insertion("ttir", DoubleToAdd(), before="cse"),
            extensions.Insertion("ttgir", CountRuns()),
        ],
    )
    assert [p if isinstance(p, str) else p.name for p in placed] == [
        "inline",
        "test-double-to-add",
        "cse",
        "dce",
    ]


def test_dump_passes_writes_the_ir_after_every_pass(tmp_path):
    x, out = _inputs()
    with knobs.override(NAIAD_DUMP_DIR=str(tmp_path / "dump"), NAIAD_DUMP_PASSES=1):
        twice.warmup(x, out, grid=(1,), BLOCK=64)
    names = sorted(p.name for p in (tmp_path / "dump").rglob("*.mlir"))
    # The TTIR pipeline, then the back end's passes (loop fusion, Linalg's, then the CPU's),
    # each numbered.
    assert "ttir-001-inline.mlir" in names and "ttir-006-loop-unroll.mlir" in names
    cpu = [name.split("-", 2)[2] for name in names if name.startswith("cpu-")]
    assert [f"cpu-{n:03d}-{rest}" for n, rest in enumerate(cpu, 1)] == names[: len(cpu)]
    assert cpu[0] == "inline.mlir"
    order = [cpu.index(f"{name}.mlir") for name in ("fuse-nested-loops", "tt-to-linalg")]
    assert order == sorted(order) and "cpu-fuse-elementwise.mlir" in cpu
    first = next((tmp_path / "dump").rglob("ttir-001-inline.mlir")).read_text()
    assert first.startswith("// after pass 'inline'") and "tt.func" in first


def test_always_compile_ignores_the_disk_cache():
    x, out = _inputs()
    with naiad.added_pass("test-count-linalg-runs", pipeline="linalg"):
        twice.warmup(x, out, grid=(1,), BLOCK=64)
        with knobs.override(NAIAD_ALWAYS_COMPILE=1):
            twice.warmup(x, out, grid=(1,), BLOCK=64)
    assert len(SEEN) == 2
