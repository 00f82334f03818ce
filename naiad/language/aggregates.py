"""`@naiad.aggregate` (Triton's `@triton.aggregate`): a class whose instances are kernel values
made of kernel values, with methods.

    @naiad.aggregate
    class Tile:
        ptr: tl.tensor
        stride: tl.tensor
        BLOCK: tl.constexpr

        @naiad.jit
        def load(self, row):
            return tl.load(self.ptr + row * self.stride + tl.arange(0, self.BLOCK))

Its fields are the class's annotations (a parent aggregate's first), each holding an instance of
its annotated type. Construction runs the class's `__init__` (a plain function, run as Python
in the kernel; it may take Triton's `_semantic` and `_generator` keywords), or, without one,
assigns the fields from positional and keyword arguments and the class's defaults, a Python
value becoming a `tl.constexpr` and a Python tuple a `tl.tuple`; every field must be set by then,
and none may change afterwards (`aggregate_replace` makes a changed copy). A jit method called on
an instance receives it as `self` and compiles to a call like any jit function; plain methods,
constexpr functions, static methods and properties run as Python. An aggregate crosses calls,
loops and branches as its fields (frontend/values.py), and a kernel's specialized callee names
it `module.Class<field types>`, as Triton's code generator does.
"""

from __future__ import annotations

import builtins
import inspect
import types as pytypes
import typing

from . import core
from . import dtypes as t

_MISSING = object()


def aggregate(cls: type) -> type:
    """The aggregate class made of `cls` (see the module doc)."""
    bases = tuple(b for b in cls.__bases__ if b is not object)
    for base in bases:
        if not is_aggregate_class(base):
            raise TypeError(
                f"Aggregates can only inherit from other aggregates: aggregate "
                f"{cls.__name__} inherits from {base.__name__}"
            )
    fields, defaults = _fields(cls, bases)
    init = cls.__dict__.get("__init__") or _field_init(cls.__name__, fields, defaults)
    namespace = {
        name: _method(member)
        for name, member in cls.__dict__.items()
        if name not in ("__init__", "__dict__", "__weakref__", "__annotations__")
        and name not in defaults
    }
    namespace.update(
        __naiad_aggregate__=True,
        __aggregate_fields__=builtins.tuple(fields),
        __aggregate_defaults__=defaults,
        __annotations__=dict(fields),
        _aggregate_init=staticmethod(init),
        __new__=_new,
        __setattr__=_setattr,
        __repr__=_repr,
        type=property(_type),
    )
    made = builtins.type(cls.__name__, bases or (object,), namespace)
    made.__qualname__ = cls.__qualname__
    return made


def is_aggregate_class(cls) -> bool:
    return isinstance(cls, builtins.type) and cls.__dict__.get("__naiad_aggregate__", False)


def is_aggregate(value) -> bool:
    """Whether `value` is an instance of an `@aggregate` class."""
    return getattr(builtins.type(value), "__naiad_aggregate__", False)


def jit_methods(cls: type) -> list[tuple[str, object]]:
    """(name, jit function) of each jit method of an aggregate class, its parents' included:
    what a kernel naming the class compiles, for its cache key."""
    found = []
    for name in sorted(dir(cls)):
        member = inspect.getattr_static(cls, name)
        if isinstance(member, _BoundThroughInstances):
            member = member.fn
        elif isinstance(member, staticmethod | classmethod):
            member = member.__func__
        if getattr(member, "__naiad_jit__", False):
            found.append((name, member))
    return found


def fields(value) -> list[tuple[str, object]]:
    """(name, value) of each field of an aggregate instance, in declaration order."""
    return [(name, getattr(value, name)) for name in builtins.type(value).__aggregate_fields__]


def rebuilt(value, items: list):
    """A copy of aggregate instance `value` whose fields hold `items` (in declaration order),
    made without its constructor: the fields' kernel values changed, not what they mean."""
    copy = object.__new__(builtins.type(value))
    for name, item in zip(builtins.type(value).__aggregate_fields__, items):
        object.__setattr__(copy, name, item)
    object.__setattr__(copy, "_aggregate_complete", True)
    return copy


def aggregate_replace(instance, **changes):
    """A copy of aggregate `instance` with the fields named in `changes` replaced (as
    `dataclasses.replace`), in a kernel or not; the copy is constructed by the class, as a new
    instance is."""
    if not is_aggregate(instance):
        raise TypeError(
            f"aggregate_replace() expects an aggregate instance, got {builtins.type(instance)}"
        )
    names = builtins.type(instance).__aggregate_fields__
    for name in changes:
        if name not in names:
            raise TypeError(f"{builtins.type(instance).__name__} has no field '{name}'")
    return builtins.type(instance)(**{**dict(fields(instance)), **changes})


class aggregate_type(t.dtype):
    """The type of an aggregate instance: its class and its fields' types."""

    def __init__(self, cls: type, field_types: list):
        self.cls, self.field_types = cls, list(field_types)
        inner = ", ".join(_mangled(ty) for _, ty in self.field_types)
        self.name = f"{cls.__module__}.{cls.__qualname__}<{inner}>"

    def mangle(self) -> str:
        return self.name

    def __eq__(self, other):
        if not isinstance(other, t.dtype):
            return NotImplemented
        return (
            isinstance(other, aggregate_type)
            and self.cls is other.cls
            and self.field_types == other.field_types
        )

    def __hash__(self):
        return hash(("aggregate", self.cls, builtins.tuple(self.field_types)))

    def __str__(self):
        return self.name

    __repr__ = __str__


def _mangled(ty) -> str:
    mangle = getattr(ty, "mangle", None)
    return mangle() if mangle is not None else str(ty)


def _fields(cls: type, bases: tuple) -> tuple[dict, dict]:
    """The annotated fields (name -> type) and their defaults, the parents' first."""
    annotations, defaults = {}, {}
    for base in reversed(bases):
        annotations.update(base.__annotations__)
        defaults.update(base.__aggregate_defaults__)
    try:
        hints = typing.get_type_hints(cls)
    except NameError:  # a string annotation naming a local of a function: kept unchecked
        hints = inspect.get_annotations(cls)
    for name in inspect.get_annotations(cls):
        annotations[name] = hints[name]
        default = cls.__dict__.get(name, _MISSING)
        if default is not _MISSING and not (callable(default) and not _is_kernel_value(default)):
            defaults[name] = default
    return annotations, defaults


def _field_init(class_name: str, fields: dict, defaults: dict):
    """The constructor of a class without `__init__`: the fields from the arguments, in order
    (a Python value a constexpr, a Python tuple a `tl.tuple`), else their defaults."""
    names = builtins.tuple(fields)

    def init(self, *args, **kwargs):
        if len(args) > len(names):
            raise TypeError(
                f"{class_name}() takes {len(names)} positional arguments but {len(args)} were given"
            )
        for index, name in enumerate(names):
            if index < len(args):
                if name in kwargs:
                    raise TypeError(f"{class_name}() got multiple values for argument '{name}'")
                value = args[index]
            elif name in kwargs:
                value = kwargs.pop(name)
            elif name in defaults:
                value = defaults[name]
            else:
                raise TypeError(f"{class_name}() missing required argument: '{name}'")
            setattr(self, name, _as_field(value))
        if kwargs:
            raise TypeError(
                f"{class_name}() got an unexpected keyword argument '{next(iter(kwargs))}'"
            )

    return init


def _as_field(value):
    """A constructor argument as a field holds it: tuples as `tl.tuple`s of such values, a
    Python value (a number, a dtype, a function) as a constexpr."""
    if isinstance(value, core.tuple | builtins.tuple):
        items = [_as_field(v) for v in value]
        field_names = getattr(builtins.type(value), "_fields", None)
        if isinstance(value, core.tuple):
            field_names = value.type.fields
        return core.tuple(items, t.tuple_type([_type_of(v) for v in items], field_names))
    return value if _is_kernel_value(value) else core.constexpr(value)


def _type_of(value):
    return getattr(value, "type", None) or core.constexpr_type(value)


def _is_kernel_value(value) -> bool:
    """Whether `value` is a kernel value (a tensor, a constexpr, a tuple, an aggregate, one of
    the language's objects such as a block pointer or a descriptor) rather than Python's."""
    if isinstance(value, core.tensor | core.constexpr | core.tuple) or is_aggregate(value):
        return True
    module = builtins.type(value).__module__
    language_object = module.startswith("naiad.language") and not callable(value)
    return language_object and not isinstance(value, t.dtype | builtins.type)


def _new(cls, *args, _semantic=None, _generator=None, **kwargs):
    """Construct an instance: the class's constructor, then every field must be set, and the
    instance is sealed."""
    instance = object.__new__(cls)
    object.__setattr__(instance, "_aggregate_complete", False)
    init = cls._aggregate_init
    extra = {}
    if not getattr(init, "__naiad_jit__", False):
        parameters = inspect.signature(init).parameters
        if "_semantic" in parameters:
            extra["_semantic"] = _semantic
        if "_generator" in parameters:
            extra["_generator"] = _generator
    init(instance, *args, **extra, **kwargs)
    for name in cls.__aggregate_fields__:
        if name not in instance.__dict__:
            raise AttributeError(
                f"constructor for {cls.__name__} did not initialize attribute '{name}'"
            )
    object.__setattr__(instance, "_aggregate_complete", True)
    return instance


def _setattr(self, name, value):
    """Fields only, of their annotated types, and only while the constructor runs."""
    cls = builtins.type(self)
    declared = cls.__annotations__.get(name, _MISSING)
    if declared is _MISSING:
        raise AttributeError(f"{cls.__name__} has no attribute '{name}'")
    if declared is core.tuple and isinstance(value, builtins.tuple):
        value = _as_field(value)  # a kernel's tuples are Python's; the field holds a tl.tuple
    if isinstance(declared, builtins.type) and not isinstance(value, declared):
        raise TypeError(f"Expected {declared} for attribute '{name}', got {builtins.type(value)}")
    if getattr(self, "_aggregate_complete", False):
        raise AttributeError(
            f"cannot assign to field '{name}' on immutable aggregate {cls.__name__}; "
            "use aggregate_replace() to construct a modified copy"
        )
    object.__setattr__(self, name, value)


def _repr(self) -> str:
    inner = ", ".join(f"{name}={value!r}" for name, value in fields(self))
    return f"{builtins.type(self).__name__}({inner})"


def _type(self) -> aggregate_type:
    return aggregate_type(builtins.type(self), [(n, _type_of(v)) for n, v in fields(self)])


class _BoundThroughInstances:
    """A jit or constexpr function in an aggregate's class, which Python would not bind: read
    through an instance, it is bound to it (a jit method's `tt.call` passes the instance's
    fields first); read through the class, it is the function itself (`Class.helper()`)."""

    def __init__(self, fn):
        self.fn = fn

    def __get__(self, instance, owner=None):
        return self.fn if instance is None else pytypes.MethodType(self.fn, instance)


def _method(member):
    bound = getattr(member, "__naiad_jit__", False) or getattr(
        member, "__naiad_constexpr_function__", False
    )
    return _BoundThroughInstances(member) if bound else member
