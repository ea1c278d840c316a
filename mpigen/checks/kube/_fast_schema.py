"""The quick check: a JSON Schema compiled into closures that only say valid or not, 15x faster than jsonschema.

It implements exactly the keywords Kubernetes' strict schemas and the vendored CRD schemas (PodGroups,
Volcano Job, JobSet: sizes of arrays and strings) use, with jsonschema's semantics (3.0 is an
integer, True is not; a keyword only constrains the types it applies to); any other keyword is
unsupported. validator.py asks jsonschema for the errors whenever the quick check says no, and
tests/unit/checks/test_validate.py checks that both agree on thousands of broken objects.

`$ref`s to `#/$defs/<name>` are resolved against the schema's definitions, so a schema need not be
inlined first. Compiled lazily (`lazy=True`), a subschema is compiled the first time an instance reaches
it: one job's objects touch a few hundred of the pod spec's thousands of subschemas, so a process that
checks one job compiles little. An unsupported keyword met lazily raises `Unsupported` from the check.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from mpigen.reference import stand_in

Schema = dict[str, Any]
Check = Callable[[Any], bool]


class Unsupported(Exception):
    """A schema uses a keyword the quick check does not implement."""


def _in_range(low: int, high: int) -> Check:
    return lambda v: not isinstance(v, int | float) or isinstance(v, bool) or low <= v <= high


# Formats checked by both the quick check and validator.py's jsonschema FormatChecker: the API server
# rejects an out-of-range int32 (replicas: 3000000000). The others (date-time, byte, double) are in
# fields mpigen does not write.
FORMAT_CHECKS: dict[str, Check] = {
    "int32": _in_range(-(2**31), 2**31 - 1),
    "int64": _in_range(-(2**63), 2**63 - 1),
}


def _is_number(v: Any) -> bool:
    if type(v) in (int, float):
        return True
    if type(v) in (bool, str, dict, list, type(None)):  # the rest of what a document reads into
        return False
    # deferred: numbers loads only for a value no YAML document reads into (one the Python API passes)
    import numbers

    return isinstance(v, numbers.Number) and not isinstance(v, bool)


def _is_integer(v: Any) -> bool:
    return not isinstance(v, bool) and (isinstance(v, int) or isinstance(v, float) and v.is_integer())


_PY_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
_NUMERIC_TYPES: dict[str, Check] = {"number": _is_number, "integer": _is_integer}
_LOCAL_REF = "#/$defs/"


@stand_in
def quick_check(schema: Schema, defs: Mapping[str, Schema] | None = None, lazy: bool = False) -> Check | None:
    """A fast valid/invalid test equivalent to `schema`, or None if (eagerly compiled) it uses keywords not
    implemented. `defs` resolves `#/$defs/<name>` (default: the schema's own `$defs`)."""
    compiler = _Compiler(schema.get("$defs", {}) if defs is None else defs, lazy)
    try:
        return compiler.compile(schema)
    except Unsupported:
        return None


class _Compiler:
    def __init__(self, defs: Mapping[str, Schema], lazy: bool) -> None:
        self.defs = defs
        self.lazy = lazy
        self.refs: dict[str, Check] = {}
        self.compiling: set[str] = set()

    def compile(self, schema: Any) -> Check:
        if isinstance(schema, bool):
            return (lambda v: True) if schema else (lambda v: False)
        if not isinstance(schema, dict) or schema.keys() - _KNOWN:
            raise Unsupported(schema)
        checks = [_KEYWORDS[k](self, v) for k, v in schema.items() if k in _KEYWORDS]
        if schema.keys() & _OBJECT_KEYWORDS:
            checks.append(self.object(schema))
        if schema.keys() & _BOUND_KEYWORDS:
            checks.append(_bound(schema.get("minimum"), schema.get("maximum")))
        return _all(checks)

    def later(self, schema: Any) -> Check:
        """`schema` compiled now, or (lazily) on the first instance that reaches it."""
        if not self.lazy:
            return self.compile(schema)
        compiled: list[Check] = []

        def check(v: Any) -> bool:
            if not compiled:
                compiled.append(self.compile(schema))
            return compiled[0](v)

        return check

    def ref(self, ref: str) -> Check:
        name = ref[len(_LOCAL_REF) :]
        if not ref.startswith(_LOCAL_REF) or name not in self.defs:
            raise Unsupported(ref)
        if name in self.refs:
            return self.refs[name]
        if name in self.compiling:  # a definition that refers to itself: through a cell, filled below
            return lambda v: self.refs[name](v)
        self.compiling.add(name)
        check = self.compile(self.defs[name])  # lazily: only its own keywords, its properties on first use
        self.compiling.discard(name)
        self.refs[name] = check
        return check

    def object(self, schema: Schema) -> Check:
        """properties, additionalProperties and required, in one pass over the instance's keys."""
        raw: dict[str, Any] = schema.get("properties", {})
        properties = {} if self.lazy else {name: self.compile(sub) for name, sub in raw.items()}
        extra = schema.get("additionalProperties", True)
        closed, extra_check = extra is False, None if isinstance(extra, bool) else self.later(extra)
        required = tuple(schema.get("required", ()))
        compile_ = self.compile

        def check(v: Any) -> bool:
            if not isinstance(v, dict):
                return True
            if any(name not in v for name in required):
                return False
            for key, item in v.items():
                sub = properties.get(key)
                if sub is None and key in raw:
                    sub = properties[key] = compile_(raw[key])  # lazily: the first time the key is seen
                if sub is None:
                    if closed or (extra_check is not None and not extra_check(item)):
                        return False
                elif not sub(item):
                    return False
            return True

        return check


def _all(checks: list[Check]) -> Check:
    if not checks:
        return lambda v: True
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda v: first(v) and second(v)
    return lambda v: all(check(v) for check in checks)


def _type(compiler: _Compiler, value: str | list[str]) -> Check:
    return _type_check((value,) if isinstance(value, str) else tuple(value))


_TYPE_CHECKS: dict[tuple[str, ...], Check] = {}  # a few distinct type lists, thousands of uses


def _type_check(names: tuple[str, ...]) -> Check:
    if names in _TYPE_CHECKS:
        return _TYPE_CHECKS[names]
    if not set(names) <= _PY_TYPES.keys() | _NUMERIC_TYPES.keys():
        raise Unsupported(names)
    plain = tuple(_PY_TYPES[name] for name in names if name in _PY_TYPES)
    numeric = [_NUMERIC_TYPES[name] for name in names if name in _NUMERIC_TYPES]
    if not numeric:
        check: Check = lambda v: isinstance(v, plain)
    else:
        check = lambda v: isinstance(v, plain) or any(test(v) for test in numeric)
    return _TYPE_CHECKS.setdefault(names, check)


def _items(compiler: _Compiler, value: Any) -> Check:
    compiled: list[Check] = [] if compiler.lazy else [compiler.compile(value)]

    def check(v: Any) -> bool:
        if not isinstance(v, list):
            return True
        if not compiled:
            compiled.append(compiler.compile(value))
        item = compiled[0]
        return all(item(x) for x in v)

    return check


def _enum(compiler: _Compiler, value: list[Any]) -> Check:
    if not all(choice is None or isinstance(choice, str) for choice in value):
        raise Unsupported(value)  # jsonschema's equality (1 != True, [1] == (1,)) is not reimplemented
    strings, null_ok = frozenset(c for c in value if c is not None), None in value
    return lambda v: (isinstance(v, str) and v in strings) or (v is None and null_ok)


def _format(compiler: _Compiler, value: str) -> Check:
    return FORMAT_CHECKS.get(value, lambda v: True)


def _bound(low: float | None, high: float | None) -> Check:
    return lambda v: not _is_number(v) or ((low is None or v >= low) and (high is None or v <= high))


def _pattern(compiler: _Compiler, value: str) -> Check:
    regex: list[re.Pattern[str]] = []  # compiled on first use: most patterns never see a string

    def check(v: Any) -> bool:
        if not isinstance(v, str):
            return True
        if not regex:
            regex.append(re.compile(value))
        return regex[0].search(v) is not None

    if not compiler.lazy:
        re.compile(value)  # an eager compile reports a broken pattern now
    return check


def _size(kind: type[list[Any] | str | dict[str, Any]], low: bool) -> Callable[[_Compiler, int], Check]:
    """minItems/maxItems (arrays), minLength/maxLength (strings, in code points as jsonschema counts) and
    minProperties/maxProperties (objects: the Trainer CRDs' `minProperties: 1`); other types pass."""

    def compile_(compiler: _Compiler, bound: int) -> Check:
        if low:
            return lambda v: not isinstance(v, kind) or len(v) >= bound
        return lambda v: not isinstance(v, kind) or len(v) <= bound

    return compile_


def _all_of(compiler: _Compiler, value: list[Any]) -> Check:
    return _all([compiler.compile(sub) for sub in value])


def _any_of(compiler: _Compiler, value: list[Any]) -> Check:
    subs = [compiler.compile(sub) for sub in value]
    return lambda v: any(sub(v) for sub in subs)


def _one_of(compiler: _Compiler, value: list[Any]) -> Check:
    subs = [compiler.compile(sub) for sub in value]
    return lambda v: sum(1 for sub in subs if sub(v)) == 1


def _ref(compiler: _Compiler, value: str) -> Check:
    return compiler.ref(value)


# Keyword -> compiler, for keywords checked on their own. The object keywords compile together into one
# pass over the instance's keys, minimum and maximum into one comparison.
_KEYWORDS: dict[str, Callable[[_Compiler, Any], Check]] = {
    "type": _type,
    "enum": _enum,
    "format": _format,
    "items": _items,
    "pattern": _pattern,
    "allOf": _all_of,
    "anyOf": _any_of,
    "oneOf": _one_of,
    "$ref": _ref,
    "minItems": _size(list, low=True),
    "maxItems": _size(list, low=False),
    "minLength": _size(str, low=True),
    "maxLength": _size(str, low=False),
    "minProperties": _size(dict, low=True),
    "maxProperties": _size(dict, low=False),
}
_OBJECT_KEYWORDS = frozenset({"properties", "additionalProperties", "required"})
_BOUND_KEYWORDS = frozenset({"minimum", "maximum"})
# Annotations: no effect on validity (`default` is the API server's business, not a check).
_KNOWN = _KEYWORDS.keys() | _OBJECT_KEYWORDS | _BOUND_KEYWORDS | {"$schema", "title", "$defs", "default"}
