"""Records: classes of named fields, made as `dataclasses` makes them, without its start-up cost.

`dataclasses` imports `inspect` (and with it ast, dis, tokenize, ...): several milliseconds of a run that
takes some tens, and mpigen runs once per kustomize generator, KRM call and pre-commit hook. `@record`
gives a class what `@dataclass` (eq, no slots) would from its annotations, in order, and their class
values as defaults: `__init__` (the same positional-or-keyword parameters and defaults), `__repr__`
(the same text: `Options(gpus_per_node=8, ...)`), `__eq__` (same class, equal fields), `__match_args__`;
with `frozen=True` also `__hash__` (of the fields) and a refusal to set or delete attributes
(`FrozenRecordError`, an AttributeError); without, records are unhashable. A method the class defines
itself is kept. `ClassVar` annotations are not fields. A mutable default (list, dict, set, any
unhashable value) is refused when the class is made: give `field(default_factory=list)` instead.

`typing.dataclass_transform` tells type checkers that `@record` makes dataclass-like classes, so mypy
checks the calls of the made `__init__` as it checks a dataclass's.

    @record(frozen=True)
    class Point:
        x: int
        y: int = 0

    Point(1) == Point(x=1, y=0)    # True
    replace(Point(1), y=2)         # Point(x=1, y=2)
    fields(Point)                  # ("x", "y")
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

T = TypeVar("T")
R = TypeVar("R")

_FIELDS = "__record_fields__"  # the field names, in order (bases' first)
_DEFAULTS = "__record_defaults__"  # name -> default value, or a _Factory


class FrozenRecordError(AttributeError):
    """An attribute of a frozen record was set or deleted."""


class _Factory:
    """A field's `default_factory`: each new record calls it for a fresh default."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


def field(*, default_factory: Callable[[], T]) -> T:
    """A field whose default is made new for each record (`field(default_factory=list)`)."""
    return _Factory(default_factory)  # type: ignore[return-value]  # the record's __init__ calls it


@overload
def record(cls: type[T], /) -> type[T]: ...
@overload
def record(*, frozen: bool = False) -> Callable[[type[T]], type[T]]: ...
@dataclass_transform(field_specifiers=(field,))
def record(cls: type[T] | None = None, /, *, frozen: bool = False) -> type[T] | Callable[[type[T]], type[T]]:
    """Make `cls` a record (`@record`, `@record(frozen=True)`)."""

    def make(cls: type[T]) -> type[T]:
        return _make(cls, frozen)

    return make if cls is None else make(cls)


def _is_class_var(annotation: Any) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.replace("typing.", "").startswith("ClassVar")


def _make(cls: type[T], frozen: bool) -> type[T]:
    names: list[str] = []
    defaults: dict[str, Any] = {}
    for base in reversed(cls.__mro__[1:]):
        for name in base.__dict__.get(_FIELDS, ()):
            if name not in names:
                names.append(name)
        defaults.update(base.__dict__.get(_DEFAULTS, {}))
    own = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 - the class's own, as written; inspect is what this module spares
    for name, annotation in own.items():
        if _is_class_var(annotation):
            continue
        if name not in names:
            names.append(name)
        if name in cls.__dict__:
            default = cls.__dict__[name]
            if not isinstance(default, _Factory) and type(default).__hash__ is None:
                raise TypeError(f"mutable default {type(default)} for field {name} is not allowed: use default_factory")
            defaults[name] = default
            if isinstance(default, _Factory):
                delattr(cls, name)  # as dataclasses: no class attribute for a factory's field
        else:
            defaults.pop(name, None)
    seen_default = ""
    for name in names:
        if name in defaults:
            seen_default = name
        elif seen_default:
            raise TypeError(f"non-default argument {name!r} follows default argument {seen_default!r}")
    # A __hash__ of the class's own (not the None Python sets for a class body's __eq__) is kept.
    own_hash = "__hash__" in cls.__dict__ and (cls.__dict__["__hash__"] is not None or "__eq__" not in cls.__dict__)
    setattr(cls, _FIELDS, tuple(names))
    setattr(cls, _DEFAULTS, defaults)
    methods: dict[str, Any] = {
        "__init__": _init(cls, names, defaults, frozen),
        "__repr__": _repr,
        "__eq__": _eq,
        "__match_args__": tuple(names),
    }
    if frozen:
        methods.update(__setattr__=_frozen_setattr, __delattr__=_frozen_delattr)
    for name, value in methods.items():
        if name not in cls.__dict__:
            setattr(cls, name, value)
    if not own_hash:
        cls.__hash__ = _hash if frozen else None  # type: ignore[assignment,method-assign]
    return cls


def _init(cls: type, names: list[str], defaults: dict[str, Any], frozen: bool) -> Callable[..., None]:
    """`__init__`, written out and compiled as dataclasses does: one parameter and one assignment per field."""
    scope: dict[str, Any] = {"_set": object.__setattr__}
    params, body = ["self"], []
    for name in names:
        value = name
        if name in defaults:
            scope[f"_default_{name}"] = defaults[name]
            params.append(f"{name}=_default_{name}")
            if isinstance(defaults[name], _Factory):
                value = f"_default_{name}.make() if {name} is _default_{name} else {name}"
        else:
            params.append(name)
        body.append(f"_set(self, {name!r}, {value})" if frozen else f"self.{name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    source = f"def __init__({', '.join(params)}):\n    " + "\n    ".join(body or ["pass"]) + "\n"
    exec(source, scope)  # noqa: S102 - source made above from the class's own field names
    init: Callable[..., None] = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _values(obj: Any) -> tuple[Any, ...]:
    return tuple(getattr(obj, name) for name in getattr(obj, _FIELDS))


def _repr(self: Any) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in getattr(self, _FIELDS))
    return f"{type(self).__qualname__}({shown})"


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        return _values(self) == _values(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(_values(self))


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenRecordError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenRecordError(f"cannot delete field {name!r}")


def fields(record_or_class: Any) -> tuple[str, ...]:
    """The field names of a record (or record class), in order."""
    try:
        return tuple(getattr(record_or_class, _FIELDS))
    except AttributeError:
        raise TypeError(f"{record_or_class!r} is not a record nor a record class") from None


def defaults(record_class: type) -> dict[str, Any]:
    """The fields' defaults, by name: fields without one are left out, a factory's field gets a new value."""
    fields(record_class)
    made = getattr(record_class, _DEFAULTS)
    return {name: value.make() if isinstance(value, _Factory) else value for name, value in made.items()}


def replace(obj: R, /, **changes: Any) -> R:
    """A new record of the same class with the fields in `changes` replaced (its `__init__` checks them)."""
    for name in fields(obj):
        changes.setdefault(name, getattr(obj, name))
    return type(obj)(**changes)
