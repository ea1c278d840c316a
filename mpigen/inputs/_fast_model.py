"""The fast check of the input models: a stand-in for pydantic (mpigen.reference.STAND_INS).

`parse_fast(model, document)` is the model instance of a valid document, checked in plain Python with
pydantic's strict, extra-forbidding semantics (an int is an int, never a bool, float or string; an
unknown field is refused), or None for anything it does not accept: then pydantic decides
(mpigen.inputs.model.pydantic_model). tests/unit/inputs/test_input_models.py holds the two to agreement.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from typing import Any

from mpigen.inputs.model import REQUIRED, Strict, _fields
from mpigen.reference import stand_in

Convert = Callable[[Any], Any]
_CONVERTERS: dict[type, Convert | None] = {}


class _Invalid(Exception):
    """The fast check does not accept the value (pydantic decides)."""


class _Unsupported(Exception):
    """An annotation the fast check does not implement: the model is always checked by pydantic."""


@stand_in
def parse_fast(model: type[Strict], document: Any) -> Any:
    """The instance of `model` for `document` if the fast check accepts it, else None."""
    convert = _model_converter(model)
    if convert is None:
        return None
    try:
        return convert(document)
    except _Invalid:
        return None


def _model_converter(model: type[Strict]) -> Convert | None:
    if model not in _CONVERTERS:
        try:
            _CONVERTERS[model] = _converter(model)
        except _Unsupported:
            _CONVERTERS[model] = None
    return _CONVERTERS[model]


def _exact(kind: type) -> Convert:
    def convert(value: Any) -> Any:
        if type(value) is not kind:
            raise _Invalid
        return value

    return convert


def _none(value: Any) -> Any:
    if value is not None:
        raise _Invalid
    return value


def _converter(annotation: Any) -> Convert:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is Any:
        return lambda value: value
    if annotation in (int, str, bool):
        return _exact(annotation)
    if annotation is None or annotation is type(None):
        return _none
    if origin in (types.UnionType, typing.Union):
        return _union([_converter(arg) for arg in args])
    if origin is typing.Literal and all(type(arg) is str for arg in args):
        choices = frozenset(args)
        return lambda value: value if type(value) is str and value in choices else _fail()
    if origin is dict and args and args[0] is str:
        return _dict(_converter(args[1]))
    if origin is list and args:
        return _list(_converter(args[0]))
    if isinstance(annotation, type) and issubclass(annotation, Strict):
        return _object(annotation)
    raise _Unsupported(annotation)


def _fail() -> Any:
    raise _Invalid


def _union(converters: list[Convert]) -> Convert:
    def convert(value: Any) -> Any:
        for each in converters:  # the branches take disjoint types: at most one accepts
            try:
                return each(value)
            except _Invalid:
                continue
        raise _Invalid

    return convert


def _dict(item: Convert) -> Convert:
    def convert(value: Any) -> Any:
        if type(value) is not dict or any(type(key) is not str for key in value):
            raise _Invalid
        return {key: item(v) for key, v in value.items()}

    return convert


def _list(item: Convert) -> Convert:
    def convert(value: Any) -> Any:
        if type(value) is not list:
            raise _Invalid
        return [item(v) for v in value]

    return convert


def _bounded(convert: Convert, ge: int | None, le: int | None) -> Convert:
    def check(value: Any) -> Any:
        value = convert(value)
        if type(value) is int and ((ge is not None and value < ge) or (le is not None and value > le)):
            raise _Invalid
        return value

    return check


def _object(model: type[Strict]) -> Convert:
    table: dict[str, tuple[Convert, Any]] = {}
    required: list[str] = []

    def fill() -> None:
        for spec in _fields(model):
            bounded = spec.ge is not None or spec.le is not None
            if not spec.plain or (bounded and not _is_int(spec.annotation)):
                raise _Unsupported(spec)
            convert = _converter(spec.annotation)
            if bounded:
                convert = _bounded(convert, spec.ge, spec.le)
            table[spec.name] = (convert, spec.default)
            if spec.default is REQUIRED:
                required.append(spec.name)

    fill()

    def convert(value: Any) -> Any:
        if type(value) is not dict:
            raise _Invalid
        for key in value:
            if key not in table:
                raise _Invalid
        for name in required:
            if name not in value:
                raise _Invalid
        instance = object.__new__(model)
        for name, (field_convert, default) in table.items():
            object.__setattr__(instance, name, field_convert(value[name]) if name in value else default)
        return instance

    return convert


def _is_int(annotation: Any) -> bool:
    return annotation is int or set(typing.get_args(annotation)) == {int, type(None)}
