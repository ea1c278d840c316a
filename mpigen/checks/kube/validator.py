"""Output validation: check generated Kubernetes objects against strict schemas, offline.

kubeconform-style: each object is checked against the strict schema of its exact apiVersion/kind for one
Kubernetes version (`mpigen.checks.kube.schemas` says where schemas come from), and every jsonschema error
becomes an `Issue` whose path is relative to the object and whose message says what was expected and
what was found. Nothing is fetched. A schema is loaded and compiled on first use, once per version and
kind; valid objects pass through its quick check alone, and jsonschema is imported only to explain an
invalid one. The kinds mpigen emits are shipped ready for the newest version (mpigen.checks.kube.schemas).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, cast

from mpigen.checks.kube import schemas as kubeschema
from mpigen.checks.kube._fast_schema import Check, Unsupported, quick_check
from mpigen.checks.kube.versions import default_kube_version, parse_kube_version
from mpigen.errors import Issue, Path, shown

if TYPE_CHECKING:
    from jsonschema import ValidationError
    from jsonschema.protocols import Validator

    from mpigen.targets import Kind

_SHOWN_CHARS = 40


def validate_object(
    obj: dict[str, Any], kube_version: str | None = None, kinds: Iterable[Kind] = ()
) -> list[Issue]:
    """Every problem of one Kubernetes object, checked against the schema of its exact apiVersion/kind
    (a run target's own kinds, `kinds`, against the schemas they name)."""
    version = default_kube_version() if kube_version is None else parse_kube_version(kube_version)
    if not isinstance(obj, dict):
        return [Issue((), f"expected object, got {_describe(obj)}")]
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    for field, value in (("apiVersion", api_version), ("kind", kind)):
        if not isinstance(value, str) or not value:
            return [Issue((field,), f"expected a non-empty string, got {_describe(value)}")]
    vendored = next((own.schema for own in kinds if (own.api_version, own.kind) == (api_version, kind)), None)
    compiled = _object_schema(version, api_version, kind, vendored)
    if compiled is None:
        message = f"unknown kind: no schema for {kind} in {api_version} (Kubernetes {version})"
        return [Issue((), message)]
    return compiled.issues(obj)


def validate_pod_template(template: dict[str, Any], kube_version: str | None = None) -> list[Issue]:
    """Every problem of one pod template (a PodTemplateSpec: metadata and spec), paths relative to it."""
    version = default_kube_version() if kube_version is None else parse_kube_version(kube_version)
    return _definition_schema(version, kubeschema.POD_TEMPLATE_SPEC).issues(template)


class _Compiled:
    """One schema, ready: the quick check for the common case, jsonschema (built on demand, from the
    inlined schema) for errors."""

    def __init__(self, quick: Check | None, schema: Callable[[], dict[str, Any]]) -> None:
        self.quick = quick
        self._schema = schema

    @functools.cached_property
    def schema(self) -> dict[str, Any]:
        return self._schema()

    @functools.cached_property
    def full(self) -> Validator:
        # deferred: jsonschema's validators and referencing load only when a document fails the quick
        # check (_fast_schema)
        import jsonschema
        from referencing import Registry

        cls = jsonschema.validators.validator_for(self.schema, default=jsonschema.Draft202012Validator)
        # An empty registry retrieves nothing: a reference left unresolved is an error, never a download.
        return cls(self.schema, registry=Registry(), format_checker=_format_checker())

    def issues(self, instance: Any) -> list[Issue]:
        try:
            if self.quick is not None and self.quick(instance):
                return []
        except Unsupported:
            pass  # a keyword the quick check lacks: jsonschema decides
        found = (issue for error in self.full.iter_errors(instance) for issue in _issues(error))
        return list(dict.fromkeys(found))


def _compiled(version: str, key: str, schema: Callable[[], dict[str, Any]]) -> _Compiled:
    """The shipped schema of `key` if there is one (checked lazily, nothing inlined), else `schema()`."""
    shipped = kubeschema.shipped_schema(version, key)
    if shipped is not None:
        return _Compiled(quick_check(shipped[0], shipped[1], lazy=True), schema)
    inlined = schema()
    return _Compiled(quick_check(inlined, lazy=True), lambda: inlined)


@functools.lru_cache(maxsize=256)
def _object_schema(
    version: str, api_version: str, kind: str, vendored: str | None = None
) -> _Compiled | None:
    def schema() -> dict[str, Any]:
        found = kubeschema.object_schema(version, api_version, kind, vendored)
        assert found is not None
        return found

    key = kubeschema.shipped_key(api_version, kind)
    if (
        kubeschema.shipped_schema(version, key) is None
        and kubeschema.object_schema(version, api_version, kind, vendored) is None
    ):
        return None
    return _compiled(version, key, schema)


@functools.cache
def _definition_schema(version: str, name: str) -> _Compiled:
    return _compiled(version, name, lambda: kubeschema.definition_schema(version, name))


@functools.cache
def _format_checker() -> Any:
    # deferred: jsonschema's validators load only when a document fails the quick check (_fast_schema)
    import jsonschema

    checker = jsonschema.FormatChecker(formats=())
    for name, check in kubeschema.FORMAT_CHECKS.items():
        checker.checks(name)(check)
    return checker


def _issues(error: ValidationError) -> Iterator[Issue]:
    """The Issues one jsonschema error stands for (several for several unknown or missing fields)."""
    path, keyword, expected, found, schema = _parts(error)
    if keyword == "additionalProperties":
        known = sorted(schema.get("properties", {}))
        for name in _unknown_fields(schema, found):
            # deferred: difflib only for the "did you mean" of an unknown field in an invalid object
            import difflib

            close = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
            hint = f' (did you mean "{close[0]}"?)' if close else ""
            yield Issue((*path, name), f"unknown field {shown(name)}{hint}")
    elif keyword == "required":
        for name in expected:
            if name not in found:
                yield Issue((*path, name), f'missing required field "{name}"')
    elif keyword in ("oneOf", "anyOf"):
        yield from _alternative_issues(error)
    else:
        yield Issue(path, _message(keyword, schema, expected, found, error.message))


def _parts(error: ValidationError) -> tuple[Path, str, Any, Any, dict[str, Any]]:
    """Where, which keyword, its value, the value found, the schema (set on every iter_errors error)."""
    schema = cast(dict[str, Any], error.schema)
    return tuple(error.absolute_path), str(error.validator), error.validator_value, error.instance, schema


def _message(keyword: str, schema: dict[str, Any], expected: Any, found: Any, fallback: str) -> str:
    got = _describe(found)
    if keyword == "type":
        return f"expected {_types(expected)}, got {got}"
    if keyword in ("enum", "const"):
        choices = [json.dumps(c) for c in (expected if keyword == "enum" else [expected])]
        return f"expected {_either(choices)}, got {got}"
    if keyword == "format":
        return f"expected {expected}, got {got}"
    if keyword in ("minimum", "maximum"):
        return f"must be {'>=' if keyword == 'minimum' else '<='} {expected}, got {got}"
    if keyword == "pattern" and "title" in schema:
        return f"expected {schema['title']}, got {got}"  # the vendored schemas name their patterns
    if keyword == "pattern":
        return f"expected a string matching {expected}, got {got}"
    return fallback


def _alternative_issues(error: ValidationError) -> Iterator[Issue]:
    """oneOf/anyOf: one message for int-or-string style unions, else the most relevant branch's issues."""
    # deferred: jsonschema only when a document fails the quick check and a oneOf/anyOf must be explained
    from jsonschema.exceptions import best_match

    path, _, branches, found, _ = _parts(error)
    context = [_parts(e) for e in error.context or ()]
    if all(set(branch) == {"type"} for branch in branches):
        # Quantity, IntOrString: oneOf [string|null, number|null]; also fails on null, valid under both.
        yield Issue(path, f"expected {_types(b['type'] for b in branches)}, got {_describe(found)}")
    elif context and all(keyword == "type" and where == path for where, keyword, *_ in context):
        yield Issue(path, f"expected {_types(c[2] for c in context)}, got {_describe(found)}")
    elif (best := best_match([error])) is not error:
        yield from _issues(best)  # the branch the instance comes closest to: "2GB" fails the pattern
    else:
        yield Issue(path, error.message)


def _unknown_fields(schema: dict[str, Any], instance: dict[str, Any]) -> list[str]:
    known = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    return [k for k in instance if k not in known and not any(re.search(p, k) for p in patterns)]


def _types(types: str | Iterable[str | list[str]]) -> str:
    """`"string" or "number"` from one type, a list of them, or several of either; null only if alone."""
    names: dict[str, None] = {}
    for item in [types] if isinstance(types, str) else types:
        names.update(dict.fromkeys([item] if isinstance(item, str) else item))
    return _either([t for t in names if t != "null"] or list(names))


def _either(choices: list[str]) -> str:
    return f"{', '.join(choices[:-1])} or {choices[-1]}" if len(choices) > 1 else "".join(choices)


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
    return f"{kind} {text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + '...'}"
