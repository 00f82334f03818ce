"""Inductor's generated Triton kernels compiled by Naiad for the CPU (cpu_backend="triton",
under `python -m naiad.run`, in a subprocess): each function matches eager, forward and, for
modules, backward. Small functions in the default tier; the models in the full tier."""

import pytest
from test_user_kernels import run_program

pytest.importorskip("torch")


def test_pointwise_softmax_and_naiad_ops_match_eager():
    seen = run_program("inductor_cpu.py", "pointwise", "softmax", "naiad_ops")
    assert seen == {
        "inductor sees triton": "True",
        "pointwise": "True",
        "softmax": "True",
        "naiad_ops": "True True",  # naiad.ops' direct calls: forward, and backward
    }


@pytest.mark.full
@pytest.mark.parametrize(
    "case, expected",
    [
        ("layer_norm_gelu", "True"),
        ("odd_reductions", "True"),
        ("softmax_matmul", "True"),
        ("scans_and_arg_reductions", "True"),
        ("embedding_bag", "True"),
        ("integers", "True"),
        ("matmul_epilogue", "True"),
        ("dynamic", "True"),
        ("mlp", "True True"),
        ("block", "True True"),
    ],
)
def test_models_match_eager_forward_and_backward(case, expected):
    assert run_program("inductor_cpu.py", case)[case] == expected


@pytest.mark.full
def test_inductors_compile_workers_send_naiad_kernels_back(tmp_path, monkeypatch):
    """Two compile workers, fresh caches: the kernels they compile pickle back (by reference)."""
    monkeypatch.setenv("TORCHINDUCTOR_COMPILE_THREADS", "2")
    monkeypatch.setenv("TORCHINDUCTOR_FX_GRAPH_CACHE", "0")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    monkeypatch.setenv("NAIAD_CACHE_DIR", str(tmp_path / "naiad"))
    seen = run_program("parallel_compile.py")
    assert seen == {"workers compile": "True", "matches eager": "True", "again": "True"}
