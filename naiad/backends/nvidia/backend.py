"""The NVIDIA back end as the runtime sees it (backends/registry.py): targets `cuda:sm_NN`
(target.py), the stages of compiler.py, and the launcher that loads cubins through the CUDA
driver and launches them on the tensors' device. Its compiler is imported by the first compile
for a GPU, not when the back end is registered: a CPU launch never needs it."""

from __future__ import annotations

from ... import knobs
from ...language.target import CUDA_HOPPER, GPUTarget
from ..registry import Backend, register_backend
from .target import CudaTarget, cuda_target, target_for_device


class NvidiaBackend(Backend):
    name = "cuda"
    prefixes = ("cuda",)
    device_type = "cuda"
    launcher = "naiad.runtime.cuda_launcher:CudaLauncher"
    binary_stage = "cubin"
    compiles_ttgir_files = True

    def parse_target(self, name: str) -> CudaTarget:
        return cuda_target(name)

    def language_target(self, target: CudaTarget, options):
        """The language's rules on this GPU: its arch decides dot shapes and precisions."""
        return CUDA_HOPPER.with_options(
            name=target.name,
            arch=target.capability,
            debug=options.assertions,
            sanitize_overflow=options.sanitize_overflow,
            num_warps=options.num_warps,
            max_num_imprecise_acc_default=2**30 if target.capability == 90 else 0,
            bulk_tensor_reduce=target.capability >= 90,
            gpu_target=GPUTarget("cuda", target.capability, 32),
        )

    def stages(self, target, options):
        from . import compiler, passes  # noqa: F401  (passes: registers the TTGIR passes)

        return list(compiler.STAGES)

    def cache_facts(self, target: CudaTarget, options) -> dict:
        """The options the stages read, and the tools whose versions shape the code: the
        linker (it bounds the PTX ISA and makes the cubin), the libdevice linked and the
        libraries a launch names (`extern_libs`)."""
        from . import extern_libs, link

        return {
            "target": target.name,
            "num_warps": options.num_warps,
            "num_ctas": options.num_ctas,
            "num_stages": options.num_stages,  # how deep the pipeliner rings a loop's loads
            "maxnreg": options.maxnreg,
            "debug": bool(options.debug),
            "enable_fp_fusion": options.enable_fp_fusion,
            "linker": link.linker_version(),
            "libdevice": _libdevice_identity(),
            "extern_libs": extern_libs.identity(getattr(options, "extern_libs", ())),
        }

    def device_target(self, index: int) -> str:
        """The device's own target, or the older one `NAIAD_CUDA_ARCH` asks for (warmup
        compiles for what a launch would)."""
        from . import driver

        major, minor = driver.device_properties(index).capability
        return target_for_device(major, minor, knobs.cuda_arch.get()).name


def _libdevice_identity() -> str:
    """Which libdevice a compile links: its path and size (none: 'missing')."""
    from . import libdevice

    try:
        found = libdevice.path()
    except libdevice.LibdeviceNotFound:
        return "missing"
    return f"{found}:{found.stat().st_size}"


register_backend(NvidiaBackend())
