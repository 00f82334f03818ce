"""The launch hot path on the GPU (jit.py, binder.py, cuda_launcher.fast_cuda_launch): prepared
launches compute what torch computes, re-specialize when a key fact changes, follow the current
stream (a side stream, graph capture) and the tensors' device, and keep the slow path's errors
and the changed-global check. The slow path is spied on, so each test says which launches took
it.

Run on the GPU machine: `scripts/gpu-check OUTDIR` (or `python3 -m pytest tests/gpu -m gpu`).
"""

import pytest
import torch

import naiad
import naiad.language as tl
from naiad.errors import NaiadError

pytestmark = pytest.mark.gpu

SHIFT = tl.constexpr(0.5)


@naiad.jit
def axpy(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, (alpha * x + y + SHIFT).to(out_ptr.dtype.element_ty), mask=mask)


@pytest.fixture(autouse=True)
def compiled(monkeypatch):
    """Launches on CUDA tensors compile for the GPU (the test-wide default is the
    interpreter)."""
    monkeypatch.setenv("NAIAD_BACKEND", "auto")


@pytest.fixture
def slow_calls(monkeypatch):
    calls = []
    original = axpy._run_slow

    def spy(*args):
        calls.append(args[2])  # the grid
        return original(*args)

    monkeypatch.setattr(axpy, "_run_slow", spy)
    return calls


def _inputs(n, dtype=torch.float32, offset=0, seed=0):
    """Random values in +-[0.5, 2) on the GPU, from element `offset` of a larger tensor."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    values = torch.rand(n + offset, device="cuda", generator=gen, dtype=torch.float32) * 1.5 + 0.5
    signs = torch.randint(0, 2, (n + offset,), device="cuda", generator=gen) * 2 - 1
    return (values * signs).to(dtype)[offset:]


def _launch(n, alpha=2.0, dtype=torch.float32, offset=0, seed=0, grid=None):
    x, y = _inputs(n, dtype, offset, seed), _inputs(n, dtype, offset, seed + 1)
    out = torch.full_like(x, float("nan"))
    grid = grid or (lambda meta: (naiad.cdiv(meta["n"], meta["BLOCK"]),))
    axpy[grid](x, y, out, n, alpha, BLOCK=256)
    expected = (alpha * x.double() + y.double() + 0.5).to(dtype)
    # Three roundings (or a fused multiply-add) of values below 8: a few ulp of 8.
    tolerance = 1e-5 if dtype == torch.float32 else 1e-2
    torch.testing.assert_close(out, expected, rtol=tolerance, atol=tolerance)


def test_hot_path_results_and_respecialization(slow_calls):
    _launch(1000)
    _launch(1000, alpha=-0.5, seed=1)  # prepared: only the values changed
    assert len(slow_calls) == 1
    for change in (dict(offset=1), dict(n=1024), dict(n=1), dict(dtype=torch.float16)):
        _launch(**{"n": 1000, **change})
        _launch(**{"n": 1000, **change, "seed": 2})
    assert len(slow_calls) == 5  # one slow launch per new specialization
    assert len(axpy._launchers["cuda"].kernels) == 5


def test_hot_path_follows_the_current_stream_and_graph_capture(slow_calls):
    x, y = _inputs(4096), _inputs(4096, seed=1)
    out = torch.empty_like(x)
    axpy[(16,)](x, y, out, 4096, 1.0, BLOCK=256)  # compiled, loaded and prepared outside
    torch.cuda.synchronize()
    prepared = len(slow_calls)  # 0 when an earlier test prepared this specialization
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        z = x * 3  # queued on the side stream: the kernel must run after it, on it
        axpy[(16,)](z, y, out, 4096, 1.0, BLOCK=256)
    side.synchronize()
    torch.testing.assert_close(out, x * 3 + y + 0.5)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        axpy[(16,)](x, y, out, 4096, 2.0, BLOCK=256)
    out.fill_(float("nan"))
    x.copy_(_inputs(4096, seed=5))
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(out, 2.0 * x + y + 0.5)
    assert len(slow_calls) == prepared  # the side stream and the capture took the hot path


def test_hot_path_keeps_the_launch_errors(slow_calls):
    x = _inputs(1000)
    out = torch.empty_like(x)
    for _ in range(2):
        axpy[(4,)](x, x, out, 1000, 1.0, BLOCK=256)
    with pytest.raises(ValueError, match=r"y_ptr`.*a tensor on cpu"):
        axpy[(4,)](x, x.cpu(), out, 1000, 1.0, BLOCK=256)
    with pytest.raises(ValueError, match="grid dimension 1"):
        axpy[(4, 70000)](x, x, out, 1000, 1.0, BLOCK=256)
    if torch.cuda.device_count() > 1:
        with pytest.raises(ValueError, match=r"y_ptr`.* is on cuda:1"):
            axpy[(4,)](x, x.to("cuda:1"), out, 1000, 1.0, BLOCK=256)


def test_hot_path_checks_changed_globals():
    global SHIFT
    x = _inputs(256)
    out = torch.empty_like(x)
    for _ in range(2):
        axpy[(1,)](x, x, out, 256, 1.0, BLOCK=256)
    saved = SHIFT
    SHIFT = tl.constexpr(1.5)
    try:
        with pytest.raises(NaiadError, match="global variable `SHIFT` has changed"):
            axpy[(1,)](x, x, out, 256, 1.0, BLOCK=256)
    finally:
        SHIFT = saved


def test_hot_path_runs_on_the_tensors_device(slow_calls):
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")
    x = _inputs(3000).to("cuda:1")
    y = _inputs(3000, seed=1).to("cuda:1")
    for alpha in (1.0, 3.0):
        out = torch.full_like(x, float("nan"))
        with torch.cuda.device(0):
            axpy[(12,)](x, y, out, 3000, alpha, BLOCK=256)
        torch.cuda.synchronize(1)
        torch.testing.assert_close(out, alpha * x + y + 0.5)
    assert len(slow_calls) == 1


@pytest.mark.parametrize("native", ["1", "0"])
def test_bound_launches_through_the_native_launch(native, monkeypatch):
    """A bound launch (bind_launch, as naiad.ops makes them) calls the driver through the
    native launch (cuda_native_launch.py) or, with NAIAD_CUDA_NATIVE_LAUNCH=0, through
    cuda-bindings: the same results, on the current stream and under graph capture, and where
    no context is current (the native call declines, the driver module's launch makes the
    device's context current)."""
    from cuda.bindings import driver as cuda

    monkeypatch.setenv("NAIAD_CUDA_NATIVE_LAUNCH", native)
    axpy.forget_compiled()
    x, y = _inputs(4096), _inputs(4096, seed=1)
    out = torch.full_like(x, float("nan"))
    launch = axpy.bind_launch(("x_ptr", "y_ptr", "out_ptr", "alpha"), (16,), x, y, out, 4096,
                              1.0, BLOCK=256)  # fmt: skip
    for seed, alpha in ((2, 2.0), (3, -0.5), (4, 1.5)):
        x.copy_(_inputs(4096, seed=seed))
        launch(x, y, out, alpha)
        torch.testing.assert_close(out, alpha * x + y + 0.5)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        launch(x, y, out, 3.0)
    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(out, 3.0 * x + y + 0.5)
    torch.cuda.synchronize()
    (result, context) = cuda.cuCtxPopCurrent()  # no context current on this thread
    assert int(result) == 0
    try:
        launch(x, y, out, -2.0)
        torch.cuda.synchronize()
    finally:
        cuda.cuCtxSetCurrent(context)  # as it was (the launch may have made it current)
    torch.testing.assert_close(out, -2.0 * x + y + 0.5)
