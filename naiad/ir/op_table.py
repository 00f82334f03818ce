"""A table of rules by op name: what each back end, the evaluator and the Linalg conversion keep
to say what they do with an op (lower it, evaluate it, convert it).

    LOWERINGS = OpTable("NVIDIA lowering")

    @LOWERINGS.rule("arith.addi", "arith.subi")
    def lower_binary(ctx, op): ...

    LOWERINGS.get(op.name)         # the rule, or None
    sorted(LOWERINGS)              # every op name with a rule (docs/ops.md is made from these)

Every table is keyed the same way, by the op's name (`Operation.name`, as the text prints it),
so the tables can be compared with each other and with the registry of ops. A second rule for
one op is a mistake two modules made without knowing of each other: it raises.
"""

from __future__ import annotations

from collections.abc import Callable


class OpTable(dict):
    """Op name → rule (a dict), filled through the `rule` decorator."""

    def __init__(self, what: str):
        super().__init__()
        self.what = what

    def rule(self, *names: str) -> Callable:
        """Register the decorated function as the rule of the ops `names`."""

        def register(function):
            for name in names:
                if not isinstance(name, str):
                    raise TypeError(f"{self.what}: op names are strings, got {name!r}")
                if name in self:
                    raise ValueError(f"two {self.what} rules for '{name}'")
                self[name] = function
            return function

        return register

    def __repr__(self) -> str:
        return f"OpTable({self.what!r}, {len(self)} ops)"
