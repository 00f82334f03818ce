"""A wgmma dot left in flight across the back edge reads its A from registers until the next
iteration's `wgmma.wait_group` retires it, and PTX forbids writing them before then
(passes/asynchronous_dots.py). The rotated chain (fixture_kernels/chained_dots.py) is the
shape that broke it: its second dot reads the first product the loop carries, which LLVM
converted and packed into the dot's A registers at the top of the next iteration, before the
first dot's wait, and ptxas then gave those registers to the exponentials while the dot still
read them (wrong values and NaN on an H200). Checked on the PTX: every instruction between
a wgmma and the wait that retires it, the loop's body read twice so that the back edge is
crossed. Values on the GPU: tests/gpu/test_asynchronous_dots_gpu.py."""

import re

import numpy as np
import pytest
from fixture_kernels.chained_dots import chained_products, rotated_products
from test_lowering import assemble
from test_pipeline_loads import _loop_ops, _modules, check_chain_values
from test_toolchain import needs_ptxas

_REGISTER = re.compile(r"%r\d+\b")


def _statements(ptx: str) -> list[str]:
    lines = (line.split("//")[0].strip() for line in ptx.splitlines())
    return [line for line in lines if line]


def _a_registers(statement: str) -> set[str]:
    """The register-A operands of a `wgmma.mma_async` (the second braced list, if any)."""
    lists = re.findall(r"\{([^{}]*)\}", statement.split("wgmma.mma_async", 1)[1])
    return set(_REGISTER.findall(lists[1])) if len(lists) > 1 else set()


def _written(statement: str) -> set[str]:
    """The registers an ordinary instruction writes: its first operand's."""
    match = re.match(r"(?:@!?%p\d+\s+)?([a-z][\w.:]*)\s+([^,;]*)", statement)
    if match is None or match.group(1).startswith(("st.", "bra", "setp", "wgmma", "bar")):
        return set()
    return set(_REGISTER.findall(match.group(2)))


def _writes_in_flight(statements: list[str]) -> list[str]:
    """The statements that write a register-A operand of a wgmma not yet retired: each
    `commit_group` closes a group, and `wait_group N` retires all but the N latest."""
    groups, issuing, found = [], set(), []
    for statement in statements:
        if "wgmma.wait_group" in statement:
            kept = int(statement.rstrip(";").split()[-1])
            groups = groups[len(groups) - kept :] if kept else []
        elif "wgmma.commit_group" in statement:
            groups.append(issuing)
            issuing = set()
        elif "wgmma.mma_async" in statement:
            issuing |= _a_registers(statement)
        elif _written(statement) & set().union(issuing, *groups):
            found.append(statement)
    return found


def _loop_bodies(statements: list[str]):
    labels = {s[:-1]: i for i, s in enumerate(statements) if re.fullmatch(r"\$L__\w+:", s)}
    for i, statement in enumerate(statements):
        target = re.search(r"bra(?:\.uni)?\s+(\$L__\w+)", statement)
        if target and labels.get(target.group(1), i) < i:
            yield statements[labels[target.group(1)] : i + 1]


@needs_ptxas
@pytest.mark.parametrize("kernel", ["rotated", "chained", "overlapped"])
@pytest.mark.parametrize("stages", [2, 3])
def test_no_register_a_written_while_its_dot_runs(kernel, stages, tmp_path):
    """The second dot still runs on across the back edge (the overlap kept), and no
    instruction writes its A registers before the wait that retires it."""
    block = 64
    operand = np.empty((5 * block, block), np.float16)
    jit = chained_products if kernel == "chained" else rotated_products
    extra = (True,) if kernel == "chained" else (kernel == "overlapped",)
    compiled = jit.warmup(operand, operand, operand, np.empty((block, block), np.float32),
                          5 * block, block, *extra, grid=(1,), target="cuda:sm_90a",
                          num_warps=4, num_stages=stages)  # fmt: skip
    assert compiled.asm["ttgir"].count("isAsync = true") == (2 if kernel == "overlapped" else 1)
    ptx = compiled.asm["ptx"]
    assert "C7514" not in assemble(ptx, "sm_90a", tmp_path)  # ptxas kept the wgmma asynchronous
    statements = _statements(ptx)
    bodies = list(_loop_bodies(statements))
    assert bodies
    assert _writes_in_flight(statements) == []
    for body in bodies:
        assert _writes_in_flight(body + body) == []


def test_the_rotated_chain_keeps_its_values():
    """The TTGIR (the second dot asynchronous, its A passed through a wait) computes what the
    TTIR did, in the evaluator."""
    args = ("*fp16", "*fp16", "*fp16", "*fp32")
    kwargs = {"K": 256, "BLOCK": 64, "OVERLAPPED": False}
    before, after = _modules(rotated_products, args, kwargs, 3)
    body = _loop_ops(after)
    assert body.count("ttng.warp_group_dot_wait") == 2
    check_chain_values(before, after, seed=5)


def test_the_overlapped_chain_keeps_its_values():
    """The first dot asynchronous too (asynchronous_dots.py's overlapped shape): the TTGIR
    waits for the carried value at the iteration's start (nothing in flight), for the carried
    first product before the second dot with the first dot left running (`pendings = 1`) and
    for the first dot before its result is read, the second left running; it computes what
    the TTIR did, in the evaluator."""
    args = ("*fp16", "*fp16", "*fp16", "*fp32")
    kwargs = {"K": 256, "BLOCK": 64, "OVERLAPPED": True}
    before, after = _modules(rotated_products, args, kwargs, 3)
    loop = next(op for op in after.walk() if op.name == "scf.for")
    waits = [op.pendings.value for op in loop.body.ops if op.name == "ttng.warp_group_dot_wait"]
    assert waits == [0, 1, 1]
    check_chain_values(before, after, seed=7)
