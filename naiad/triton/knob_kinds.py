"""The kinds of knob `triton.knobs` is made of, as Triton programs declare their own groups with
them: each is a descriptor of a group class that reads its environment variable when asked
(not at import), unless a value was set on the group.

    class my_knobs(triton.knobs.base_knobs):
        name = triton.knobs.env_str("MY_NAME", "default")    # the variable's text, else default
        fast = triton.knobs.env_bool("MY_FAST", True)        # 1 y yes on true (any case): True
        size = triton.knobs.env_int("MY_SIZE", 64)
        path = triton.knobs.env_opt_str("MY_PATH")           # None when unset

Setting a knob keeps the value on the group and, while `triton.knobs.propagate_env` is true,
writes it to the variable (a bool as 1 or 0, None removes it), so that the processes the
program starts see it too; setting `triton.knobs.env`, or `del group.knob`, goes back to the
variable. `base_knobs` gives a group `copy()`, `reset()`, `scope()` (what the block set, the
variables included, is undone after it) and `knob_descriptors`. The knobs that are Naiad's own
settings are in knobs.py.
"""

from __future__ import annotations

import contextlib
import copy as _copy
import importlib

from .. import knobs as naiad_knobs

# Whether a value set on a knob is written to its environment variable (`propagate_env` of
# triton.knobs, which keeps this list in step; a list, so that no global is rebound).
PROPAGATE = [True]


class Env:
    """The value that sends a knob back to its environment variable (`knobs.env`)."""


env = Env()


def environment_text(value) -> tuple[bool, str | None]:
    """Whether a value set on a knob is written to its variable, and the text (None: remove
    the variable). Only None, bools, strings and integers are written: a class or a function
    set on a knob stays in Python."""
    if value is None:
        return True, None
    if type(value) is bool:
        return True, "1" if value else "0"
    if type(value) in (str, int):
        return True, str(value)
    return False, None


def propagate(key: str, value) -> None:
    """Write a value set on the knob of variable `key` to the environment, where it goes."""
    writes, text = environment_text(value)
    if key and writes and PROPAGATE[0]:
        naiad_knobs.write_environment(key, text)


def read_flag(text: str) -> bool:
    return text.strip().lower() in naiad_knobs.TRUE_WORDS


class env_base:
    """A knob read from the environment variable `key`; a value set on the group wins."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.name = key

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, group, owner=None):
        if group is None:
            return self
        values = vars(group)
        if self.name in values:
            return self.transform(values[self.name])
        return self.get()

    def __set__(self, group, value) -> None:
        if isinstance(value, Env):
            self.__delete__(group)
            return
        vars(group)[self.name] = value
        propagate(self.key, value)

    def __delete__(self, group) -> None:
        vars(group).pop(self.name, None)

    def get(self):
        """The knob's value from its environment variable."""
        raise NotImplementedError(f"{type(self).__name__} reads no environment")

    def transform(self, value):
        """The value a set value reads as (a kind may build an object from what was set)."""
        return value

    def text(self) -> str | None:
        return naiad_knobs.read_environment(self.key)


class env_str(env_base):
    def __init__(self, key: str, default: str) -> None:
        super().__init__(key)
        self.default = default

    def get(self) -> str:
        text = self.text()
        return self.default if text is None else text


class env_str_callable_default(env_base):
    """A string whose default is computed when read (a folder under another knob's)."""

    def __init__(self, key: str, default_factory) -> None:
        super().__init__(key)
        self.default_factory = default_factory

    def get(self) -> str:
        text = self.text()
        return self.default_factory() if text is None else text


class env_bool(env_base):
    def __init__(self, key: str, default: bool = False) -> None:
        super().__init__(key)
        self.default = default

    def get(self) -> bool:
        text = self.text()
        return self.default if text is None else read_flag(text)


class env_int(env_base):
    def __init__(self, key: str, default: int = 0) -> None:
        super().__init__(key)
        self.default = default

    def get(self) -> int:
        text = self.text()
        if text is None:
            return self.default
        try:
            return int(text)
        except ValueError as error:
            raise RuntimeError(f"{self.key}={text!r}: expected an integer") from error


class env_opt_str(env_base):
    def get(self) -> str | None:
        return self.text()


class env_opt_bool(env_base):
    def get(self) -> bool | None:
        text = self.text()
        return None if text is None else read_flag(text)


class env_class(env_base):
    """A class named `module:Class` by the variable, which must derive from a class named
    `base` (a name: the base may not be importable where the knob is declared)."""

    def __init__(self, key: str, base: str) -> None:
        super().__init__(key)
        self.base = base

    def get(self):
        text = self.text()
        if text is None:
            return None
        module, colon, name = text.partition(":")
        if not colon or not module or not name:
            raise RuntimeError(f"{self.key}={text!r}: expected MODULE:CLASS")
        found = getattr(importlib.import_module(module), name)
        if not any(c.__name__ == self.base for c in getattr(found, "__mro__", ())):
            raise RuntimeError(f"{self.key}={text!r}: not a subclass of {self.base}")
        return found


class base_knobs:
    """A group of knobs: `knobs`, `knob_descriptors`, `copy()`, `reset()`, `scope()`."""

    @property
    def knob_descriptors(self) -> dict[str, env_base]:
        found = {}
        for cls in reversed(type(self).__mro__):
            found.update({k: v for k, v in vars(cls).items() if isinstance(v, env_base)})
        return found

    @property
    def knobs(self) -> dict:
        return {name: getattr(self, name) for name in self.knob_descriptors}

    def copy(self):
        """A twin with this group's values. Triton's test fixtures put the twin in this group's
        place (`triton.knobs.runtime = twin.reset()`) and this group back after the test. The
        knobs that are Naiad's settings live in Naiad, not in the group, so the group notes
        their values now and restores them when it is put back (knobs.py's module): an
        `override_arch` a test set does not outlive the test."""
        twin = type(self)()
        vars(twin).update(_copy.copy(vars(self)))
        vars(twin).pop("_naiad_settings", None)
        self._naiad_settings = {
            knob.setting.env: naiad_knobs.current_override(knob.setting.env)
            for knob in self.knob_descriptors.values()
            if getattr(knob, "setting", None) is not None
        }
        return twin

    def put_back(self) -> None:
        """Restore the Naiad settings noted by the last `copy()`."""
        for env_name, value in vars(self).get("_naiad_settings", {}).items():
            naiad_knobs.set_override(env_name, value)

    def reset(self):
        """Every knob back to its environment variable (or, for hooks, unset)."""
        for name in self.knob_descriptors:
            delattr(self, name)
        return self

    @contextlib.contextmanager
    def scope(self):
        """Undo, after the block, what it set on this group: its values, the environment
        variables of its knobs and Naiad's settings."""
        saved = dict(vars(self))
        keys = {knob.key for knob in self.knob_descriptors.values() if knob.key}
        environment = {key: naiad_knobs.read_environment(key) for key in keys}
        try:
            with naiad_knobs.override():  # restores every Naiad setting set since
                yield self
        finally:
            vars(self).clear()
            vars(self).update(saved)
            for key, text in environment.items():
                naiad_knobs.write_environment(key, text)
