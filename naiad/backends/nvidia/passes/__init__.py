"""The TTGIR passes of the NVIDIA back end, one per module, each registered by name (see
`naiad.ir.passes`): importing this package makes them runnable by `naiad-opt -p` and by the
pipeline of `naiad.backends.nvidia.compiler`.
"""

from . import (  # noqa: F401
    accelerate_matmul,
    allocate_shared_memory,
    allocate_warp_groups,
    bulk_reductions,
    coalesce,
    convert_to_ttgir,
    dot_operands_shared,
    optimize_accumulator_init,
    optimize_thread_locality,
    pipeline_loads,
    reduce_data_duplication,
    remove_layout_conversions,
    tensor_map_proofs,
)
