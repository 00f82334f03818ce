"""What a launch that tiering ran in the interpreter returns while its kernel compiles in the
background (cpu_tiering.py)."""

from __future__ import annotations


class CompiledLater:
    """What a launch run in the interpreter while its kernel compiles returns, in place of the
    CompiledKernel a compiled launch returns (`kernel[grid](...).asm['llir']`, as in Triton):
    the first attribute read gets the kernel (`get`: finished here, or waited for) and reads
    it; later reads go straight to it."""

    def __init__(self, get):
        self._get = get
        self._kernel = None

    def __getattr__(self, name: str):
        if name.startswith("__"):  # (copy, pickle and the like ask for dunders)
            raise AttributeError(name)
        if self._kernel is None:
            self._kernel = self._get()
        return getattr(self._kernel, name)

    def __repr__(self) -> str:
        state = "compiling" if self._kernel is None else repr(self._kernel)
        return f"CompiledLater({state})"
