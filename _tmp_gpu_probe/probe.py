import inspect, json, math, os
import torch, triton, triton.language as tl
import numpy as np
R = {"triton": triton.__version__, "gpu": torch.cuda.get_device_name()}
dev = "cuda"

@triton.jit
def k_minmax(x_ptr, y_ptr, o_ptr, N: tl.constexpr, NAN: tl.constexpr, MAX: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs); y = tl.load(y_ptr + offs)
    if MAX:
        tl.store(o_ptr + offs, tl.maximum(x, y, propagate_nan=NAN))
    else:
        tl.store(o_ptr + offs, tl.minimum(x, y, propagate_nan=NAN))

def bits(t):
    t = t.cpu()
    w = {torch.float16: torch.int16, torch.float32: torch.int32, torch.float64: torch.int64, torch.bfloat16: torch.int16}[t.dtype]
    return t.view(w).tolist()

for dt in (torch.float16, torch.float32, torch.float64):
    x = torch.tensor([0.0, -0.0, float("nan"), 1.0, -0.0, 0.0, 2.0, float("nan")], dtype=dt, device=dev)
    y = torch.tensor([-0.0, 0.0, 1.0, float("nan"), -0.0, 0.0, float("nan"), float("nan")], dtype=dt, device=dev)
    for mx in (0, 1):
        for nan in ("NONE", "ALL"):
            o = torch.empty_like(x)
            k_minmax[(1,)](x, y, o, N=8, NAN=getattr(tl.PropagateNan, nan), MAX=mx)
            R[f"{'max' if mx else 'min'}_{nan}_{dt}"] = [repr(v) for v in o.cpu().tolist()], bits(o)

@triton.jit
def k_red(x_ptr, o_ptr, i_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(o_ptr, tl.max(x, 0)); tl.store(o_ptr + 1, tl.min(x, 0))
    tl.store(i_ptr, tl.argmax(x, 0)); tl.store(i_ptr + 1, tl.argmin(x, 0))
    v, i = tl.max(x, 0, return_indices=True)
    tl.store(o_ptr + 2, v); tl.store(i_ptr + 2, i)

for name, vals in (("zeros", [0.0, -0.0, -0.0, 0.0, -0.0, 0.0, 0.0, -0.0]), ("nan", [1.0, float("nan"), 3.0, 2.0, float("nan"), -5.0, 0.5, 3.0]),
                   ("nan_first", [float("nan"), 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])):
    x = torch.tensor(vals, dtype=torch.float32, device=dev)
    o = torch.empty(3, dtype=torch.float32, device=dev); i = torch.empty(3, dtype=torch.int32, device=dev)
    k_red[(1,)](x, o, i, N=8)
    R[f"red_{name}"] = [repr(v) for v in o.cpu().tolist()], bits(o), i.cpu().tolist()

@triton.jit
def k_sort(x_ptr, o_ptr, N: tl.constexpr, D: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(o_ptr + offs, tl.sort(tl.load(x_ptr + offs), descending=D))

x = torch.tensor([0.0, -0.0, 3.0, float("nan"), 1.0, -0.0, 2.0, 0.0], dtype=torch.float32, device=dev)
for d in (0, 1):
    o = torch.empty_like(x); k_sort[(1,)](x, o, N=8, D=d)
    R[f"sort_{d}"] = [repr(v) for v in o.cpu().tolist()], bits(o)

@triton.jit
def k_int(a_ptr, b_ptr, o_ptr, N: tl.constexpr, OP: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs); b = tl.load(b_ptr + offs)
    if OP == 0:
        r = a >> b
    elif OP == 1:
        r = a << b
    elif OP == 2:
        r = a // b
    elif OP == 3:
        r = a % b
    else:
        r = tl.umulhi(a, b)
    tl.store(o_ptr + offs, r)

a = torch.tensor([-128, -1, 64, 3], dtype=torch.int8, device=dev); b = torch.tensor([1, 9, 200, 0], dtype=torch.uint8, device=dev)
o = torch.empty(4, dtype=torch.uint8, device=dev); k_int[(1,)](a, b, o, N=4, OP=0); R["int8>>uint8"] = o.cpu().tolist()
a = torch.tensor([5, -5, -2**31, 7, 1, -1, 1, -8], dtype=torch.int32, device=dev); b = torch.tensor([0, 0, -1, 32, 40, 33, -1, 31], dtype=torch.int32, device=dev)
for op, name in ((0, "shr"), (1, "shl"), (2, "div"), (3, "mod")):
    o = torch.empty(8, dtype=torch.int32, device=dev); k_int[(1,)](a, b, o, N=8, OP=op); R[f"int32_{name}"] = o.cpu().tolist()
a = torch.tensor([-1, -1, 5, -2**31], dtype=torch.int32, device=dev); b = torch.tensor([-1, 3, -7, -2**31], dtype=torch.int32, device=dev)
o = torch.empty(4, dtype=torch.int32, device=dev); k_int[(1,)](a, b, o, N=4, OP=4); R["umulhi_int32"] = o.cpu().tolist()

@triton.jit
def k_fma(x_ptr, y_ptr, z_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(o_ptr + offs, tl.fma(tl.load(x_ptr + offs), tl.load(y_ptr + offs), tl.load(z_ptr + offs)))
for dt in (torch.float32, torch.float16):
    e = 2.0 ** (-23 if dt == torch.float32 else -10)
    x = torch.tensor([1 + e, 0.1, 3.0, 1.0], dtype=dt, device=dev); y = torch.tensor([1 - e, 0.3, 1 / 3, 1.0], dtype=dt, device=dev)
    z = torch.tensor([-1.0, -0.03, -1.0, 0.0], dtype=dt, device=dev)
    o = torch.empty_like(x); k_fma[(1,)](x, y, z, o, N=4); R[f"fma_{dt}"] = [repr(v) for v in o.cpu().tolist()], bits(o)

@triton.jit
def k_const(x_ptr, o_ptr, N: tl.constexpr, S: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs) + S)
for dt in (torch.float16, torch.bfloat16, torch.float32):
    for s in (1e-7, 0.1, 1 + 2**-11 + 2**-40, -0.0):
        x = torch.tensor([0.0, -0.0], dtype=dt, device=dev); o = torch.empty_like(x)
        k_const[(1,)](x, o, N=2, S=s); R[f"const_{dt}_{s!r}"] = [repr(v) for v in o.float().cpu().tolist()], bits(o)

@triton.jit
def k_neg(x_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(o_ptr + offs, -tl.load(x_ptr + offs))
x = torch.tensor([0.0, -0.0, float("nan")], device=dev); o = torch.empty_like(x); k_neg[(1,)](x, o, N=4 // 2 * 2 if False else 2)
R["neg"] = bits(o)

@triton.jit
def k_cast(x_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs).to(tl.int8))
x = torch.tensor([300.0, float("nan"), -1e10, 2.5], device=dev); o = torch.empty(4, dtype=torch.int8, device=dev); k_cast[(1,)](x, o, N=4)
R["fp32_to_int8"] = o.cpu().tolist()

@triton.jit
def k_rand(o_ptr, p_ptr, seed, off_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    off = tl.load(off_ptr + offs)
    r = tl.randint(seed, off)
    tl.store(o_ptr + offs, r.to(tl.int64, bitcast=False) if False else r.to(tl.int64))
    tl.store(p_ptr + offs, tl.randn(seed, off))
off = torch.tensor([0, 1, 2**40 + 5, -7], dtype=torch.int64, device=dev)
o = torch.empty(4, dtype=torch.int64, device=dev); p = torch.empty(4, dtype=torch.float32, device=dev)
k_rand[(1,)](o, p, 42, off, N=4); R["randint_i64"] = o.cpu().tolist(); R["randn_i64"] = bits(p)
off32 = torch.tensor([0, 1, 12345, -7], dtype=torch.int32, device=dev)
k_rand[(1,)](o, p, 2**35 + 3, off32, N=4); R["randint_i32"] = o.cpu().tolist(); R["randn_i32"] = bits(p)

import triton.language.standard as std, triton.language.random as rnd
R["src_randint4x_has_offset_hi"] = "offset_hi" in inspect.getsource(rnd.randint4x)
R["src_flip_static_assert"] = "static_assert(-len(x.shape) <= dim" in inspect.getsource(std.flip)
R["src_cswap"] = "flip ^ is_right" in inspect.getsource(std._compare_and_swap)
R["src_cdiv"] = inspect.getsource(std.cdiv).strip().splitlines()[-1]
os.makedirs(os.environ["OUT"], exist_ok=True)
json.dump(R, open(os.path.join(os.environ["OUT"], "probe.json"), "w"), indent=1)
print(json.dumps(R, indent=1))
