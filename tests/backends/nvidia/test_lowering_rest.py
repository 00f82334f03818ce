"""The rest of the language on the NVIDIA path (lowering/: atomics, scan, debug_ops, shape_ops,
fp8, inline_asm; language/extra/cuda.py), without a GPU:

- the software fp8 rounding and the fp8 tables are plain LLVM IR: they run here, JIT-compiled
  for the host, and must give the interpreter's bits (naiad/runtime/interpreter/floats.py) on
  every fp8 pattern and on seeded samples of fp32 / fp64;
- every kernel compiles for sm_80 and sm_90a through `warmup(target=...)`, its PTX assembles
  with ptxas, and holds the instructions Triton's would (atom qualifiers, cvt.satfinite,
  vprintf / __assertfail, shfl.sync.bfly).

Values on the GPU are checked by the language tier with `-m gpu` (tests/language, the "cuda"
backend) and tests/gpu/test_language_gpu.py.
"""

import ctypes
import zlib

import ml_dtypes
import numpy as np
import pytest
from host_code import load_ir
from test_lowering import assemble, assembled_ptx, count
from test_toolchain import needs_ptxas

import naiad
import naiad.language as tl
from naiad.backends.nvidia.layouts import to_linear_layout
from naiad.backends.nvidia.lowering import fp8
from naiad.backends.nvidia.lowering.context import Context
from naiad.backends.nvidia.lowering.scan import position_bits
from naiad.dialects.ttg.attributes import BlockedEncodingAttr
from naiad.language.extra import cuda
from naiad.runtime.interpreter.floats import convert

_TRITON_NAMES = {"f8E4M3FN": "fp8e4nv", "f8E5M2": "fp8e5", "f32": "fp32", "f64": "fp64"}
_NP_FP8 = {"f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E5M2": ml_dtypes.float8_e5m2}


# -- fp8 arithmetic, run on the host ------------------------------------------------------
def downcast_ir(src: str, dst: str, rtz: bool) -> str:
    """The lowering's software rounding src -> fp8 `dst` as LLVM IR of
    `void f(src *in, i8 *out, i64 n)`."""
    ctx = Context(num_warps=4, capability=80, axis_info=None)
    ftype = fp8.llvm_type_of(src)
    result = fp8._software_downcast(ctx, "%x", src, dst, rtz)
    em = ctx.em
    return "\n".join(
        [
            *em.declarations.values(),
            "define void @f(ptr %in, ptr %out, i64 %n) {",
            "entry:",
            *em.entry,
            "  br label %loop",
            "loop:",
            "  %i = phi i64 [ 0, %entry ], [ %next, %loop ]",
            f"  %at = getelementptr {ftype}, ptr %in, i64 %i",
            f"  %x = load {ftype}, ptr %at",
            *em.body,
            "  %to = getelementptr i8, ptr %out, i64 %i",
            f"  store i8 {result}, ptr %to",
            "  %next = add i64 %i, 1",
            "  %more = icmp ult i64 %next, %n",
            "  br i1 %more, label %loop, label %done",
            "done:",
            "  ret void",
            "}",
        ]
    )


def _host_function(src: str, dst: str, rtz: bool):
    """`downcast_ir` compiled for this machine: the loaded object and the callable."""
    loaded = load_ir(downcast_ir(src, dst, rtz), ["f"], "downcast", optimized=False)
    signature = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
    return loaded, signature(loaded.address("f"))


def _samples(src: str, dst: str, gen) -> np.ndarray:
    """Every fp8 value, the midpoints between neighbours and one ulp either side, the
    specials, and random bit patterns of every magnitude."""
    wide = np.float32 if src == "f32" else np.float64
    values = np.arange(256, dtype=np.uint8).view(_NP_FP8[dst]).astype(wide)
    values = np.sort(values[np.isfinite(values)])
    middles = (values[1:] + values[:-1]) / 2
    near = np.concatenate([middles, np.nextafter(middles, wide(np.inf))])
    near = np.concatenate([near, np.nextafter(middles, wide(-np.inf))])
    specials = np.array([np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0, 1e30, -1e30, 1e-30], wide)
    bits = np.uint32 if src == "f32" else np.uint64
    info = np.iinfo(bits)
    random = gen.integers(0, info.max, 20000, dtype=bits, endpoint=True).view(wide)
    scaled = (gen.standard_normal(20000) * np.exp2(gen.integers(-24, 20, 20000))).astype(wide)
    return np.concatenate([values, near, specials, random, scaled]).astype(wide)


@pytest.mark.parametrize("src", ["f32", "f64"])
@pytest.mark.parametrize("dst", ["f8E4M3FN", "f8E5M2"])
@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_software_fp8_rounding_matches_the_interpreter(src, dst, rounding):
    gen = np.random.default_rng(zlib.crc32(f"{src}{dst}{rounding}".encode()))
    engine, function = _host_function(src, dst, rounding == "rtz")
    x = np.ascontiguousarray(_samples(src, dst, gen))
    out = np.zeros(x.size, np.uint8)
    function(x.ctypes.data, out.ctypes.data, x.size)
    expected = convert(x, _TRITON_NAMES[src], _TRITON_NAMES[dst], rounding).view(np.uint8)
    bad = np.flatnonzero(out != expected)
    assert bad.size == 0, (
        f"{bad.size} of {x.size} differ; first {x[bad[0]]!r}: {out[bad[0]]:#x} "
        f"!= {expected[bad[0]]:#x}"
    )
    del engine


@pytest.mark.parametrize("src", ["f8E4M3FN", "f8E5M2"])
@pytest.mark.parametrize("dst", ["f16", "bf16", "f32"])
def test_fp8_tables_match_the_interpreter(src, dst):
    triton = {"f16": "fp16", "bf16": "bf16", "f32": "fp32"}[dst]
    patterns = np.arange(256, dtype=np.uint8).view(_NP_FP8[src])
    expected = convert(patterns, _TRITON_NAMES[src], triton)
    expected = expected.view(np.uint32 if dst == "f32" else np.uint16)
    table = [fp8._table_entry(src, dst, b) for b in range(256)]
    assert table == [int(e) for e in expected]


# -- the scan's plan, simulated for every thread ------------------------------------------
def _simulate_scan(layout, axis: int, size: int, reverse: bool) -> dict:
    """scan.py's steps on every thread, with tuples of positions as values and concatenation
    as the combine (associative, not commutative): element coordinates -> its final S."""
    threads = 32 << len(layout.bases("warp"))
    registers = layout.in_dim_size("register")
    coords = {
        (tid, r): layout.apply(register=r, lane=tid % 32, warp=tid // 32)
        for tid in range(threads)
        for r in range(registers)
    }
    s = {key: (c[axis],) for key, c in coords.items()}
    t = dict(s)
    for b, (name, index) in enumerate(position_bits(layout, axis, size)):
        by_element = {coords[key]: value for key, value in t.items()}
        partner = {}
        for (tid, r), c in coords.items():
            if name == "register":
                partner[tid, r] = t[tid, r ^ (1 << index)]
            elif name == "lane":
                partner[tid, r] = t[tid ^ (1 << index), r]
            else:  # warps: through the scratch, by the element's coordinates
                other = list(c)
                other[axis] ^= 1 << b
                partner[tid, r] = by_element[tuple(other)]
        for key, c in coords.items():
            upper = bool(c[axis] >> b & 1) != reverse
            p = partner[key]
            s[key], t[key] = (p + s[key], p + t[key]) if upper else (s[key], t[key] + p)
    return {coords[key]: value for key, value in s.items()}


@pytest.mark.parametrize(
    ("shape", "size_per_thread", "order", "warps"),
    [
        ((1024,), [4], [0], 4),
        ((128,), [1], [0], 8),
        ((32, 64), [1, 4], [1, 0], 4),
        ((64, 8), [2, 1], [0, 1], 4),
        ((8, 256), [1, 2], [1, 0], 2),
        ((16, 16), [1, 1], [1, 0], 4),  # fewer elements than threads: copies
    ],
)
@pytest.mark.parametrize("reverse", [False, True])
def test_scan_plan_gives_every_element_its_prefix_in_order(
    shape, size_per_thread, order, warps, reverse
):
    encoding = BlockedEncodingAttr.for_shape(shape, size_per_thread, order, warps)
    layout = to_linear_layout(encoding, shape)
    for axis in range(len(shape)):
        size = shape[axis]
        for c, value in _simulate_scan(layout, axis, size, reverse).items():
            p = c[axis]
            expected = tuple(range(size - 1, p - 1, -1)) if reverse else tuple(range(p + 1))
            assert value == expected, (axis, c)


# -- kernels through ptxas ----------------------------------------------------------------
@naiad.jit
def _atomic_kernel(x, v, old, n, KIND: tl.constexpr, SEM: tl.constexpr, SCOPE: tl.constexpr):
    offs = tl.arange(0, 128)
    mask = offs < n
    val = tl.load(v + offs, mask=mask)
    ptr = x + offs % 8  # duplicate addresses: every element adds once
    if KIND == "add":
        got = tl.atomic_add(ptr, val, mask=mask, sem=SEM, scope=SCOPE)
    elif KIND == "max":
        got = tl.atomic_max(ptr, val, mask=mask, sem=SEM, scope=SCOPE)
    elif KIND == "min":
        got = tl.atomic_min(ptr, val, mask=mask, sem=SEM, scope=SCOPE)
    elif KIND == "and":
        got = tl.atomic_and(ptr, val, mask=mask, sem=SEM, scope=SCOPE)
    elif KIND == "or":
        got = tl.atomic_or(ptr, val, mask=mask, sem=SEM, scope=SCOPE)
    elif KIND == "xor":
        got = tl.atomic_xor(ptr, val, mask=mask, sem=SEM, scope=SCOPE)
    elif KIND == "xchg":
        got = tl.atomic_xchg(ptr, val, mask=mask, sem=SEM, scope=SCOPE)
    else:
        got = tl.atomic_cas(ptr, val, val + 1, sem=SEM, scope=SCOPE)
    tl.store(old + offs, got, mask=mask)


_ATOMIC_CASES = [
    ("add", "float32", "add.f32"),
    ("add", "float64", "add.f64"),
    ("add", "float16", "add.noftz.f16"),
    ("add", "int32", "add.u32"),
    ("add", "uint64", "add.u64"),
    ("max", "int32", "max.s32"),
    ("max", "uint32", "max.u32"),
    ("min", "int64", "min.s64"),
    ("max", "float32", "max.s32"),  # floats by their bits, as Triton
    ("and", "int32", "and.b32"),
    ("or", "uint64", "or.b64"),
    ("xor", "int32", "xor.b32"),
    ("xchg", "float32", "exch.b32"),
    ("cas", "int32", "cas.b32"),
    ("cas", "float16", "cas.b16"),
    ("cas", "int64", "cas.b64"),
]


@needs_ptxas
@pytest.mark.parametrize(("kind", "dtype", "instruction"), _ATOMIC_CASES)
def test_atomics_assemble(kind, dtype, instruction, tmp_path):
    a = np.ones(128, dtype)
    texts = assembled_ptx(
        _atomic_kernel, (a, a, a, 100), dict(KIND=kind, SEM="acq_rel", SCOPE="gpu"), tmp_path
    )
    # Triton's orders: the scope first for a read-modify-write, the semantics for a CAS.
    order = "acq_rel.gpu" if kind == "cas" else "gpu.acq_rel"
    for text in texts.values():
        assert f"atom.global.{order}.{instruction}" in text


@needs_ptxas
@pytest.mark.parametrize("sem", ["relaxed", "acquire", "release", "acq_rel"])
@pytest.mark.parametrize("scope", ["cta", "gpu", "sys"])
def test_atomic_semantics_and_scopes(sem, scope, tmp_path):
    a = np.ones(128, np.float32)
    text = assembled_ptx(
        _atomic_kernel, (a, a, a, 100), dict(KIND="add", SEM=sem, SCOPE=scope), tmp_path
    )
    assert f"atom.global.{scope}.{sem}.add.f32" in text["sm_90a"]


@needs_ptxas
def test_bf16_atomic_add_is_native_on_hopper_and_a_cas_loop_before(tmp_path):
    a = np.ones(128, ml_dtypes.bfloat16)
    texts = assembled_ptx(
        _atomic_kernel, (a, a, a, 100), dict(KIND="add", SEM="acq_rel", SCOPE="gpu"), tmp_path
    )
    assert "add.noftz.bf16" in texts["sm_90a"]
    assert "add.noftz.bf16" not in texts["sm_80"]
    assert "atom.acq_rel.gpu.global.cas.b16" in texts["sm_80"]  # Triton's spelling there


@naiad.jit
def _scalar_atomic(counter, out):
    tl.store(out, tl.atomic_add(counter, 1))


@needs_ptxas
def test_scalar_atomic_is_one_thread_and_broadcast(tmp_path):
    a = np.ones(4, np.int32)
    text = assembled_ptx(_scalar_atomic, (a, a), {}, tmp_path)["sm_90a"]
    assert count(r"atom\.global", text) == 1
    assert "bar.sync" in text  # the old value reaches every thread through shared memory


@naiad.jit
def _scan_kernel(x, out, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, REV: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(out + offs, tl.cumsum(tl.load(x + offs), axis=AXIS, reverse=REV))


@needs_ptxas
@pytest.mark.parametrize(("m", "n"), [(1, 1024), (4, 256), (64, 8), (32, 32)])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("reverse", [False, True])
def test_scans_assemble(m, n, axis, reverse, tmp_path):
    a = np.ones(m * n, np.float32)
    kwargs = dict(M=m, N=n, AXIS=axis, REV=reverse)
    text = assembled_ptx(_scan_kernel, (a, a), kwargs, tmp_path)["sm_90a"]
    if (m, n, axis) == (1, 1024, 1):
        assert "shfl.sync.bfly" in text and "bar.sync" in text  # lanes, then warps


def test_a_scan_across_warps_needs_one_slot_per_block():
    """A row of 16384 f32 on 8 warps, 4 elements a thread and the tile repeated along it: the
    first warp step is position bit 7 (after 2 register bits and 5 lane bits), so 128 slots
    of 4 bytes, where the whole row would be 64 KB (and 3 CTAs an SM)."""
    compiled = _scan_kernel.warmup(
        "*fp32", "*fp32", M=1, N=16384, AXIS=1, REV=False, num_warps=8, grid=(1,),
        target="cuda:sm_90a",
    )  # fmt: skip
    assert compiled.metadata["shared"] == 512


@naiad.jit
def _debug_kernel(x, n, N: tl.constexpr):
    offs = tl.arange(0, N)
    v = tl.load(x + offs, mask=offs < n)
    tl.device_print(" v: ", v)
    tl.device_print(" n: ", n)
    tl.device_print(" bits: ", v.to(tl.int32, bitcast=True), hex=True)
    tl.device_assert(v < 100, "v too big")


@needs_ptxas
def test_print_and_assert_assemble(tmp_path):
    a = np.ones(256, np.float32)
    compiled = _debug_kernel.warmup(a, 256, N=256, grid=(1,), target="cuda:sm_90a", debug=True)
    assemble(compiled.asm["ptx"], "sm_90a", tmp_path)
    llir = compiled.asm["llir"]
    assert 'c"pid (%u, %u, %u) idx (%3u) v: %f\\0A\\00"' in llir  # 256: three digits
    assert 'c"pid (%u, %u, %u) idx () n: %d\\0A\\00"' in llir
    assert "0x%08x" in llir and "v too big" in llir and __file__.split("/")[-1] in llir
    assert "call.uni" in compiled.asm["ptx"] or "vprintf" in compiled.asm["ptx"]
    assert "__assertfail" in compiled.asm["ptx"]


@naiad.jit
def _shape_kernel(x, out, hist, N: tl.constexpr):
    offs = tl.arange(0, N)
    v = tl.load(x + offs)
    a, b = tl.split(tl.join(v, v + 1))
    t = tl.trans(tl.reshape(tl.join(a, b), (2, N)))
    tl.store(out + offs, tl.sum(t, 1))
    tl.store(out + tl.arange(0, 2 * N), tl.cat(v, v, can_reorder=True))
    tl.store(out + offs, tl.gather(v, N - 1 - offs, 0))
    tl.store(hist + tl.arange(0, 16), tl.histogram(offs % 16, 16))
    table = tl.full((N,), 1.0, tl.float32) * (offs < 3).to(tl.float32)
    tl.store(out + offs, table)


@needs_ptxas
def test_shape_ops_assemble(tmp_path):
    a = np.ones(512, np.float32)
    h = np.ones(16, np.int32)
    assembled_ptx(_shape_kernel, (a, a, h), dict(N=256), tmp_path)


@naiad.jit
def _fp8_kernel(x, y, z, N: tl.constexpr, RTZ: tl.constexpr):
    offs = tl.arange(0, N)
    v = tl.load(x + offs)
    if RTZ:
        q = v.to(tl.float8e5, fp_downcast_rounding="rtz")
    else:
        q = v.to(tl.float8e4nv)
    tl.store(y + offs, q)
    tl.store(z + offs, tl.load(y + offs).to(tl.float32))


@needs_ptxas
def test_fp8_conversions_assemble(tmp_path):
    a = np.ones(256, np.float32)
    b = np.ones(256, ml_dtypes.float8_e4m3fn)
    texts = assembled_ptx(_fp8_kernel, (a, b, a), dict(N=256, RTZ=False), tmp_path)
    assert "cvt.rn.satfinite.e4m3x2.f32" in texts["sm_90a"]
    assert "cvt.rn.f16x2.e4m3x2" in texts["sm_90a"]
    assert "satfinite" not in texts["sm_80"]  # software rounding before sm_89
    c = np.ones(256, ml_dtypes.float8_e5m2)
    assembled_ptx(_fp8_kernel, (a, c, a), dict(N=256, RTZ=True), tmp_path)


@naiad.jit
def _asm_kernel(x, out, N: tl.constexpr):
    offs = tl.arange(0, N)
    v = tl.load(x + offs)
    tripled = tl.inline_asm_elementwise(
        "mul.lo.u32 $0, $1, 3;", "=r,r", [v], dtype=tl.int32, is_pure=True, pack=1
    )
    swapped = tl.inline_asm_elementwise(
        "prmt.b32 $0, $1, 0, 0x0123;", "=r,r", [v.to(tl.int8)], dtype=tl.int8, is_pure=True, pack=4
    )
    t0 = cuda.globaltimer()
    extra = (cuda.globaltimer() - t0).to(tl.int32) + cuda.smid() + cuda.num_threads()
    tl.store(out + offs, tripled + swapped + extra)


@naiad.jit
def _gdc_kernel(x, out, N: tl.constexpr):
    offs = tl.arange(0, N)
    cuda.gdc_wait()
    v = tl.load(x + offs)
    cuda.gdc_launch_dependents()
    tl.store(out + offs, v + 1)


@needs_ptxas
def test_grid_dependence_control_is_griddepcontrol_from_sm_90(tmp_path):
    """gdc_wait before the load, gdc_launch_dependents after it, on sm_90a; nothing on sm_80,
    where no launch depends on another's progress."""
    a = np.ones(128, np.float32)
    texts = assembled_ptx(_gdc_kernel, (a, a), dict(N=128), tmp_path)
    hopper = texts["sm_90a"]
    wait, launch = hopper.index("griddepcontrol.wait"), hopper.index("griddepcontrol.launch")
    load = hopper.index("ld.global")
    assert wait < load < launch
    assert "griddepcontrol" not in texts["sm_80"]


@needs_ptxas
def test_inline_asm_and_cuda_extras_assemble(tmp_path):
    a = np.ones(512, np.int32)
    text = assembled_ptx(_asm_kernel, (a, a), dict(N=512), tmp_path)["sm_90a"]
    assert "mul.lo.u32" in text and "prmt.b32" in text
    assert "%globaltimer" in text and "%smid" in text
