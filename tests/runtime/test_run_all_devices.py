"""The README demo (examples/run_all.py) and the examples on the active driver's device, checked
where there is no GPU: the examples ask the active driver for DEVICE when imported, as Triton's
tutorials do; `--cpu` selects the CPU driver before they are imported and gives the caller its
driver back; the summary says which device ran them. Every tensor the examples make is made on
DEVICE, and every `.numpy()` reads a host copy: read from their source here, so that the GPU run
(tests/gpu/test_examples_gpu.py) is not the first to find a tensor left in host memory."""

import ast
import importlib.util
import sys
from pathlib import Path

import pytest
import torch

from naiad import knobs
from naiad.runtime import driver

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
STEMS = [p.stem for p in sorted(EXAMPLES.glob("0*_*.py"))]


def _load(stem: str):
    """A fresh copy of an example or of the demo: it reads the active driver when imported."""
    name = f"run_all_devices_{stem}"
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


run_all = _load("run_all")


class GpuLikeDriver:
    """A driver that answers as the CUDA driver does on a GPU machine; no kernel runs on it."""

    backend = "cuda"

    def get_active_torch_device(self):
        return torch.device("cuda", 0)


@pytest.fixture(autouse=True)
def active_driver():
    """The tests replace the active driver; each gets the process's one back."""
    previous = driver.active.get()
    with knobs.override(NAIAD_BACKEND="cpu"):
        yield
    driver.active.set(previous)


def test_without_a_gpu_the_demo_runs_on_the_cpu_and_says_so(capsys):
    driver.active.set(driver.CpuDriver())  # what a machine without a GPU starts with
    assert run_all.select_device(cpu=False) == torch.device("cpu")
    assert run_all.main(["-q", "-k", "04"]) == 0
    out = capsys.readouterr().out
    assert "1/1 passed" in out and "device: CPU" in out


@pytest.mark.parametrize("stem", STEMS)
def test_the_examples_ask_the_active_driver_for_their_device(stem):
    driver.active.set(GpuLikeDriver())
    assert str(_load(stem).DEVICE) == "cuda:0"


def test_cpu_selects_the_cpu_driver_and_gives_the_caller_its_own_back(capsys):
    gpu = GpuLikeDriver()
    driver.active.set(gpu)
    assert run_all.main(["-q", "-k", "01", "--cpu"]) == 0
    out = capsys.readouterr().out
    assert "1/1 passed" in out and "device: CPU" in out
    assert str(sys.modules["naiad_example_01_vector_add"].DEVICE) == "cpu"
    assert driver.active.get() is gpu


def test_a_cuda_driver_without_a_cuda_build_of_torch_falls_back_to_the_cpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    driver.active.set(GpuLikeDriver())
    assert run_all.select_device(cpu=False) == torch.device("cpu")
    assert driver.active.backend == "cpu"


def test_with_a_gpu_the_device_is_the_drivers(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device: "NVIDIA H100 80GB HBM3")
    driver.active.set(GpuLikeDriver())
    device = run_all.select_device(cpu=False)
    assert device == torch.device("cuda", 0)
    assert run_all.device_description(device) == "GPU (cuda:0, NVIDIA H100 80GB HBM3)"
    assert run_all.device_description(torch.device("cpu")) == "CPU"


# Calls that make a tensor (or a generator) from nothing: without `device=` it is in host memory.
_FACTORIES = {"empty", "zeros", "ones", "full", "rand", "randn", "randint", "arange", "tensor",
              "linspace", "as_tensor", "Generator"}  # fmt: skip


def _receivers(call: ast.Call):
    """The method names along `a.b().c().numpy()`'s receiver chain: ["c", "b"]."""
    node = call.func.value
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        yield node.func.attr
        node = node.func.value


@pytest.mark.parametrize("stem", STEMS)
def test_the_examples_make_their_tensors_on_device(stem):
    tree = ast.parse((EXAMPLES / f"{stem}.py").read_text())
    misplaced = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        func = node.func
        made_by_torch = isinstance(func.value, ast.Name) and func.value.id == "torch"
        if made_by_torch and func.attr == "from_numpy":
            misplaced.append(f"line {node.lineno}: torch.from_numpy makes a host tensor")
        elif made_by_torch and func.attr in _FACTORIES:
            if not any(k.arg == "device" for k in node.keywords):
                misplaced.append(f"line {node.lineno}: torch.{func.attr} without device=")
        elif func.attr == "numpy" and "cpu" not in _receivers(node):
            misplaced.append(f"line {node.lineno}: .numpy() of a tensor not copied to the host")
    assert not misplaced, f"{stem}: " + "; ".join(misplaced)
