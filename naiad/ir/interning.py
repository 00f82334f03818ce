"""Interning: one Python object per distinct type or attribute, so equality is identity.

MLIR uniques types and attributes in its context; we keep a process-wide table keyed by class and
parameters. Entries are weak references: a type or attribute nothing refers to any more (a large
dense constant of a finished compile) is freed, so the table needs no reset and cannot leak.
"""

from __future__ import annotations

import weakref
from typing import ClassVar

_TABLE: dict[tuple, weakref.ref] = {}


class Interned:
    """Base of interned values: immutable, compared by identity, spelled by `__str__`.

    A subclass lists its parameters in `__slots__` (names without a leading underscore, in the
    order `cls._intern(*params)` takes them, so those slots are not sorted) and implements
    `_spelling()`: the MLIR text, computed once and cached, since the printer asks on every use.
    """

    __slots__ = ("__weakref__", "_str")
    _params: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        names: list[str] = []
        for klass in reversed(cls.__mro__):
            slots = klass.__dict__.get("__slots__", ())
            names.extend(s for s in ((slots,) if isinstance(slots, str) else slots) if s[0] != "_")
        cls._params = tuple(names)

    @classmethod
    def _intern(cls, *params, key=None):
        """The unique instance of `cls` with `params`; `key` replaces them as the table key
        where equal Python values must stay distinct (0.0 and -0.0, NaN payloads)."""
        table_key = (cls, *params) if key is None else (cls, key)
        ref = _TABLE.get(table_key)
        if ref is not None:
            obj = ref()
            if obj is not None:
                return obj
        obj = object.__new__(cls)
        setter = object.__setattr__
        for name, value in zip(cls._params, params):
            setter(obj, name, value)
        setter(obj, "_str", None)
        _TABLE[table_key] = weakref.ref(obj, _remover(table_key))
        return obj

    def __str__(self) -> str:
        text = self._str
        if text is None:
            text = self._spelling()
            object.__setattr__(self, "_str", text)
        return text

    def __repr__(self) -> str:
        return str(self)

    def _spelling(self) -> str:
        raise NotImplementedError(type(self).__name__)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def _remover(table_key: tuple):
    def remove(ref):
        # A new instance may already sit under the key if the old one died late.
        if _TABLE.get(table_key) is ref:
            del _TABLE[table_key]

    return remove
