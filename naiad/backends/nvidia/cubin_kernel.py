"""A compiled kernel as the runtime launches it (`CubinKernel`): loaded on each device the first
time it runs there, its arguments bound into one preallocated parameter block.

Every driver call goes through driver.py, looked up there at call time (`driver.launch`), so that
the one module that calls CUDA stays the one place to replace it (tests do, with fakes).
"""

from __future__ import annotations

import threading

from . import driver, launch_attributes
from .param_block import ParamBlock


class CubinKernel:
    """A compiled kernel as the runtime launches it: its cubin is loaded on a device the first
    time it runs there; `launch` binds the arguments into one preallocated parameter block.

    A kernel compiled for an older architecture than the device's (`NAIAD_CUDA_ARCH`) loads
    from its PTX, which the driver compiles for the device, when its cubin does not run there.

    A pointer argument is a CUDA tensor (anything with `data_ptr()` and a `device`), an integer
    address, or None (a null pointer). The kernel runs on its tensors' device, which they must
    share; with no tensor among the arguments, on the current device.

    Safe from several threads: a device's module is loaded once (the first thread loads it, the
    others wait), and a launch holds the kernel's lock from writing the shared parameter block
    until cuLaunchKernel has copied it. Modules are never unloaded (as the CUDA runtime keeps
    its own), so a `Function` handed out stays valid.

    `attributes` (launch_attributes.names) launch it through cuLaunchKernelEx: programmatic
    dependent launch, a cooperative grid."""

    def __init__(
        self,
        cubin: bytes,
        entry: str,
        signature: tuple[str, ...],
        *,
        num_warps: int = 4,
        shared: int = 0,
        arg_names: tuple[str, ...] | None = None,
        ptx: str | None = None,
        attributes: tuple[str, ...] = (),
    ):
        self.cubin, self.entry, self.signature = cubin, entry, tuple(signature)
        self.ptx, self.attributes = ptx, attributes
        self.threads, self.shared = 32 * num_warps, shared
        self.arg_names = arg_names or tuple(f"argument {i}" for i in range(len(signature)))
        self.params = ParamBlock(self.signature)
        self._pointers = frozenset(i for i, kind in enumerate(self.signature) if kind[0] == "*")
        self._functions: dict[int, driver.Function] = {}
        self._launching = threading.Lock()

    def function(self, device: int) -> driver.Function:
        """The kernel loaded on `device` (loaded there on first use)."""
        loaded = self._functions.get(device)
        if loaded is None:
            with driver._loading:
                loaded = self._functions.get(device)
                if loaded is None:
                    loaded = self._functions[device] = driver.load_function(
                        self.cubin, self.entry, device, self.shared, self.ptx
                    )
        return loaded

    def _bind(self, args) -> int:
        """Write `args` into the parameter block; return the device they live on."""
        if len(args) != len(self.signature):
            raise TypeError(
                f"`{self.entry}` takes {len(self.signature)} arguments, got {len(args)}"
            )
        device = None
        for index, value in enumerate(args):
            if index in self._pointers and hasattr(value, "data_ptr"):
                where = value.device
                if where.type != "cuda":
                    raise ValueError(
                        f"{self.arg_names[index]} of `{self.entry}` is a tensor on {where}; "
                        "a kernel compiled for CUDA takes CUDA tensors"
                    )
                if device is None:
                    device = where.index or 0
                elif (where.index or 0) != device:
                    raise ValueError(
                        f"{self.arg_names[index]} of `{self.entry}` is on cuda:{where.index}, "
                        f"other arguments on cuda:{device}; a kernel's tensors share one device"
                    )
                value = value.data_ptr()
            elif index in self._pointers and value is None:
                value = 0
            elif index in self._pointers and not isinstance(value, int):
                raise TypeError(
                    f"{self.arg_names[index]} of `{self.entry}` is a {type(value).__name__}; "
                    "a kernel compiled for CUDA takes CUDA tensors (or an address)"
                )
            self.params.set(index, value)
        return driver.current_device() if device is None else device

    def launch(self, grid, args, stream: int) -> None:
        """Run the kernel over `grid` (one to three sizes) on `stream` of its tensors' device."""
        grid = (tuple(grid) + (1, 1))[:3]
        driver.check_grid(grid)
        with self._launching:  # one parameter block: no other thread writes it until launched
            device = self._bind(args)
            function = self.function(device)
            if self.attributes:
                launch_attributes.launch(
                    function, grid, self.threads, self.shared, stream, self.params, self.attributes
                )
            else:
                driver.launch(function, grid, self.threads, self.shared, stream, self.params)
