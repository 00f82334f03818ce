"""The kernels of the TTIR fixtures (`tests/ir/fixtures/`), with random arguments for each: what
the differential tests of the evaluator run, in the interpreter and in the evaluator.

`CASES[fixture]` gives the @naiad.jit kernel (from `tests/fixture_kernels/`: a copy of a `lang_*`
kernel, or a tutorial of `examples/`), a function of a NumPy generator giving every parameter's
value (constexprs included, as the fixture specialized them; sizes kept small), and the grid.
"""

from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
from fixture_kernels import example, jit_function
from fixture_kernels import lang as K

from naiad.tools.tensor_descriptor import TensorDescriptor


def rand(rng, *shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def out(*shape, dtype=np.float32):
    """An output array poisoned with all-ones bits (NaN for floats), so a missing store shows."""
    itemsize = np.dtype(dtype).itemsize
    return np.full(shape, 2 ** (8 * itemsize) - 1, f"u{itemsize}").view(dtype)


@dataclass
class Case:
    kernel: object  # a @naiad.jit function, or (tutorial stem, kernel name)
    args: object  # rng -> {parameter: value}, constexprs included
    grid: tuple = (1,)
    inexact: tuple = ()  # variants whose arithmetic Triton's optimizer changed
    options: dict = field(default_factory=dict)

    def jit(self):
        """The @naiad.jit function itself (a tutorial's autotuner is unwrapped: the fixture
        fixed the meta-parameters)."""
        kernel = self.kernel
        if isinstance(kernel, tuple):
            kernel = getattr(example(kernel[0]), kernel[1])
        return jit_function(kernel)


def attention(rng, stage, host):
    """Z 1, H 2, N_CTX 256, HEAD_DIM 64: q, k, v, o seen as (512, 64), as tutorial 06 does."""
    q, k, v = (rand(rng, 512, 64, dtype=np.float16) for _ in range(3))
    o = out(512, 64, dtype=np.float16)
    if host:
        q, o = (TensorDescriptor(x, [512, 64], [64, 1], [128, 64]) for x in (q, o))
        k, v = (TensorDescriptor(x, [512, 64], [64, 1], [64, 64]) for x in (k, v))
    return dict(
        sm_scale=0.5,
        M=out(512),
        Z=1,
        H=2,
        desc_q=q,
        desc_k=k,
        desc_v=v,
        desc_o=o,
        N_CTX=256,
        HEAD_DIM=64,
        BLOCK_M=128,
        BLOCK_N=64,
        FP8_OUTPUT=False,
        STAGE=stage,
        warp_specialize=False,
        IS_HOPPER=True,
    )


def attention_06b(rng):
    q, k, v = (rand(rng, 1, 2, 256, 64, dtype=np.float16) for _ in range(3))
    strides = dict(z=2 * 256 * 64, h=256 * 64, m=64, k=1)
    args = dict(Q=q, K=k, V=v, sm_scale=0.5, M=out(512), Out=out(1, 2, 256, 64, dtype=np.float16))
    for name, last in (("q", "k"), ("k", "k"), ("v", "n"), ("o", "n")):
        third = {"q": "m", "k": "n", "v": "k", "o": "m"}[name]
        args.update({f"stride_{name}z": strides["z"], f"stride_{name}h": strides["h"]})
        args.update({f"stride_{name}{third}": 64, f"stride_{name}{last}": 1})
    return dict(args, Z=1, H=2, N_CTX=256, HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64, STAGE=3)


CASES = {
    "01_vector_add": Case(
        ("01_vector_add", "add_kernel"),
        lambda r: dict(
            x_ptr=rand(r, 3000),
            y_ptr=rand(r, 3000),
            output_ptr=out(3000),
            n_elements=3000,
            BLOCK_SIZE=1024,
        ),
        grid=(3,),
    ),
    "02_fused_softmax": Case(
        ("02_fused_softmax", "softmax_kernel"),
        lambda r: dict(
            output_ptr=out(6, 781),
            input_ptr=rand(r, 6, 781),
            input_row_stride=781,
            output_row_stride=781,
            n_rows=6,
            n_cols=781,
            BLOCK_SIZE=1024,
            num_stages=2,
        ),
        grid=(4,),
    ),
    "04_dropout": Case(
        ("04_low_memory_dropout", "_dropout"),
        lambda r: dict(
            x_ptr=rand(r, 2000),
            x_keep_ptr=r.integers(0, 2, 2000, dtype=np.int32),
            output_ptr=out(2000),
            n_elements=2000,
            p=0.5,
            BLOCK_SIZE=1024,
        ),
        grid=(2,),
    ),
    "04_seeded_dropout": Case(
        ("04_low_memory_dropout", "_seeded_dropout"),
        lambda r: dict(
            x_ptr=rand(r, 2000),
            output_ptr=out(2000),
            n_elements=2000,
            p=0.5,
            seed=123,
            BLOCK_SIZE=1024,
        ),
        grid=(2,),
    ),
    "03_matmul": Case(
        ("03_matmul", "matmul_kernel"),
        lambda r: dict(
            a_ptr=rand(r, 256, 128, dtype=np.float16),
            b_ptr=rand(r, 128, 256, dtype=np.float16),
            c_ptr=out(256, 256, dtype=np.float16),
            M=256,
            N=256,
            K=128,
            stride_am=128,
            stride_ak=1,
            stride_bk=256,
            stride_bn=1,
            stride_cm=256,
            stride_cn=1,
            BLOCK_SIZE_M=128,
            BLOCK_SIZE_N=128,
            BLOCK_SIZE_K=64,
            GROUP_SIZE_M=8,
            ACTIVATION="leaky_relu",
        ),
        grid=(4,),
    ),
    "05_layer_norm_fwd": Case(
        ("05_layer_norm", "_layer_norm_fwd_fused"),
        lambda r: dict(
            X=rand(r, 3, 300, dtype=np.float16),
            Y=out(3, 300, dtype=np.float16),
            W=rand(r, 300, dtype=np.float16),
            B=rand(r, 300, dtype=np.float16),
            Mean=out(3),
            Rstd=out(3),
            stride=300,
            N=300,
            eps=1e-5,
            BLOCK_SIZE=8192,
        ),
        grid=(3,),
    ),
    "05_layer_norm_bwd_dx": Case(
        ("05_layer_norm", "_layer_norm_bwd_dx_fused"),
        lambda r: dict(
            DX=out(5, 300, dtype=np.float16),
            DY=rand(r, 5, 300, dtype=np.float16),
            DW=np.zeros((96, 300), np.float16),
            DB=np.zeros((96, 300), np.float16),
            X=rand(r, 5, 300, dtype=np.float16),
            W=rand(r, 300, dtype=np.float16),
            Mean=rand(r, 5),
            Rstd=np.abs(rand(r, 5)),
            Lock=np.zeros(192, np.int32),
            stride=300,
            N=300,
            GROUP_SIZE_M=96,
            BLOCK_SIZE_N=8192,
        ),
        grid=(5,),
    ),
    "05_layer_norm_bwd_dwdb": Case(
        ("05_layer_norm", "_layer_norm_bwd_dwdb"),
        lambda r: dict(
            DW=rand(r, 96, 300, dtype=np.float16),
            DB=rand(r, 96, 300, dtype=np.float16),
            FINAL_DW=out(300, dtype=np.float16),
            FINAL_DB=out(300, dtype=np.float16),
            M=96,
            N=300,
            BLOCK_SIZE_M=32,
            BLOCK_SIZE_N=128,
        ),
        grid=(3,),
    ),
    "06_fused_attention": Case(
        ("06_fused_attention", "_attn_fwd"), lambda r: attention(r, 3, host=False), grid=(2, 2)
    ),
    "06_fused_attention_noncausal": Case(
        ("06_fused_attention", "_attn_fwd"), lambda r: attention(r, 1, host=False), grid=(2, 2)
    ),
    "06_fused_attention_host_descriptors": Case(
        ("06_fused_attention", "_attn_fwd"), lambda r: attention(r, 3, host=True), grid=(2, 2)
    ),
    "06b_fused_attention_block_ptr": Case(
        ("06b_fused_attention_block_ptr", "_attn_fwd"), lambda r: attention_06b(r), grid=(2, 2)
    ),
    "lang_if_else_values": Case(
        K.if_else_values,
        lambda r: dict(X=rand(r, 1000), Y=out(1000), n=1000, flag=3, BLOCK=128),
        grid=(8,),
    ),
    "lang_while_loop": Case(
        K.while_loop, lambda r: dict(X=rand(r, 200), Y=out(64), n=100, BLOCK=64)
    ),
    "lang_nested_for_tuple": Case(
        K.nested_for_tuple,
        lambda r: dict(X=rand(r, 5 * 300), Y=out(128), M=5, N=300, stride=300, BLOCK=128),
    ),
    "lang_static_range": Case(
        K.static_range_unroll, lambda r: dict(X=rand(r, 64), Y=out(64), BLOCK=64, STEPS=3)
    ),
    "lang_early_return": Case(
        K.early_return,
        lambda r: dict(X=rand(r, 1000), Y=out(1000), n=1000, limit=0.5, BLOCK=128),
        grid=(9,),
    ),
    "lang_jit_calls": Case(
        K.jit_calls,
        lambda r: dict(X=rand(r, 64), Y=rand(r, 64), Z=rand(r, 1), a=2.0, BLOCK=64),
    ),
    "lang_reduce_custom": Case(
        K.reduce_custom,
        lambda r: dict(
            X=rand(r, 32, 64),
            S=out(96),
            V=out(32),
            I=out(96, dtype=np.int32),
            BLOCK_M=32,
            BLOCK_N=64,
        ),
    ),
    "lang_scan": Case(
        K.scan_ops,
        lambda r: dict(X=rand(r, 128) * 2, Y=out(128), Z=out(128, dtype=np.int32), BLOCK=128),
    ),
    "lang_sort": Case(
        K.sort_ops, lambda r: dict(X=rand(r, 8, 32), Y=out(8, 32), BLOCK_M=8, BLOCK_N=32)
    ),
    "lang_atomics": Case(
        K.atomics,
        lambda r: dict(
            X=rand(r, 1000),
            Counter=np.zeros(2, np.int32),
            Lock=np.zeros(1, np.int32),
            Out=np.zeros(16, np.float32),
            n=1000,
            BLOCK=128,
        ),
        grid=(8,),
    ),
    "lang_block_ptr": Case(
        K.block_ptr_advance,
        lambda r: dict(
            A=rand(r, 100, 192, dtype=np.float16),
            B=out(100, 192, dtype=np.float16),
            M=100,
            N=192,
            stride_m=192,
            stride_n=1,
            BLOCK_M=64,
            BLOCK_N=64,
        ),
        grid=(2,),
    ),
    "lang_tensor_descriptor": Case(
        K.tensor_descriptor,
        lambda r: dict(
            A=rand(r, 128, 192, dtype=np.float16),
            B=out(128, 192, dtype=np.float16),
            M=128,
            N=192,
            BLOCK_M=64,
            BLOCK_N=64,
        ),
        grid=(2, 3),
    ),
    "lang_dot_acc": Case(
        K.dot_acc,
        lambda r: dict(
            A=rand(r, 64, 64, dtype=np.float16),
            B=rand(r, 64, 32, dtype=np.float16),
            C=rand(r, 64, 32),
            K=64,
            BLOCK_M=64,
            BLOCK_N=32,
            BLOCK_K=32,
        ),
        inexact=(".ttir", "frontend"),  # both ran combine: dot + add became one dot
    ),
    "lang_casts": Case(
        K.casts,
        lambda r: dict(
            X=rand(r, 128) * 100,
            Y16=out(128, dtype=np.float16),
            YB=out(128, dtype=ml_dtypes.bfloat16),
            Y8A=out(128, dtype=ml_dtypes.float8_e4m3fn),
            Y8B=out(128, dtype=ml_dtypes.float8_e5m2),
            YI=out(128, dtype=np.int64),
            YU=out(128, dtype=np.float64),
            BLOCK=128,
        ),
    ),
    "lang_elementwise": Case(
        K.elementwise,
        lambda r: dict(
            X=rand(r, 128),
            Y=rand(r, 128),
            I=r.integers(-1000, 1000, 128, dtype=np.int32),
            U=r.integers(1, 2**32, 128, dtype=np.uint32),
            lo=-1.0,
            hi=1.0,
            BLOCK=128,
        ),
    ),
    "lang_debug_ops": Case(
        K.debug_ops,
        lambda r: dict(X=np.abs(rand(r, 200)) + 1, Y=out(200), n=200, BLOCK=128),
        grid=(2,),
        options={"debug": True},
    ),
    "lang_hints": Case(
        K.hints,
        lambda r: dict(X=rand(r, 1000), Y=out(1000), n=1000, stride=24, BLOCK=64),
        grid=(4,),
    ),
    "lang_int64_args": Case(
        K.int64_args,
        lambda r: dict(
            P16=rand(r, 64 * 32),
            P=rand(r, 64 * 7),
            big=2**40,
            small=7,
            d16=32,
            one=1,
            f=1.5,
            b=True,
            BLOCK=64,
        ),
    ),
    "lang_constexpr_dead_branch": Case(
        K.constexpr_dead_branch,
        lambda r: dict(
            X=rand(r, 1000), Y=out(1000), n=1000, MODE="double", USE_BIAS=False, BLOCK=128
        ),
    ),
    "lang_shape_ops": Case(
        K.shape_ops, lambda r: dict(X=rand(r, 16, 32), Y=out(16, 32), BLOCK_M=16, BLOCK_N=32)
    ),
    "lang_loop_options": Case(
        K.loop_options, lambda r: dict(X=rand(r, 100), Y=out(64), n=100, BLOCK=64)
    ),
}
