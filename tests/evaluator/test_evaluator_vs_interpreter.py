"""Differential: Triton's own TTIR of a kernel (and Naiad's, once its frontend compiles), run by
the reference evaluator, against the same kernel run by Naiad's interpreter, on the same random
inputs; every array must end up bit for bit the same.

The TTIR is Triton 3.8's (`tests/ir/fixtures/`, both the optimized `.ttir` and the `.source.ttir`
its code generator built, with calls, `ub.poison` and branches); the kernels are the fixtures' own
(`tests/fixture_kernels/`: the `lang_*` kernels, and the tutorials under `examples/`). This checks
the evaluator's meaning of every op Triton emits against the interpreter, the executable
reference. Where Triton's optimizer changes the arithmetic (a sum of products combined into a
dot), the optimized module is compared within a tolerance. Skipped while the parser cannot read
the fixtures, or the frontend cannot compile a kernel: never failed for want of them.
"""

import numpy as np
import pytest
from evaluator_fixture_cases import CASES
from evaluator_helpers import (
    FIXTURES,
    arrays_of,
    bits,
    copy_args,
    fixture_kernel_name,
    parse_fixture,
    run_evaluator,
)


def _unspaced(lines):
    """Printed lines without spaces and colons: Triton's semantic layer spells a print's prefix
    `" pid: "` where Naiad's keeps the user's `"pid"`; the values must agree."""
    return [line.replace(" ", "").replace(":", "") for line in lines]


def _frontend_module(kernel, args, grid):
    """Naiad's own TTIR of the kernel for these arguments (`compile_ttir(...).asm["ttir"]`: the
    TTIR stage alone, whatever a back end does after it), or a skip while the frontend cannot
    compile yet."""
    pytest.importorskip("naiad.frontend")
    from naiad.runtime.compiler import compile_ttir

    try:
        compiled = compile_ttir(kernel, {n: args[n] for n in kernel.arg_names})
    except NotImplementedError as exc:
        pytest.skip(f"the frontend cannot compile this kernel yet: {exc}")
    ttir = getattr(compiled, "asm", {}).get("ttir") if compiled is not None else None
    if ttir is None:
        pytest.skip("the frontend cannot compile kernels yet (warmup gives no asm['ttir'])")
    if not isinstance(ttir, str):
        return ttir
    parser = pytest.importorskip("naiad.ir.parser")
    return parser.parse_module(ttir, "frontend.ttir")


@pytest.mark.parametrize("variant", [".ttir", ".source.ttir", "frontend"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_triton_ttir_in_the_evaluator_matches_the_interpreter(name, variant, capsys):
    case = CASES[name]
    args = case.args(np.random.default_rng(sum(map(ord, name))))
    if variant == "frontend":
        module = _frontend_module(case.jit(), copy_args(args), case.grid)
        func_name = case.jit().__name__
    else:
        module = parse_fixture(FIXTURES / f"{name}{variant}")
        func_name = fixture_kernel_name(name)

    interpreted = copy_args(args)
    kernel = case.jit()
    # Positionally: a parameter may share its name with a launch option (`num_stages`).
    kernel[case.grid](*(interpreted[n] for n in kernel.arg_names), **case.options)
    printed = capsys.readouterr().out.splitlines()

    lines = []
    results = run_evaluator(module, func_name, case, args, out=lines.append)

    assert _unspaced(lines) == _unspaced(printed)
    for key, value in arrays_of(interpreted):
        if variant in case.inexact:
            np.testing.assert_allclose(results[key], value, rtol=1e-5, atol=1e-5, err_msg=key)
        else:
            np.testing.assert_array_equal(bits(results[key]), bits(value), err_msg=key)
