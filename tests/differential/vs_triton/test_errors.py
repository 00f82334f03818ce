"""What must raise, and where: `+x` and `abs(x)` refused in both interpreters, and where Triton's
interpreter runs plain Python (`not`, `and`, `or`, loop indices, float arguments, topk(x, 1),
flip(x)) Naiad must accept, type and refuse as compiled Triton's front end does."""

from .harness import (
    PYTESTMARK,
    Mismatches,
    N,
    Outcome,
    both,
    compare,
    launch,
    tensor_of,
    values_of,
)

pytestmark = PYTESTMARK


def test_unary_plus_and_abs_are_refused(kernels):
    """Triton's tensor has no `__pos__` and no `__abs__`: `+x` and `abs(x)` raise in both."""
    mism = Mismatches()
    for a in ("int32", "fp32"):
        x = tensor_of(values_of(a), a)
        compare(f"+{a}", *both(kernels, "unary_plus", x, N=N), mism)
        compare(f"abs({a})", *both(kernels, "unary_abs_builtin", x, N=N), mism)
    mism.check()


def _agree(case, compiled, n: Outcome, mism):
    """Naiad raises where compiled Triton's front end raises, and gives its result dtype."""
    status, printed, _ = compiled
    if status == "error":
        if n.error is None:
            mism.add(
                case,
                f"compiled Triton refuses ({printed.splitlines()[-1][:200]}); Naiad "
                f"gave {n.results}",
            )
        return
    if n.error is not None:
        mism.add(case, f"compiled Triton accepts ({printed}); Naiad raised {n.error}")
        return
    if [r[0] for r in n.results][:1] != printed[:1]:
        mism.add(case, f"compiled Triton's type {printed}, Naiad's {n.results}")


def test_compiled_frontend_rules(kernels, frontend):
    """EXPECTED["not"], ["loop_index"], ["float_arg"], and `+x`, `abs(x)`, `and`, loop-carried
    type changes, topk(x, 1), flip(x): what compiled Triton accepts and how it types it, Naiad
    too (except EXPECTED["triton_bug"])."""
    mism = Mismatches()
    nk = kernels[1]
    for a in ("int1", "int32", "fp32"):
        x = tensor_of(values_of(a), a)
        x16 = tensor_of(values_of(a, 16), a)
        runs = (
            ("fe_not", f"not {a}", "unary_not", (x,), dict(N=N)),
            ("fe_and", f"{a} and {a} (scalars)", "logic_and", (x,), {}),
            ("fe_or_block", f"{a} or {a} (blocks)", "logic_or_block", (x,), dict(N=16)),
            ("fe_plus", f"+{a}", "unary_plus", (x,), dict(N=N)),
            ("fe_abs", f"abs({a})", "unary_abs_builtin", (x,), dict(N=N)),
            ("fe_topk1", f"topk({a}, 1)", "sort_topk", (x16,), dict(N=16, K=1)),
            ("fe_flip", f"flip({a})", "sort_flip", (x16,), dict(N=16)),
        )
        for fe, case, kernel, args, kwargs in runs:
            compiled = frontend[f"{fe}:{a}"]
            n = launch(nk, kernel, args, kwargs)
            if fe in ("fe_topk1", "fe_flip") and compiled[0] == "error" and n.error is None:
                continue  # EXPECTED["triton_bug"]: Naiad gives the documented result
            _agree(case, compiled, n, mism)
    for a in ("int8", "uint8", "int64", "fp16"):
        x = tensor_of(values_of(a, 16), a)
        for bits, n_value in (("i32", 3), ("i64", 2**40)):
            n = launch(nk, "loop_index_type", (x, n_value), dict(N=16))
            _agree(f"{a} + loop index ({bits})", frontend[f"fe_loop_index:{a}:{bits}"], n, mism)
            n = launch(nk, "loop_carried_type_change", (x, n_value), dict(N=16))
            _agree(
                f"{a} = {a} + loop index ({bits})", frontend[f"fe_loop_carried:{a}:{bits}"], n, mism
            )
        n = launch(nk, "tr_add", (x, 2.5), dict(N=16))
        _agree(f"{a} + float argument", frontend[f"fe_float_arg:{a}"], n, mism)
    mism.check()
