"""naiad.torch without the switch (Naiad not standing in for Triton in this process): a
triton_op over an autotuned Naiad kernel runs eagerly and under torch.compile(fullgraph=True),
with its registered backward; a wrap_triton launch traced outside a triton_op says what to do."""

import importlib.util
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

import naiad  # noqa: E402
import naiad.language as tl  # noqa: E402
import naiad.torch  # noqa: E402
from naiad import as_triton  # noqa: E402


@naiad.autotune(configs=[naiad.Config({"BLOCK": 32}), naiad.Config({"BLOCK": 128})], key=["n"])
@naiad.jit
def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


def launch_scale(x, out, alpha):
    n = x.numel()
    grid = lambda meta: (naiad.cdiv(n, meta["BLOCK"]),)
    naiad.torch.wrap_triton(scale_kernel)[grid](x, out, n, alpha)


@naiad.torch.triton_op("naiad_tests_plain::scale", mutates_args=())
def scale(x: torch.Tensor, alpha: float) -> torch.Tensor:
    out = torch.empty_like(x)
    launch_scale(x, out, alpha)
    return out


scale.register_autograd(
    lambda ctx, grad: (scale(grad, ctx.alpha), None),
    setup_context=lambda ctx, inputs, output: setattr(ctx, "alpha", inputs[1]),
)


@pytest.fixture(autouse=True)
def switched_off():
    if as_triton.is_installed():
        pytest.skip("Naiad stands in for Triton in this process")


def test_triton_op_runs_eagerly():
    x = torch.randn(1000)
    torch.testing.assert_close(scale(x, 2.5), x * 2.5)


def test_triton_op_in_torch_compile_with_its_backward():
    torch.manual_seed(0)
    x = torch.randn(777, requires_grad=True)
    compiled = torch.compile(
        lambda x: (scale(x, 3.0) * x).sum(), fullgraph=True, backend="aot_eager"
    )
    got = compiled(x)
    got.backward()
    torch.testing.assert_close(got, (3.0 * x * x).sum(), rtol=1e-5, atol=1e-3)
    torch.testing.assert_close(x.grad, 6.0 * x.detach())


@naiad.jit
def scale_in_place_kernel(x_ptr, n, alpha, BLOCK: tl.constexpr):
    # Not autotuned: tuning would run it, and scale `x`, once per config (Triton's autotuner
    # needs `restore_value` for that).
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


@naiad.torch.triton_op("naiad_tests_plain::scale_", mutates_args={"x"})
def scale_(x: torch.Tensor, alpha: float) -> None:
    grid = (naiad.cdiv(x.numel(), 128),)
    naiad.torch.wrap_triton(scale_in_place_kernel)[grid](x, x.numel(), alpha, BLOCK=128)


def test_a_triton_op_that_writes_its_argument_in_torch_compile():
    x = torch.randn(300)
    expected = (x * 2.0).sin()

    def twice_then_sine(x):
        scale_(x, 2.0)
        return x.sin()

    got = torch.compile(twice_then_sine, fullgraph=True, backend="aot_eager")(x)
    torch.testing.assert_close(got, expected)
    torch.testing.assert_close(x.sin(), expected)  # the caller's tensor was written


def test_a_launch_traced_outside_a_triton_op_names_the_remedy():
    def launch(x):
        out = torch.empty_like(x)
        launch_scale(x, out, 2.0)
        return out

    with pytest.raises(Exception, match=r"naiad\.torch\.triton_op"):
        torch.compile(launch, fullgraph=True, backend="aot_eager")(torch.randn(10))


@pytest.mark.skipif(
    importlib.util.find_spec("triton") is not None,
    reason="Triton itself is installed: torch finds it, whatever Naiad does",
)
def test_install_after_inductor_looked_for_triton_is_refused_and_changes_nothing():
    """In a fresh process: torch decides once whether Triton exists, and this one must not."""
    script = textwrap.dedent(
        """
        from torch._inductor.runtime import triton_compat
        import naiad.torch
        from naiad import as_triton
        assert not triton_compat.HAS_TRITON
        try:
            naiad.torch.install()
        except RuntimeError as error:
            print("refused:", "before the first torch.compile" in str(error))
        print("switched on:", as_triton.is_installed())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["refused: True", "switched on: False"]
