"""Naiad's interpreter against Triton's language rules: the same kernel source through both.

Every kernel is written once, as text (`kernel_sources.py`), and generated twice into a temporary
directory: after `import triton.language as tl` with `jit = triton.jit`, and after
`import naiad.language as tl` with `jit = naiad.jit`. Both run on CPU torch tensors (Triton through
its interpreter, `TRITON_INTERPRET=1`). Each result goes through `emit`, a plain helper of the
generated module: it records the result's dtype and shape, bitcasts the value to the integer of its
width, widens that to int64 and stores it, so the store converts nothing and values compare bit for
bit. A misuse must raise in both (the messages may differ).

    TRITON_INTERPRET=1 python -m pytest tests/differential/vs_triton -q -m triton

Triton's interpreter is not the GPU. Where it computes something else than Triton's compiled code,
Naiad follows the compiler and the GPU (ARCHITECTURE.md, "Semantics"). Each such case is an
expected difference, listed in `harness.EXPECTED` with its reason; the lanes where the two
interpreters then disagree are checked against a model of the GPU's rule instead (`gpu_model.py`,
and the `gpu_*` helpers of the test modules), so an expected difference never hides a wrong Naiad
value. NaN payloads are not compared (NumPy's NaNs are not the GPU's canonical NaN, in either
interpreter); the sign of zero is.

Where Triton's interpreter runs the kernel as plain Python (`not`, `and`, unary `+`, `abs()`, loop
indices, loop-carried types, float arguments, the rounding of constants), compiled Triton's own
front end is the oracle: the kernels of `frontend_oracle.py` are compiled to TTIR for sm_90 in a
child process (no GPU needed) and Naiad must accept, type and refuse as it does.

The modules:

    harness.py          the skip rule, EXPECTED, dtypes, kernel-file generation, running a kernel
                        through both, bitwise comparison, inputs
    kernel_sources.py   the kernels, as text for both front ends
    gpu_model.py        models of the GPU's rules (conversions, float binary operators, //, %)
    frontend_oracle.py  compiled Triton's front end in a child process
    operators.py        the binary-operator matrices shared by the two operator test modules
    test_arithmetic.py, test_compare_bitwise.py, test_casts.py, test_math.py,
    test_reductions.py, test_random.py, test_literals_control_flow.py, test_errors.py

Everything here is skipped unless the process runs with TRITON_INTERPRET=1 and `import triton`
works (`harness.py` decides, at import); the tests carry the marker `triton` (run with -m triton).
"""
