"""triton.profiler on the GPU (naiad/triton/profiler/): with torch's CUDA in use, scopes and
hooked Naiad launches are timed by CUDA events on the current stream, read once at finalize;
a launch's node has its kernel's time (checked against the same launches timed by events
directly), a scope the time of the work it encloses, torch's kernels included though they are
no node of their own; the profile carries the GPU's device table.

Run on the GPU machine: `python3 -m pytest tests/gpu/test_profiler_gpu.py -m gpu`.
"""

import json
from pathlib import Path

import pytest
import torch

import naiad
import naiad.language as tl
from naiad.triton import profiler as proton
from naiad.triton.profiler import session, viewer

pytestmark = pytest.mark.gpu

# 256 MiB read and 256 MiB written per launch, about 0.1 ms on an H100/H200: longer than the
# host takes to launch it with the hooks, so the GPU is never idle between the launches and each
# interval holds its kernel alone (a shorter kernel's would hold the launch's host time too).
N = 1 << 26
LAUNCHES = 20


def _scaled_metadata(grid, metadata, args):
    return {"name": f"{metadata.name} [n={args['n']}]", "bytes": 8 * args["n"]}


@naiad.jit(launch_metadata=_scaled_metadata)
def scaled(x, y, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y + offsets, tl.load(x + offsets, mask=mask) * 2.0 + 1.0, mask=mask)


@pytest.fixture(autouse=True)
def compiled(monkeypatch, tmp_path):
    """Launches on CUDA tensors compile for the GPU; profiles are written in tmp_path."""
    monkeypatch.setenv("NAIAD_BACKEND", "auto")
    monkeypatch.chdir(tmp_path)
    session.reset()
    yield
    session.reset()


def _launch(x, y):
    scaled[(naiad.cdiv(N, 1024),)](x, y, N, BLOCK=1024)


def _events_ms(x, y) -> float:
    """The same launches timed by events directly, per launch."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(LAUNCHES):
        _launch(x, y)
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / LAUNCHES


def test_launches_and_torch_work_are_timed_by_events():
    x = torch.randn(N, device="cuda")
    y = torch.empty_like(x)
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    _launch(x, y)  # compiled before the profile
    a @ a  # cuBLAS loaded and its handle made before the profile (160 ms of host time)
    direct_ms = _events_ms(x, y)
    proton.start("gpu", hook="triton")
    with proton.scope("naiad"):
        for _ in range(LAUNCHES):
            _launch(x, y)
    with proton.scope("torch", {"flops16": 2.0 * 4096**3 * 5}):
        for _ in range(5):
            a @ a
    proton.finalize()
    torch.testing.assert_close(y, x.double().mul(2).add(1).float(), rtol=1e-6, atol=1e-6)
    _, table = json.loads(Path("gpu.hatchet").read_text())
    assert list(table) == ["CUDA"] and table["CUDA"]["0"]["num_sms"] > 0
    tree, _ = viewer.parse(["time/ms", "count", "tflop16/s", "gbyte/s"], "gpu.hatchet")
    naiad_scope, torch_scope = tree.root.children["naiad"], tree.root.children["torch"]
    kernel = naiad_scope.children[f"scaled [n={N}]"]
    assert tree.value("count", kernel) == LAUNCHES
    kernel_ms = tree.value("time/ms", kernel) / LAUNCHES
    assert 0.8 * direct_ms <= kernel_ms <= 1.25 * direct_ms, (kernel_ms, direct_ms)
    assert 300 < tree.value("gbyte/s", kernel) < 10000
    scope_ms = tree.value("time/ms", naiad_scope)
    assert tree.value("time/ms", kernel) <= scope_ms <= 1.5 * tree.value("time/ms", kernel)
    assert not torch_scope.children  # torch's kernels are no nodes: no CUPTI here
    assert 20 < tree.value("tflop16/s", torch_scope) < 2000
