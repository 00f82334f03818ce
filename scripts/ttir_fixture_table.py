"""The TTIR fixture table: which kernels scripts/make_ttir_fixtures.py compiles, and how.

Each `Fixture` names a kernel of one of the kernel modules below and gives example arguments for
every parameter, as a launch would pass them: `Ptr(dtype)` for a tensor (16-byte aligned unless
given an `offset`), `Desc(...)` for a host tensor descriptor, Python ints/floats/bools for scalars,
and values for constexprs. The script turns them into the signature, constexprs and
`tt.divisibility` attributes with Triton's own specializer, as a launch does. Plain Python: no
triton import here.
"""

import dataclasses

KERNEL_MODULES = {
    "tutorials": "scripts/ttir_fixture_tutorials.py",
    "tutorial_06b": "scripts/ttir_fixture_tutorial_06b.py",
    "kernels": "scripts/ttir_fixture_kernels.py",
}


# ---------------------------------------------------------------------------------------------
# The fixture table
# ---------------------------------------------------------------------------------------------

_ITEMSIZE = {
    "bool": 1,
    "int8": 1,
    "uint8": 1,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
    "int16": 2,
    "float16": 2,
    "bfloat16": 2,
    "int32": 4,
    "uint32": 4,
    "float32": 4,
    "int64": 8,
    "float64": 8,
}


class _DType(str):
    """A torch dtype's name with its `itemsize`, as much of a dtype as Triton's host code reads."""

    @property
    def itemsize(self):
        return _ITEMSIZE[self]


@dataclasses.dataclass(frozen=True)
class Ptr:
    """A stand-in for a tensor argument: what Triton's specializer reads (dtype, data_ptr)."""

    dtype_name: str  # torch's dtype name: "float16", "float8_e4m3fn", "int32", ...
    offset: int = 0  # bytes past a 256-byte-aligned address; not a multiple of 16 = unaligned

    @property
    def dtype(self):
        return _DType(self.dtype_name)

    def data_ptr(self):
        return 0x7F0000000000 + self.offset


@dataclasses.dataclass(frozen=True)
class Desc:
    """A host-side tensor descriptor argument (triton.tools.tensor_descriptor.TensorDescriptor)."""

    base: Ptr
    shape: tuple
    strides: tuple
    block_shape: tuple

    def make(self):
        from triton.tools.tensor_descriptor import TensorDescriptor

        return TensorDescriptor(
            self.base, list(self.shape), list(self.strides), list(self.block_shape)
        )


@dataclasses.dataclass
class Fixture:
    name: str
    module: str  # key of KERNEL_MODULES
    kernel: str
    args: dict  # every parameter of the kernel, in order, with an example value
    options: dict = dataclasses.field(default_factory=dict)  # num_warps, num_stages, debug, ...
    note: str = ""


F16, F32, I32 = Ptr("float16"), Ptr("float32"), Ptr("int32")
_QKV_ROWS = (
    4 * 32 * 1024
)  # Z * H * N_CTX of the attention fixtures: q, k, v, o viewed as (rows, 64)

TABLE = [
    # --- Triton's tutorials (kernel bodies from examples/) --------------------------------------
    Fixture(
        "01_vector_add",
        "tutorials",
        "add_kernel",
        dict(x_ptr=F32, y_ptr=F32, output_ptr=F32, n_elements=98432, BLOCK_SIZE=1024),
        note="the tutorial's launch: size 98432, BLOCK_SIZE 1024",
    ),
    Fixture(
        "02_fused_softmax",
        "tutorials",
        "softmax_kernel",
        dict(
            output_ptr=F32,
            input_ptr=F32,
            input_row_stride=781,
            output_row_stride=781,
            n_rows=1823,
            n_cols=781,
            BLOCK_SIZE=1024,
            num_stages=2,
        ),
        options=dict(num_warps=8),
        note="the tutorial's 1823 x 781 fp32 input; persistent loop with tl.range(num_stages=2)",
    ),
    Fixture(
        "03_matmul",
        "tutorials",
        "matmul_kernel",
        dict(
            a_ptr=F16,
            b_ptr=F16,
            c_ptr=F16,
            M=512,
            N=512,
            K=512,
            stride_am=512,
            stride_ak=1,
            stride_bk=512,
            stride_bn=1,
            stride_cm=512,
            stride_cn=1,
            BLOCK_SIZE_M=128,
            BLOCK_SIZE_N=128,
            BLOCK_SIZE_K=64,
            GROUP_SIZE_M=8,
            ACTIVATION="leaky_relu",
        ),
        options=dict(num_warps=8, num_stages=3),
        note="fp16 512x512x512, contiguous (unit strides specialize to constexpr 1), leaky_relu",
    ),
    Fixture(
        "04_dropout",
        "tutorials",
        "_dropout",
        dict(x_ptr=F32, x_keep_ptr=I32, output_ptr=F32, n_elements=98432, p=0.5, BLOCK_SIZE=1024),
    ),
    Fixture(
        "04_seeded_dropout",
        "tutorials",
        "_seeded_dropout",
        dict(x_ptr=F32, output_ptr=F32, n_elements=98432, p=0.5, seed=123, BLOCK_SIZE=1024),
    ),
    Fixture(
        "05_layer_norm_fwd",
        "tutorials",
        "_layer_norm_fwd_fused",
        dict(
            X=F16,
            Y=F16,
            W=F16,
            B=F16,
            Mean=F32,
            Rstd=F32,
            stride=8192,
            N=8192,
            eps=1e-5,
            BLOCK_SIZE=8192,
        ),
        options=dict(num_warps=8),
        note="the tutorial's fp16 1151 x 8192 input",
    ),
    Fixture(
        "05_layer_norm_bwd_dx",
        "tutorials",
        "_layer_norm_bwd_dx_fused",
        dict(
            DX=F16,
            DY=F16,
            DW=F16,
            DB=F16,
            X=F16,
            W=F16,
            Mean=F32,
            Rstd=F32,
            Lock=I32,
            stride=8192,
            N=8192,
            GROUP_SIZE_M=96,
            BLOCK_SIZE_N=8192,
        ),
        options=dict(num_warps=8),
    ),
    Fixture(
        "05_layer_norm_bwd_dwdb",
        "tutorials",
        "_layer_norm_bwd_dwdb",
        dict(
            DW=F16,
            DB=F16,
            FINAL_DW=F16,
            FINAL_DB=F16,
            M=96,
            N=8192,
            BLOCK_SIZE_M=32,
            BLOCK_SIZE_N=128,
        ),
    ),
    Fixture(
        "06_fused_attention",
        "tutorials",
        "_attn_fwd",
        dict(
            sm_scale=0.5,
            M=F32,
            Z=4,
            H=32,
            desc_q=F16,
            desc_k=F16,
            desc_v=F16,
            desc_o=F16,
            N_CTX=1024,
            HEAD_DIM=64,
            BLOCK_M=128,
            BLOCK_N=64,
            FP8_OUTPUT=False,
            STAGE=3,
            warp_specialize=False,
            IS_HOPPER=True,
        ),
        options=dict(num_warps=4, num_stages=3),
        note="causal (STAGE=3), fp16, HEAD_DIM 64, pointers in (descriptors made in the kernel)",
    ),
    Fixture(
        "06_fused_attention_noncausal",
        "tutorials",
        "_attn_fwd",
        dict(
            sm_scale=0.5,
            M=F32,
            Z=4,
            H=32,
            desc_q=F16,
            desc_k=F16,
            desc_v=F16,
            desc_o=F16,
            N_CTX=1024,
            HEAD_DIM=64,
            BLOCK_M=128,
            BLOCK_N=64,
            FP8_OUTPUT=False,
            STAGE=1,
            warp_specialize=False,
            IS_HOPPER=True,
        ),
        options=dict(num_warps=4, num_stages=3),
        note="non-causal (STAGE=1)",
    ),
    Fixture(
        "06_fused_attention_host_descriptors",
        "tutorials",
        "_attn_fwd",
        dict(
            sm_scale=0.5,
            M=F32,
            Z=4,
            H=32,
            desc_q=Desc(F16, (_QKV_ROWS, 64), (64, 1), (128, 64)),
            desc_k=Desc(F16, (_QKV_ROWS, 64), (64, 1), (64, 64)),
            desc_v=Desc(F16, (_QKV_ROWS, 64), (64, 1), (64, 64)),
            desc_o=Desc(F16, (_QKV_ROWS, 64), (64, 1), (128, 64)),
            N_CTX=1024,
            HEAD_DIM=64,
            BLOCK_M=128,
            BLOCK_N=64,
            FP8_OUTPUT=False,
            STAGE=3,
            warp_specialize=False,
            IS_HOPPER=True,
        ),
        options=dict(num_warps=4, num_stages=3),
        note="causal, with host TensorDescriptors as the tutorial passes them on Hopper",
    ),
    Fixture(
        "06b_fused_attention_block_ptr",
        "tutorial_06b",
        "_attn_fwd",
        dict(
            Q=F16,
            K=F16,
            V=F16,
            sm_scale=0.5,
            M=F32,
            Out=F16,
            stride_qz=2097152,
            stride_qh=65536,
            stride_qm=64,
            stride_qk=1,
            stride_kz=2097152,
            stride_kh=65536,
            stride_kn=64,
            stride_kk=1,
            stride_vz=2097152,
            stride_vh=65536,
            stride_vk=64,
            stride_vn=1,
            stride_oz=2097152,
            stride_oh=65536,
            stride_om=64,
            stride_on=1,
            Z=4,
            H=32,
            N_CTX=1024,
            HEAD_DIM=64,
            BLOCK_M=128,
            BLOCK_N=64,
            STAGE=3,
        ),
        options=dict(num_warps=4, num_stages=3),
        note="causal, contiguous fp16 (4, 32, 1024, 64) q/k/v/o",
    ),
    # --- Language coverage (scripts/ttir_fixture_kernels.py) ------------------------------------
    Fixture(
        "lang_if_else_values",
        "kernels",
        "if_else_values",
        dict(X=F32, Y=F32, n=1000, flag=3, BLOCK=128),
    ),
    Fixture("lang_while_loop", "kernels", "while_loop", dict(X=F32, Y=F32, n=1000, BLOCK=64)),
    Fixture(
        "lang_nested_for_tuple",
        "kernels",
        "nested_for_tuple",
        dict(X=F32, Y=F32, M=37, N=1000, stride=1024, BLOCK=128),
    ),
    Fixture(
        "lang_static_range", "kernels", "static_range_unroll", dict(X=F32, Y=F32, BLOCK=64, STEPS=3)
    ),
    Fixture(
        "lang_early_return",
        "kernels",
        "early_return",
        dict(X=F32, Y=F32, n=1000, limit=2.0, BLOCK=128),
    ),
    Fixture("lang_jit_calls", "kernels", "jit_calls", dict(X=F32, Y=F32, Z=F32, a=2.0, BLOCK=64)),
    Fixture(
        "lang_reduce_custom",
        "kernels",
        "reduce_custom",
        dict(X=F32, S=F32, V=F32, I=I32, BLOCK_M=32, BLOCK_N=64),
    ),
    Fixture("lang_scan", "kernels", "scan_ops", dict(X=F32, Y=F32, Z=I32, BLOCK=128)),
    Fixture("lang_sort", "kernels", "sort_ops", dict(X=F32, Y=F32, BLOCK_M=8, BLOCK_N=32)),
    Fixture(
        "lang_atomics",
        "kernels",
        "atomics",
        dict(X=F32, Counter=I32, Lock=I32, Out=F32, n=1000, BLOCK=128),
    ),
    Fixture(
        "lang_block_ptr",
        "kernels",
        "block_ptr_advance",
        dict(A=F16, B=F16, M=1000, N=512, stride_m=512, stride_n=1, BLOCK_M=64, BLOCK_N=64),
    ),
    Fixture(
        "lang_tensor_descriptor",
        "kernels",
        "tensor_descriptor",
        dict(A=F16, B=F16, M=1024, N=512, BLOCK_M=64, BLOCK_N=64),
    ),
    Fixture(
        "lang_dot_acc",
        "kernels",
        "dot_acc",
        dict(A=F16, B=F16, C=F32, K=256, BLOCK_M=64, BLOCK_N=32, BLOCK_K=32),
    ),
    Fixture(
        "lang_casts",
        "kernels",
        "casts",
        dict(
            X=F32,
            Y16=F16,
            YB=Ptr("bfloat16"),
            Y8A=Ptr("float8_e4m3fn"),
            Y8B=Ptr("float8_e5m2"),
            YI=Ptr("int64"),
            YU=Ptr("float64"),
            BLOCK=128,
        ),
    ),
    Fixture(
        "lang_elementwise",
        "kernels",
        "elementwise",
        dict(X=F32, Y=F32, I=I32, U=Ptr("uint32"), lo=-1.0, hi=1.0, BLOCK=128),
    ),
    Fixture(
        "lang_debug_ops",
        "kernels",
        "debug_ops",
        dict(X=F32, Y=F32, n=1000, BLOCK=128),
        options=dict(debug=True),
        note="debug=True, so device_assert is kept",
    ),
    Fixture("lang_hints", "kernels", "hints", dict(X=F32, Y=F32, n=1000, stride=24, BLOCK=64)),
    Fixture(
        "lang_int64_args",
        "kernels",
        "int64_args",
        dict(
            P16=F32,
            P=Ptr("float32", offset=4),
            big=2**40,
            small=7,
            d16=32,
            one=1,
            f=1.5,
            b=True,
            BLOCK=64,
        ),
        note="P16 %16-aligned, P not; big i64 (%16), small i32, d16 i32 %16, one -> constexpr 1",
    ),
    Fixture(
        "lang_constexpr_dead_branch",
        "kernels",
        "constexpr_dead_branch",
        dict(X=F32, Y=F32, n=1000, MODE="double", USE_BIAS=False, BLOCK=128),
    ),
    Fixture("lang_shape_ops", "kernels", "shape_ops", dict(X=F32, Y=F32, BLOCK_M=16, BLOCK_N=32)),
    Fixture("lang_loop_options", "kernels", "loop_options", dict(X=F32, Y=F32, n=1000, BLOCK=64)),
]
