"""How a JIT function's launch runs: compiled for the CPU, compiled with the interpreter as a
fallback, or interpreted, from the knobs (`NAIAD_BACKEND`, `NAIAD_INTERPRET`) and the
function's own `interpret` flag."""

from __future__ import annotations

from .. import knobs

__all__ = ["compile_mode", "interpreting"]


def interpreting() -> bool:
    """Whether the knobs run every launch in the interpreter (`NAIAD_BACKEND=interpreter`,
    `NAIAD_INTERPRET=1`, Triton's `TRITON_INTERPRET=1`)."""
    return knobs.backend.get().strip().lower() == "interpreter" or bool(knobs.interpret.get())


def compile_mode(jit_function) -> str | None:
    """How a launch runs: "cpu" (compiled, `NAIAD_BACKEND=cpu`: what the back
    end cannot compile is an error), "auto" (the default: compiled, and in the interpreter
    with a warning when the kernel uses what the CPU back end does not compile yet), or None
    (the interpreter: `NAIAD_BACKEND=interpreter`, `NAIAD_INTERPRET=1`, `interpret=True`).
    Debug mode compiles too: asserts on and every access bounds-checked (docs/cpu.md). Unless
    the interpreter is chosen, a launch with torch CUDA tensors runs compiled on their GPU
    (cuda_launcher.py), whichever of "cpu" and "auto" is set."""
    if jit_function.interpret or interpreting():
        return None
    backend = knobs.backend.get().strip().lower() or "auto"
    if backend not in ("cpu", "auto"):
        raise ValueError(f"NAIAD_BACKEND={backend!r}: expected 'cpu', 'interpreter' or unset")
    return backend
