"""The profile's device table (what the GPU a profile was timed on can do), and the peak rates
the viewer's `util` divides by.

A CUDA device's entry holds what the driver says (runtime/driver.py): its compute capability
as `arch` ("90"), `num_sms`, the SM clock and the memory clock in kHz, and the memory bus
width in bits. Peak dense tensor-core throughput is SMs x clock x the operations one SM does
per clock at an operand width, from NVIDIA's published figures for each architecture (A100:
312 TFLOP/s fp16 on 108 SMs at 1.41 GHz is 2048 per SM per clock; H100 SXM: 989 TFLOP/s on
132 SMs at 1.83 GHz is 4096; B200 twice that again). Peak memory bandwidth is two transfers
per memory clock (double data rate) over the bus.
"""

from __future__ import annotations

# Compute capability -> operand width in bits -> dense tensor-core flops per SM per clock.
TENSOR_FLOPS_PER_SM_CLOCK = {
    "80": {8: 4096, 16: 2048, 32: 1024, 64: 128},
    "90": {8: 8192, 16: 4096, 32: 2048, 64: 256},
    "100": {8: 16384, 16: 8192, 32: 4096, 64: 128},
}


def cuda_table(device: int) -> dict:
    """The device table of a profile timed on CUDA device `device`."""
    from ...runtime.driver import CudaDriver

    props = CudaDriver().utils.get_device_properties(device)
    major, minor = props["capability"]
    return {
        "CUDA": {
            str(device): {
                "arch": f"{major}{minor}",
                "num_sms": props["multiprocessor_count"],
                "clock_rate": props["sm_clock_rate"],
                "memory_clock_rate": props["mem_clock_rate"],
                "bus_width": props["mem_bus_width"],
            }
        }
    }


def peak_flops(device: dict, width: int) -> float:
    """Dense tensor-core flop/s of a device table entry at an operand width of `width` bits."""
    per_clock = TENSOR_FLOPS_PER_SM_CLOCK.get(str(device["arch"]))
    if per_clock is None or width not in per_clock:
        known = ", ".join(f"sm_{arch}" for arch in TENSOR_FLOPS_PER_SM_CLOCK)
        raise ValueError(
            f"util: no peak flop rate is known for sm_{device['arch']} at {width} bits "
            f"(known: {known})"
        )
    return device["num_sms"] * device["clock_rate"] * 1e3 * per_clock[width]


def peak_bytes(device: dict) -> float:
    """Memory bytes/s of a device table entry: two transfers a memory clock over the bus."""
    return 2 * device["memory_clock_rate"] * 1e3 * device["bus_width"] / 8
