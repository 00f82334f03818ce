"""`triton.compiler.IRSource`: what a tool reads of an IR file before compiling it (the kernel's
symbol, its parameters' types, the options the module fixes), and the file compiling through
`triton.compile` as its path does."""

import numpy as np

from naiad.triton.backends.compiler import GPUTarget
from naiad.triton.compiler import IRSource, compile

# Parameters of every kind the signature spells: pointers, scalars, a TMA descriptor marked on
# an i32 and one in the `!tt.ptr<i8, "descriptor">` spelling of older Triton.
PARAMETERS = """
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32} {
  tt.func public @takes_all(%a: !tt.ptr<f32> {tt.divisibility = 16 : i32},
                            %b: !tt.ptr<bf16>, %n: i32, %x: f32, %big: i64,
                            %m: i32 {tt.nv_tma_desc = 0 : i32},
                            %desc: !tt.ptr<i8, "descriptor"> {tt.nv_tma_desc = 1 : i32}) {
    tt.return
  }
}
"""

# out[i] = x[i] + y[i] over the first n of 256 elements.
ADD = """
#b = #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func public @add(%x: !tt.ptr<i32>, %y: !tt.ptr<i32>, %out: !tt.ptr<i32>, %n: i32) {
    %offs = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32, #b>
    %ns = tt.splat %n : i32 -> tensor<256xi32, #b>
    %mask = arith.cmpi slt, %offs, %ns : tensor<256xi32, #b>
    %xs = tt.splat %x : !tt.ptr<i32> -> tensor<256x!tt.ptr<i32>, #b>
    %xp = tt.addptr %xs, %offs : tensor<256x!tt.ptr<i32>, #b>, tensor<256xi32, #b>
    %xv = tt.load %xp, %mask : tensor<256x!tt.ptr<i32>, #b>
    %ys = tt.splat %y : !tt.ptr<i32> -> tensor<256x!tt.ptr<i32>, #b>
    %yp = tt.addptr %ys, %offs : tensor<256x!tt.ptr<i32>, #b>, tensor<256xi32, #b>
    %yv = tt.load %yp, %mask : tensor<256x!tt.ptr<i32>, #b>
    %sum = arith.addi %xv, %yv : tensor<256xi32, #b>
    %os = tt.splat %out : !tt.ptr<i32> -> tensor<256x!tt.ptr<i32>, #b>
    %op = tt.addptr %os, %offs : tensor<256x!tt.ptr<i32>, #b>, tensor<256xi32, #b>
    tt.store %op, %sum, %mask : tensor<256x!tt.ptr<i32>, #b>
    tt.return
  }
}
"""


def test_a_file_s_kernel_as_tools_read_it(tmp_path):
    path = tmp_path / "takes_all.ttgir"
    path.write_text(PARAMETERS)
    source = IRSource(str(path))
    assert source.name == "@takes_all"
    assert source.ext == "ttgir"
    assert source.signature == {
        0: "*f32",
        1: "*bf16",
        2: "i32",
        3: "f32",
        4: "i64",
        5: "nvTmaDesc",
        6: "nvTmaDesc",
    }
    assert source.parse_options() == {"num_warps": 8, "num_ctas": 1}


def test_a_ttir_file_fixes_no_options(tmp_path):
    path = tmp_path / "plain.ttir"
    path.write_text("tt.func public @plain(%x: !tt.ptr<f16>) {\n  tt.return\n}\n")
    source = IRSource(str(path))
    assert (source.name, source.signature, source.parse_options()) == ("@plain", {0: "*f16"}, {})


def test_an_ir_source_compiles_and_runs_as_its_path(tmp_path):
    path = tmp_path / "add.ttgir"
    path.write_text(ADD)
    kernel = compile(IRSource(str(path)), target=GPUTarget("cpu", "x86_64", 1))
    rng = np.random.default_rng(7)
    x, y = (rng.integers(-1000, 1000, 256, dtype=np.int32) for _ in "xy")
    out = np.full(256, -7, np.int32)
    kernel[(1,)](x, y, out, 200)
    np.testing.assert_array_equal(out[:200], x[:200] + y[:200])
    np.testing.assert_array_equal(out[200:], -7)
