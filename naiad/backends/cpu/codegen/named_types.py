"""LLVM types llvmlite's IR builder has no class for, written by their names: `bfloat` (the
operands of AVX512-BF16's `vdpbf16ps` are vectors of it, bitcasts of the packed bits) and
`x86_amx` (an AMX tile register's contents)."""

from __future__ import annotations

from llvmlite import ir


class NamedType(ir.Type):
    """An LLVM type printed as its `name`; two are equal where their names are."""

    def __init__(self, name: str):
        self._name = name

    def _to_string(self) -> str:
        return self._name

    def __eq__(self, other) -> bool:
        return isinstance(other, NamedType) and other._name == self._name

    def __hash__(self) -> int:
        return hash((NamedType, self._name))


BFLOAT = NamedType("bfloat")
X86_AMX = NamedType("x86_amx")
