"""Output validation: check generated Kubernetes objects against strict schemas, offline.

kubeconform-style: each object is checked against the strict schema of its exact apiVersion/kind for one
Kubernetes version (see `mpigen.kubeschema` for where schemas come from), and every jsonschema error
becomes an `Issue` whose path is relative to the object and whose message says what was expected and
what was found. Nothing is fetched; jsonschema is imported, and a schema loaded and compiled, only on
first use, then reused for every later object of the same kind and version.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from mpigen import kubeschema
from mpigen.errors import Issue

if TYPE_CHECKING:
    from jsonschema import ValidationError
    from jsonschema.protocols import Validator

SUPPORTED_KUBE_VERSIONS: tuple[str, ...] = kubeschema.supported_versions()
DEFAULT_KUBE_VERSION: str = SUPPORTED_KUBE_VERSIONS[-1]

_KUBE_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.\d+)?")
_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_SHOWN_CHARS = 40


def parse_kube_version(text: str) -> str:
    """Normalise "1.30", "v1.30" or "1.30.2" to "1.30"; refuse versions without shipped schemas."""
    match = _KUBE_VERSION.fullmatch(text.strip())
    version = f"{int(match[1])}.{int(match[2])}" if match else None
    if version not in SUPPORTED_KUBE_VERSIONS:
        supported = f"{SUPPORTED_KUBE_VERSIONS[0]} to {SUPPORTED_KUBE_VERSIONS[-1]}"
        raise ValueError(f"unsupported Kubernetes version {text!r}: expected {supported}, like \"1.30\"")
    return version


def validate_object(obj: dict[str, Any], kube_version: str = DEFAULT_KUBE_VERSION) -> list[Issue]:
    """Every problem of one Kubernetes object, checked against the schema of its exact apiVersion/kind."""
    version = parse_kube_version(kube_version)
    if not isinstance(obj, dict):
        return [Issue((), f"expected object, got {_describe(obj)}")]
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    for field, value in (("apiVersion", api_version), ("kind", kind)):
        if not isinstance(value, str) or not value:
            return [Issue((field,), f"expected a non-empty string, got {_describe(value)}")]
    validator = _object_validator(version, api_version, kind)
    if validator is None:
        message = f"unknown kind: no schema for {kind} in {api_version} (Kubernetes {version})"
        return [Issue((), message)]
    return _check(validator, obj)


def validate_pod_template(template: dict[str, Any], kube_version: str = DEFAULT_KUBE_VERSION) -> list[Issue]:
    """Every problem of one pod template (a PodTemplateSpec: metadata and spec), paths relative to it."""
    version = parse_kube_version(kube_version)
    return _check(_definition_validator(version, kubeschema.POD_TEMPLATE_SPEC), template)


@functools.lru_cache(maxsize=256)
def _object_validator(version: str, api_version: str, kind: str) -> Validator | None:
    schema = kubeschema.object_schema(version, api_version, kind)
    return None if schema is None else _compile(schema)


@functools.lru_cache(maxsize=None)
def _definition_validator(version: str, name: str) -> Validator:
    return _compile(kubeschema.definition_schema(version, name))


def _compile(schema: dict[str, Any]) -> Validator:
    import jsonschema
    from referencing import Registry

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    # An empty registry retrieves nothing: a reference left unresolved is an error, never a download.
    return cls(schema, registry=Registry(), format_checker=_format_checker())


@functools.lru_cache(maxsize=None)
def _format_checker() -> Any:
    # Only the integer widths: the API server rejects an out-of-range int32 (replicas: 3000000000). The
    # other formats in the schemas (date-time, byte, double) are in fields mpigen does not write.
    import jsonschema

    checker = jsonschema.FormatChecker(formats=())
    for name, (low, high) in _INT_RANGES.items():
        checker.checks(name)(functools.partial(_in_range, low=low, high=high))
    return checker


def _in_range(value: object, low: int, high: int) -> bool:
    return not isinstance(value, int | float) or isinstance(value, bool) or low <= value <= high


def _check(validator: Validator, instance: Any) -> list[Issue]:
    issues = (issue for error in validator.iter_errors(instance) for issue in _issues(error))
    return list(dict.fromkeys(issues))


def _issues(error: ValidationError) -> Iterator[Issue]:
    """The Issues one jsonschema error stands for (several for several unknown or missing fields)."""
    path, keyword, expected, found = tuple(error.absolute_path), error.validator, error.validator_value, error.instance
    if keyword == "additionalProperties":
        for name in _unknown_fields(error.schema, found):
            yield Issue((*path, name), f'unknown field "{name}"')
    elif keyword == "required":
        for name in expected:
            if name not in found:
                yield Issue((*path, name), f'missing required field "{name}"')
    elif keyword in ("oneOf", "anyOf"):
        yield from _alternative_issues(error)
    else:
        yield Issue(path, _message(str(keyword), expected, found, error.message))


def _message(keyword: str, expected: Any, found: Any, fallback: str) -> str:
    got = _describe(found)
    if keyword == "type":
        return f"expected {_types(expected)}, got {got}"
    if keyword in ("enum", "const"):
        choices = expected if keyword == "enum" else [expected]
        return f"expected one of {', '.join(json.dumps(c) for c in choices if c is not None)}; got {got}"
    if keyword == "format":
        return f"expected {expected}, got {got}"
    if keyword in ("minimum", "maximum"):
        return f"must be {'>=' if keyword == 'minimum' else '<='} {expected}, got {got}"
    if keyword == "pattern":
        return f"got {got}, which does not match {expected}"
    return fallback


def _alternative_issues(error: ValidationError) -> Iterator[Issue]:
    """oneOf/anyOf: one message for int-or-string style unions, else the most relevant branch's issues."""
    from jsonschema.exceptions import best_match

    path, branches = tuple(error.absolute_path), error.validator_value
    context = list(error.context or ())
    if all(set(branch) == {"type"} for branch in branches):
        # Quantity, IntOrString: oneOf [string|null, number|null]; also fails on null, valid under both.
        yield Issue(path, f"expected {_types(b['type'] for b in branches)}, got {_describe(error.instance)}")
    elif context and all(e.validator == "type" and e.absolute_path == error.absolute_path for e in context):
        yield Issue(path, f"expected {_types(e.validator_value for e in context)}, got {_describe(error.instance)}")
    elif context:
        yield from _issues(best_match(context))
    else:
        yield Issue(path, error.message)


def _unknown_fields(schema: dict[str, Any], instance: dict[str, Any]) -> list[str]:
    known = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    return [k for k in instance if k not in known and not any(re.search(p, k) for p in patterns)]


def _types(types: str | Iterable[str | list[str]]) -> str:
    names: list[str] = []
    for item in [types] if isinstance(types, str) else types:
        names.extend(t for t in ([item] if isinstance(item, str) else item) if t not in names)
    shown = [t for t in names if t != "null"] or names
    return " or ".join(shown)


def _describe(value: Any) -> str:
    """A found value as messages show it: `string "3"`, `integer 3`, `boolean true`, `null`, `object`."""
    if value is None:
        return "null"
    if isinstance(value, dict | list):
        return "object" if isinstance(value, dict) else "array"
    kind = {bool: "boolean", int: "integer", float: "number", str: "string"}.get(type(value))
    if kind is None:
        return type(value).__name__
    text = json.dumps(value)
    return f"{kind} {text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 4] + '...' + text[-1]}"
