"""CPU targets, the LLVM wrapper (parse, verify, optimize, emit) and the object loader: host code
is compiled and run; `cpu:aarch64` code is compiled and its assembly checked, never run."""

import ctypes
import re

import numpy as np
import pytest

from naiad.backends.cpu import llvm_tools, loader, pool_ir
from naiad.backends.cpu.target import cpu_target, host_target, target_names
from naiad.errors import InternalError

# out[i] = a[i] * x[i] + y[i], i < n: a loop the vectorizer widens.
ELEMENTWISE = """
define void @axpy(ptr noalias %out, ptr noalias %x, ptr noalias %y, float %a, i64 %n) {
entry:
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %exit, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %xa = getelementptr float, ptr %x, i64 %i
  %ya = getelementptr float, ptr %y, i64 %i
  %xv = load float, ptr %xa
  %yv = load float, ptr %ya
  %ax = fmul float %a, %xv
  %sum = fadd float %ax, %yv
  %oa = getelementptr float, ptr %out, i64 %i
  store float %sum, ptr %oa
  %i.next = add i64 %i, 1
  %more = icmp slt i64 %i.next, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}
"""


def assembly(text: str, target) -> str:
    module = llvm_tools.parse_module(text, "axpy")
    llvm_tools.optimize(module, target.machine)
    return llvm_tools.emit_assembly(module, target.machine)


def test_host_target_describes_this_machine():
    host = host_target()
    assert host.name == "cpu" and host.is_host
    assert host.arch in ("x86_64", "aarch64")
    assert host.triple.startswith(host.arch)
    assert host.cpu and host.features.startswith(("+", "-"))
    assert host.description() == {
        "triple": host.triple,
        "cpu": host.cpu,
        "features": host.features,
    }
    assert cpu_target("cpu") is host


def test_named_targets():
    assert target_names() == ["cpu", "cpu:aarch64"]
    arm = cpu_target("cpu:aarch64")
    assert arm.description() == {
        "triple": "aarch64-unknown-linux-gnu",
        "cpu": "generic",
        "features": "+neon",
    }
    assert arm.arch == "aarch64"
    assert arm.data_layout.startswith("e-m:e")
    with pytest.raises(ValueError, match=r"unknown CPU target 'cpu:riscv'.*cpu:aarch64"):
        cpu_target("cpu:riscv")


def test_target_machines_are_made_once():
    assert host_target().machine is host_target().machine


def test_invalid_ir_is_an_internal_error():
    with pytest.raises(InternalError, match=r"`broken`.*parsing error"):
        llvm_tools.parse_module("define void @f() { ret i32 0 ", "broken")


def test_unverifiable_ir_is_an_internal_error():
    # Parses, but %x does not dominate its use: only the verifier sees it.
    text = """
define i32 @f(i1 %c) {
entry:
  br i1 %c, label %a, label %b
a:
  %x = add i32 1, 2
  br label %b
b:
  ret i32 %x
}
"""
    with pytest.raises(InternalError, match=r"`unverified`.*dominate"):
        llvm_tools.parse_module(text, "unverified")


def test_host_loop_is_vectorized_and_runs():
    host = host_target()
    asm = assembly(ELEMENTWISE, host)
    if host.arch == "x86_64":
        assert re.search(r"\bv?(mul|add|fmadd\w*)ps\b", asm), "no packed float instruction"
    else:
        assert re.search(r"\bf(add|mla|mul)\s+v\d+\.4s", asm)
    code = llvm_tools.compile_ir(ELEMENTWISE, host.machine, "axpy")
    loaded = loader.load_object(code, ["axpy"], "axpy")
    axpy = ctypes.CFUNCTYPE(
        None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_float, ctypes.c_int64
    )(loaded.address("axpy"))
    rng = np.random.default_rng(0)
    n = 1003
    x, y = rng.standard_normal((2, n)).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    axpy(out.ctypes.data, x.ctypes.data, y.ctypes.data, 1.5, n)
    # The same two roundings (or one fused multiply-add, as LLVM may contract only when told).
    np.testing.assert_array_equal(out, np.float32(1.5) * x + y)


def test_large_module_loops_are_vectorized_but_not_copied():
    """`grow_loops=False` (the pipeline of a large kernel) still vectorizes the loop, once: no
    interleaved copies of its vector body (one store of the widest vector), no unrolled
    remainder; by default it is interleaved. A narrower vector loop for the remainder is the
    target's choice (znver4's AVX-512 body gets a 4-wide epilogue). The vector code computes
    the same values either way (checked on the host)."""
    host = host_target()
    vector_stores = {}
    for grow in (True, False):
        module = llvm_tools.parse_module(ELEMENTWISE, "axpy")
        llvm_tools.optimize(module, host.machine, speed_level=2, grow_loops=grow)
        widths = [int(w) for w in re.findall(r"store <(\d+) x float>", str(module))]
        vector_stores[grow] = widths.count(max(widths))
        code = llvm_tools.emit_object(module, host.machine)
        loaded = loader.load_object(code, ["axpy"], f"axpy_{grow}")
        axpy = ctypes.CFUNCTYPE(
            None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_float, ctypes.c_int64
        )(loaded.address("axpy"))
        x, y = np.random.default_rng(1).standard_normal((2, 517)).astype(np.float32)
        out = np.full_like(x, np.nan)
        axpy(out.ctypes.data, x.ctypes.data, y.ctypes.data, -0.75, x.size)
        np.testing.assert_array_equal(out, np.float32(-0.75) * x + y)
    assert vector_stores[False] == 1
    assert vector_stores[True] > 1


def test_aarch64_object_uses_neon():
    arm = cpu_target("cpu:aarch64")
    asm = assembly(ELEMENTWISE, arm)
    assert re.search(r"\bfmul\s+v\d+\.4s", asm) and re.search(r"\bfadd\s+v\d+\.4s", asm)
    module = llvm_tools.parse_module(ELEMENTWISE, "axpy")
    llvm_tools.optimize(module, arm.machine)
    code = llvm_tools.emit_object(module, arm.machine)
    assert code[:4] == b"\x7fELF" and int.from_bytes(code[18:20], "little") == 183  # EM_AARCH64


def test_foreign_object_is_refused():
    arm = cpu_target("cpu:aarch64")
    if host_target().arch == "aarch64":
        pytest.skip("the host is AArch64")
    code = llvm_tools.compile_ir(ELEMENTWISE, arm.machine, "axpy")
    with pytest.raises(ValueError, match="aarch64 cannot run on this x86_64 host"):
        loader.load_object(code, ["axpy"])


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_pool_module_compiles_for_each_arch(arch):
    target = host_target() if host_target().arch == arch else cpu_target(f"cpu:{arch}")
    module = llvm_tools.parse_module(pool_ir.pool_module(arch), "pool")
    llvm_tools.optimize(module, target.machine)
    asm = llvm_tools.emit_assembly(module, target.machine)
    for name in pool_ir.EXPORTS:
        assert re.search(rf"^{name}:", asm, re.MULTILINE)
    hint = "pause" if arch == "x86_64" else "yield"
    assert re.search(rf"\b{hint}\b", asm)


def test_loader_resolves_c_library_calls():
    calls_libc = """
declare ptr @memset(ptr, i32, i64)
define void @clear(ptr %p, i64 %n) {
  %r = call ptr @memset(ptr %p, i32 0, i64 %n)
  ret void
}
"""
    code = llvm_tools.compile_ir(calls_libc, host_target().machine, "clear")
    loaded = loader.load_object(code, ["clear"])  # the code stays mapped while this lives
    clear = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)(loaded.address("clear"))
    buffer = np.random.default_rng(1).integers(1, 255, 100, dtype=np.uint8)
    clear(buffer.ctypes.data + 10, 50)
    assert not buffer[10:60].any() and buffer[:10].all() and buffer[60:].all()

    calls_nothing = """
declare i32 @naiad_no_such_function()
define i32 @missing() {
  %r = call i32 @naiad_no_such_function()
  ret i32 %r
}
"""
    code = llvm_tools.compile_ir(calls_nothing, host_target().machine, "missing")
    with pytest.raises(InternalError, match="linking `missing"):
        loader.load_object(code, ["missing"], "missing")


def test_versions_are_recorded():
    assert re.fullmatch(r"llvmlite 0\.50\.\d+, LLVM 22\.\d+\.\d+", llvm_tools.version())
