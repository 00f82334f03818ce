"""AMX tiles emulated in LLVM IR, so that the code lower_matmul_amx.py, amx_carried.py and
amx_panels.py make runs on a CPU without AMX (test_matmul_amx_emulated.py, in a child process).

`install()` makes the AMX path apply on any x86-64 host and rewrites each kernel's LLVM IR
before LLVM parses it: a tile (`x86_amx`) becomes a `<256 x i32>` vector (16 rows of 64
bytes), `tileloadd` / `tilestored` copy 16 rows of 64 bytes from / to memory by their stride,
and `tdpbf16ps` / `tdpbssd` add to each element of C the products of a row of A with a
column of B in AMX's layouts (B's dwords hold two bf16 or four int8 of consecutive rows), one
element and k-group at a time. The sums are added in an order of the emulator's own, as the
hardware's is its own: values agree with a float64 reference within the dot tolerance (int8:
exactly). What it checks is everything around the instructions: which tiles are loaded from
where, carried, gathered, multiplied and stored.
"""

from naiad.backends.cpu import compiler, llvm_tools
from naiad.backends.cpu.codegen import lower_matmul_amx


def _rows(into_tile: bool) -> str:
    """16 rows of 64 bytes between memory (%p by %stride) and the tile's buffer (%buf)."""
    lines = []
    for r in range(16):
        memory, tile = f"%m{r}", f"%t{r}"
        source, target = (memory, tile) if into_tile else (tile, memory)
        lines += [
            f"  %o{r} = mul i64 %stride, {r}",
            f"  {memory} = getelementptr i8, ptr %p, i64 %o{r}",
            f"  {tile} = getelementptr i8, ptr %buf, i64 {64 * r}",
            f"  %v{r} = load <16 x i32>, ptr {source}, align 1",
            f"  store <16 x i32> %v{r}, ptr {target}, align 1",
        ]
    return "\n".join(lines)


def _dot(name: str, element: str, group: int, accumulate: str) -> str:
    """The IR of `name`: C (16 × 16 of i32 bits) += A (16 rows of 16·group `element`) times B
    (16 rows of 16 dwords, dword (p, n) holding B[group·p + g, n] as its element g), one
    product at a time: `accumulate` adds the product of %x and %y (of `element`) to %acc (i32
    bits) into %sum (i32 bits)."""
    k = 16 * group
    return f"""
define internal <256 x i32> @{name}(i16 %r, i16 %c, i16 %k, <256 x i32> %cv, <256 x i32> %av,
                                     <256 x i32> %bv) {{
entry:
  %cb = alloca <256 x i32>, align 64
  %ab = alloca <256 x i32>, align 64
  %bb = alloca <256 x i32>, align 64
  store <256 x i32> %cv, ptr %cb
  store <256 x i32> %av, ptr %ab
  store <256 x i32> %bv, ptr %bb
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %kg = and i64 %i, {k - 1}
  %rest = lshr i64 %i, {k.bit_length() - 1}
  %n = and i64 %rest, 15
  %m = lshr i64 %rest, 4
  %kg.dw = lshr i64 %kg, {group.bit_length() - 1}
  %kg.in = and i64 %kg, {group - 1}
  %a.i0 = mul i64 %m, {k}
  %a.i = add i64 %a.i0, %kg
  %a.p = getelementptr {element}, ptr %ab, i64 %a.i
  %x = load {element}, ptr %a.p
  %b.i0 = mul i64 %kg.dw, 16
  %b.i1 = add i64 %b.i0, %n
  %b.i2 = mul i64 %b.i1, {group}
  %b.i = add i64 %b.i2, %kg.in
  %b.p = getelementptr {element}, ptr %bb, i64 %b.i
  %y = load {element}, ptr %b.p
  %c.i0 = mul i64 %m, 16
  %c.i = add i64 %c.i0, %n
  %c.p = getelementptr i32, ptr %cb, i64 %c.i
  %acc = load i32, ptr %c.p
{accumulate}
  store i32 %sum, ptr %c.p
  %i.next = add i64 %i, 1
  %done = icmp eq i64 %i.next, {16 * 16 * k}
  br i1 %done, label %exit, label %loop
exit:
  %out = load <256 x i32>, ptr %cb
  ret <256 x i32> %out
}}
"""


_BF16 = """  %x.w = zext i16 %x to i32
  %x.s = shl i32 %x.w, 16
  %x.f = bitcast i32 %x.s to float
  %y.w = zext i16 %y to i32
  %y.s = shl i32 %y.w, 16
  %y.f = bitcast i32 %y.s to float
  %acc.f = bitcast i32 %acc to float
  %p.f = fmul float %x.f, %y.f
  %sum.f = fadd float %acc.f, %p.f
  %sum = bitcast float %sum.f to i32"""
_INT8 = """  %x.w = sext i8 %x to i32
  %y.w = sext i8 %y to i32
  %p = mul i32 %x.w, %y.w
  %sum = add i32 %acc, %p"""

EMULATION = f"""
define internal <256 x i32> @emu.tileloadd(i16 %r, i16 %c, ptr %p, i64 %stride) {{
  %buf = alloca <256 x i32>, align 64
{_rows(into_tile=True)}
  %v = load <256 x i32>, ptr %buf
  ret <256 x i32> %v
}}

define internal void @emu.tilestored(i16 %r, i16 %c, ptr %p, i64 %stride, <256 x i32> %v) {{
  %buf = alloca <256 x i32>, align 64
  store <256 x i32> %v, ptr %buf
{_rows(into_tile=False)}
  ret void
}}
{_dot("emu.tdpbf16ps", "i16", 2, _BF16)}
{_dot("emu.tdpbssd", "i8", 4, _INT8)}
"""

_INTRINSICS = {
    "llvm.x86.tileloadd64.internal": "emu.tileloadd",
    "llvm.x86.tilestored64.internal": "emu.tilestored",
    "llvm.x86.tdpbf16ps.internal": "emu.tdpbf16ps",
    "llvm.x86.tdpbssd.internal": "emu.tdpbssd",
}


def emulated(text: str) -> str:
    """A kernel's LLVM IR with its AMX intrinsics emulated (see the module)."""
    if "x86_amx" not in text:
        return text
    lines = text.splitlines()
    kept = [
        line
        for line in lines
        if not (line.startswith("declare") and any(name in line for name in _INTRINSICS))
    ]
    text = "\n".join(kept)
    for name, emulation in _INTRINSICS.items():
        text = text.replace(f'@"{name}"(', f"@{emulation}(").replace(f"@{name}(", f"@{emulation}(")
    return text.replace("x86_amx", "<256 x i32>") + EMULATION


def install() -> list[int]:
    """Make the AMX path apply on this host and emulate it (this process only). Returns the
    list to which each kernel compiled from then on appends how many dot instructions its IR
    held (before LLVM inlines the emulation)."""
    lower_matmul_amx.host_has = lambda features, triple: True
    parse = llvm_tools.parse_module
    dots: list[int] = []

    def parse_emulated(text, entry):
        rewritten = emulated(text)
        dots.append(sum(rewritten.count(f"call <256 x i32> @emu.{w}(") for w in WORDS))
        return parse(rewritten, entry)

    compiler.llvm_tools.parse_module = parse_emulated
    return dots


WORDS = ("tdpbf16ps", "tdpbssd")
