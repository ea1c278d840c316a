"""Input models: declared once as plain classes, checked fast in plain Python, explained by pydantic.

A model is a `Strict` subclass with annotated fields, as pydantic models are written
(`replicas: int | None = Field(default=None, ge=0, le=INT32_MAX)`). The declaration is the one source of
truth for three things:

- `parse_fast(model, document)` (mpigen.inputs._fast_model, a stand-in for pydantic): the model instance of a valid document, checked in plain Python with
  pydantic's strict, extra-forbidding semantics (an int is an int, never a bool, float or string; an
  unknown field is refused), or None for anything it does not accept;
- `pydantic_model(model)`: the same model built as a pydantic model (strict, `extra="forbid"`, frozen),
  which validates a document the fast check refused and produces the messages with their field paths;
- the input JSON Schemas, which tools/schemagen.py generates from those pydantic models.

Importing pydantic and building its models costs a tenth of a second, longer than a whole render of a
valid job: only an invalid document (or the schema generator) pays it. The fast check is conservative:
whatever it is unsure of (a type it does not implement, a subclass of int) it refuses, and pydantic
decides. tests/unit/inputs/test_input_models.py checks that both agree on thousands of broken documents.
"""

from __future__ import annotations

import functools
import sys
import types
import typing
from collections.abc import Callable
from typing import Any

from mpigen.records import Record

Convert = Callable[[Any], Any]


class FieldSpec:
    """What `Field(...)` declares: a default (or none: required) and integer bounds."""

    __slots__ = ("default", "ge", "le")

    def __init__(self, default: Any, ge: int | None, le: int | None) -> None:
        self.default, self.ge, self.le = default, ge, le


REQUIRED: Any = ...  # pydantic's spelling of "no default"


def Field(default: Any = REQUIRED, *, ge: int | None = None, le: int | None = None) -> Any:
    """A field's default and bounds, as pydantic's `Field` takes them."""
    return FieldSpec(default, ge, le)


class Strict:
    """Base of every input model: strict types, unknown fields refused, instances not changed after parsing.

    `Model()` is the model with every field at its default (only models whose fields all have one)."""

    def __init__(self, **values: Any) -> None:
        for spec in _fields(type(self)):
            value = values.pop(spec.name, spec.default)
            if value is REQUIRED:
                raise TypeError(f"{type(self).__name__}: {spec.name} is required")
            object.__setattr__(self, spec.name, value)
        if values:
            raise TypeError(f"{type(self).__name__}: unknown fields {sorted(values)}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def __repr__(self) -> str:
        shown = ", ".join(f"{spec.name}={getattr(self, spec.name)!r}" for spec in _fields(type(self)))
        return f"{type(self).__name__}({shown})"


class _Field(Record):
    name: str
    annotation: Any
    default: Any
    ge: int | None
    le: int | None
    plain: bool = True  # no constraints other than ge and le
    info: Any = None  # pydantic's FieldInfo, when the model declares one


def _declared(value: Any) -> tuple[Any, int | None, int | None, bool, Any]:
    """(default, ge, le, plain) of a class attribute: mpigen's Field, pydantic's FieldInfo (the same
    meaning; other constraints make the field not plain) or a plain default."""
    if isinstance(value, FieldSpec):
        return value.default, value.ge, value.le, True, None
    if type(value).__name__ == "FieldInfo":
        bounds = {type(m).__name__.lower(): m for m in value.metadata}
        plain = set(bounds) <= {"ge", "le"}
        ge, le = (getattr(bounds[k], k) if k in bounds and plain else None for k in ("ge", "le"))
        return (REQUIRED if value.is_required() else value.default), ge, le, plain, value
    return value, None, None, True, None


_FIELDS: dict[type, tuple[_Field, ...]] = {}
_PYDANTIC: dict[type, Any] = {}


def _fields(model: type[Strict]) -> tuple[_Field, ...]:
    """The fields of `model` in declaration order, annotations evaluated in the module that declares them."""
    if model not in _FIELDS:
        _FIELDS[model] = _read_fields(model)
    return _FIELDS[model]


def _read_fields(model: type[Strict]) -> tuple[_Field, ...]:
    fields: dict[str, _Field] = {}
    for cls in reversed(model.__mro__):
        if not (isinstance(cls, type) and issubclass(cls, Strict)) or cls is Strict:
            continue
        namespace = vars(sys.modules[cls.__module__])
        for name, annotation in vars(cls).get("__annotations__", {}).items():
            if isinstance(annotation, str):
                annotation = eval(annotation, dict(namespace))
            fields[name] = _Field(name, annotation, *_declared(vars(cls).get(name, REQUIRED)))
    return tuple(fields.values())


# --- the same model in pydantic -----------------------------------------------------------------------


def pydantic_model(model: type[Strict]) -> Any:
    """`model` as a pydantic model (strict, extra fields forbidden, frozen), for errors and schemas."""
    if model not in _PYDANTIC:
        _PYDANTIC[model] = _build_pydantic(model)
    return _PYDANTIC[model]


def _build_pydantic(model: type[Strict]) -> Any:
    # deferred: pydantic (a third of a render's start-up) loads only when a document fails the quick check,
    # for its messages
    import pydantic

    fields: dict[str, Any] = {}
    for spec in _fields(model):
        bounds = {key: value for key, value in (("ge", spec.ge), ("le", spec.le)) if value is not None}
        info = spec.info if spec.info is not None else pydantic.Field(spec.default, **bounds)  # type: ignore[call-overload]
        fields[spec.name] = (_in_pydantic(spec.annotation), info)
    config = pydantic.ConfigDict(extra="forbid", strict=True, frozen=True)
    built: Any = pydantic.create_model(
        model.__name__, __config__=config, __doc__=model.__doc__, __module__=model.__module__, **fields
    )
    return built


def _in_pydantic(annotation: Any) -> Any:
    """An annotation with every Strict model in it replaced by its pydantic model."""
    if isinstance(annotation, type) and issubclass(annotation, Strict):
        return pydantic_model(annotation)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is types.UnionType or origin is typing.Union:
        return functools.reduce(lambda a, b: a | b, [_in_pydantic(arg) for arg in args])
    if origin in (dict, list):
        return types.GenericAlias(origin, tuple(_in_pydantic(arg) for arg in args))
    return annotation
