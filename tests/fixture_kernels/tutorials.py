"""The tutorial kernels of `scripts/ttir_fixture_tutorials.py` (Triton's TTIR fixtures), taken
from `examples/0[1-6]_*.py`, whose kernel bodies are the fixtures' source (only `triton` ->
`naiad`). The autotuned `matmul_kernel` (03) and `_attn_fwd` (06) are unwrapped: the fixtures
fix their meta-parameters.
"""

from fixture_kernels import example, jit_function

_vector_add = example("01_vector_add")
_softmax = example("02_fused_softmax")
_matmul = example("03_matmul")
_dropout_example = example("04_low_memory_dropout")
_layer_norm = example("05_layer_norm")
_attention = example("06_fused_attention")

add_kernel = _vector_add.add_kernel
softmax_kernel = _softmax.softmax_kernel
matmul_kernel = jit_function(_matmul.matmul_kernel)
leaky_relu = _matmul.leaky_relu
_dropout = _dropout_example._dropout
_seeded_dropout = _dropout_example._seeded_dropout
_layer_norm_fwd_fused = _layer_norm._layer_norm_fwd_fused
_layer_norm_bwd_dx_fused = _layer_norm._layer_norm_bwd_dx_fused
_layer_norm_bwd_dwdb = _layer_norm._layer_norm_bwd_dwdb
_attn_fwd_inner = _attention._attn_fwd_inner
_maybe_make_tensor_desc = _attention._maybe_make_tensor_desc
_attn_fwd = jit_function(_attention._attn_fwd)
