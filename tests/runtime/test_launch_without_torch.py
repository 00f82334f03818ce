"""A NumPy program never pays for torch: a launch does not import it (seconds of a first
launch where torch is installed). Torch imported later is keyed inline from then on.

Each case runs in a fresh interpreter, where `sys.modules` says what was imported.
"""

import os
import subprocess
import sys
import textwrap

_KERNEL = """
import sys
import numpy as np
import naiad
import naiad.language as tl

@naiad.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + tl.load(y_ptr + offsets, mask=mask), mask=mask)

rng = np.random.default_rng(3)
x, y = rng.random(1000, dtype=np.float32), rng.random(1000, dtype=np.float32)
out = np.full_like(x, np.nan)
"""


def _run(tmp_path, body: str) -> str:
    script = tmp_path / "program.py"  # a kernel's source must be in a file
    script.write_text(_KERNEL + textwrap.dedent(body))
    env = {k: v for k, v in os.environ.items() if k != "NAIAD_BACKEND"}  # compiled: the default
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=600, env=env
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_numpy_launches_never_import_torch(tmp_path):
    out = _run(
        tmp_path,
        """
        for backend in ("interpreter", "cpu"):
            with naiad.knobs.override(NAIAD_BACKEND=backend):
                add[(8,)](x, y, out, 1000, BLOCK=128)
                assert np.array_equal(out, x + y)
                add[(8,)](x, y, out, 1000, BLOCK=128)
        add.warmup(x, y, out, 1000, BLOCK=128, grid=(8,), target="cpu")
        print("torch" in sys.modules)
        """,
    )
    assert out.strip() == "False"


def test_torch_imported_after_the_first_launch_is_keyed_inline(tmp_path):
    out = _run(
        tmp_path,
        """
        add[(8,)](x, y, out, 1000, BLOCK=128)
        import torch
        tx, ty, tout = torch.from_numpy(x), torch.from_numpy(y), torch.empty(1000)
        add[(8,)](tx, ty, tout, 1000, BLOCK=128)  # slow path: the entry is remade
        calls = []
        run = add.run
        add.run = lambda *a, **k: calls.append(1) or run(*a, **k)
        tout.fill_(float("nan"))
        add[(8,)](tx, ty, tout, 1000, BLOCK=128)
        assert torch.equal(tout, tx + ty)
        print(len(calls), add._keyed_tensor is torch.Tensor)
        """,
    )
    assert out.split() == ["0", "True"]
