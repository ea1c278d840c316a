"""Kubernetes schemas: the strict, self-contained JSON Schema of one apiVersion/kind, and a quick check.

Schemas come from two offline places and nowhere else:
- the `-local-strict` schemas that kubernetes-validate ships for each Kubernetes minor version (one file
  per kind, `$ref`s into a `_definitions.json` next to it);
- the CRD schemas vendored in `mpigen.schemas` (the PodGroups of the gang schedulers), whose `$ref`s point
  into the same `_definitions.json`, so their ObjectMeta is that of the chosen Kubernetes version.

Every schema is returned with its `$ref`s inlined and its annotations (descriptions, `x-kubernetes-*`)
dropped: jsonschema then walks plain nested dicts instead of resolving a reference at every step. A
definition that refers to itself (none of the kinds mpigen emits) stays a local `#/$defs/...` reference.
`quick_check` compiles such a schema into closures that only say valid or not, 15x faster than jsonschema.

kubernetes-validate's own lookup maps any group onto its first DNS label (`scheduling.volcano.sh` ->
`scheduling`), which finds the built-in scheduling.k8s.io PodGroup for a Volcano one. Here a file only
counts when its `x-kubernetes-group-version-kind` names the exact group, version and kind asked for.
"""

from __future__ import annotations

import functools
import importlib.resources
import importlib.util
import json
import numbers
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

Schema = dict[str, Any]
Check = Callable[[Any], bool]

POD_TEMPLATE_SPEC = "io.k8s.api.core.v1.PodTemplateSpec"

# CRD outputs, validated against the schemas vendored in schemas/ and never against built-in kinds.
VENDORED_SCHEMAS: dict[tuple[str, str], str] = {
    ("scheduling.volcano.sh/v1beta1", "PodGroup"): "podgroup-volcano-v1beta1.json",
    ("scheduling.x-k8s.io/v1alpha1", "PodGroup"): "podgroup-scheduler-plugins-v1alpha1.json",
}

_VERSION_DIR = re.compile(r"v(\d+)\.(\d+)\.0-local-strict")
_API_VERSION = re.compile(r"(?:([a-z0-9][a-z0-9.-]*)/)?(v[0-9][a-z0-9]*)")
_KIND = re.compile(r"[A-Za-z][A-Za-z0-9]*")
# Annotations (no effect on validity) and references (replaced below). A title stays: validate.py
# names what a pattern means with it.
_DROPPED = frozenset({"description", "$comment", "$id", "$schema", "$ref"})
# Keywords whose values are data (names, literals), not subschemas: never rewritten.
_DATA_KEYWORDS = frozenset({"enum", "const", "required", "default", "examples"})
# Keywords whose values map names to subschemas: the names are kept whatever they are.
_NAMED_SCHEMAS = frozenset({"properties", "patternProperties", "$defs"})


def _schema_root() -> Path:
    # find_spec locates the package without importing it: kubernetes_validate/__init__ imports jsonschema
    # and PyYAML, which would make `import mpigen.kube.validator` slow.
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("mpigen needs the kubernetes-validate package for its Kubernetes schemas")
    return Path(next(iter(spec.submodule_search_locations))) / "kubernetes-json-schema"


def supported_versions() -> tuple[str, ...]:
    """The Kubernetes minor versions ("1.25", ...) with strict schemas installed, oldest first."""
    found = (_VERSION_DIR.fullmatch(entry.name) for entry in _schema_root().iterdir())
    pairs = sorted((int(m[1]), int(m[2])) for m in found if m)
    return tuple(f"{major}.{minor}" for major, minor in pairs)


def _version_dir(version: str) -> Path:
    return _schema_root() / f"v{version}.0-local-strict"


@functools.cache
def _definitions(version: str) -> dict[str, Schema]:
    defs: dict[str, Schema] = json.loads((_version_dir(version) / "_definitions.json").read_bytes())["$defs"]
    return defs


def _ref_name(ref: str) -> str:
    base, _, fragment = ref.partition("#")
    if not fragment.startswith("/$defs/") or not (base == "" or base.endswith("/_definitions.json")):
        raise ValueError(f"unsupported $ref {ref!r}: only Kubernetes _definitions.json is available")
    return fragment.removeprefix("/$defs/")


class _Inliner:
    """Replaces `$ref`s by copies of the definitions they name; keeps cycles as local references."""

    def __init__(self, defs: dict[str, Schema]) -> None:
        self.defs = defs
        self.recursive: set[str] = set()

    def schema(self, node: Any, stack: frozenset[str]) -> Any:
        if isinstance(node, list):
            return [self.schema(item, stack) for item in node]
        if not isinstance(node, dict):
            return node
        out: Schema = {}
        for key, value in node.items():
            if key in _DROPPED or key.startswith("x-kubernetes-"):
                continue
            if key in _DATA_KEYWORDS:
                out[key] = value
            elif key in _NAMED_SCHEMAS:
                out[key] = {name: self.schema(sub, stack) for name, sub in value.items()}
            else:
                out[key] = self.schema(value, stack)
        if "$ref" not in node:
            return out
        target = self.reference(_ref_name(node["$ref"]), stack)
        return {"allOf": [target, out]} if out else target

    def reference(self, name: str, stack: frozenset[str]) -> Any:
        if name in stack:
            self.recursive.add(name)
            return {"$ref": f"#/$defs/{name}"}
        if name not in self.defs:
            raise ValueError(f"unknown Kubernetes definition {name!r}")
        return self.schema(self.defs[name], stack | {name})

    def root(self, schema: Schema) -> Schema:
        out: Schema = {"$schema": schema.get("$schema", "https://json-schema.org/draft/2020-12/schema")}
        out.update(self.schema(schema, frozenset()))
        local: dict[str, Any] = {}
        while pending := sorted(self.recursive - local.keys()):
            for name in pending:
                local[name] = self.schema(self.defs[name], frozenset({name}))
        if local:
            out["$defs"] = local
        return out


def _kube_file(version: str, api_version: str, kind: str) -> Schema | None:
    match = _API_VERSION.fullmatch(api_version)
    if match is None or not _KIND.fullmatch(kind):
        return None
    group, ver = match[1] or "", match[2]
    stem = f"{kind.lower()}-{group.split('.')[0]}-{ver}" if group else f"{kind.lower()}-{ver}"
    path = _version_dir(version) / f"{stem}.json"
    if not path.is_file():
        return None
    schema: Schema = json.loads(path.read_bytes())
    wanted = {"group": group, "version": ver, "kind": kind}
    return schema if wanted in schema.get("x-kubernetes-group-version-kind", []) else None


def _vendored_file(name: str) -> Schema:
    text = importlib.resources.files("mpigen.schemas").joinpath(name).read_text(encoding="utf-8")
    schema: Schema = json.loads(text)
    return schema


@functools.lru_cache(maxsize=256)
def object_schema(version: str, api_version: str, kind: str) -> Schema | None:
    """The strict schema of `kind` in `api_version` for Kubernetes `version`, or None if none is shipped."""
    vendored = VENDORED_SCHEMAS.get((api_version, kind))
    schema = _vendored_file(vendored) if vendored else _kube_file(version, api_version, kind)
    return None if schema is None else _Inliner(_definitions(version)).root(schema)


@functools.cache
def definition_schema(version: str, name: str) -> Schema:
    """One named definition of Kubernetes `version` (e.g. POD_TEMPLATE_SPEC) as a standalone schema."""
    return _Inliner(_definitions(version)).root({"$ref": f"#/$defs/{name}"})


# The quick check implements exactly the keywords these schemas use, with jsonschema's semantics (3.0 is
# an integer, True is not; a keyword only constrains the types it applies to); any other keyword makes
# `quick_check` return None. validate.py asks jsonschema for the errors whenever the quick check says no,
# and tests/test_validate.py checks that both agree on thousands of broken objects.


def _in_range(low: int, high: int) -> Check:
    return lambda v: not isinstance(v, int | float) or isinstance(v, bool) or low <= v <= high


# Formats checked by both the quick check and validate.py's jsonschema FormatChecker: the API server
# rejects an out-of-range int32 (replicas: 3000000000). The others (date-time, byte, double) are in
# fields mpigen does not write.
FORMAT_CHECKS: dict[str, Check] = {
    "int32": _in_range(-(2**31), 2**31 - 1),
    "int64": _in_range(-(2**63), 2**63 - 1),
}


class _Unsupported(Exception):
    """A schema uses a keyword the quick check does not implement."""


def _is_number(v: Any) -> bool:
    return isinstance(v, numbers.Number) and not isinstance(v, bool)


def _is_integer(v: Any) -> bool:
    return not isinstance(v, bool) and (isinstance(v, int) or isinstance(v, float) and v.is_integer())


_PY_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
_NUMERIC_TYPES: dict[str, Check] = {"number": _is_number, "integer": _is_integer}


def quick_check(schema: Schema) -> Check | None:
    """A fast valid/invalid test equivalent to `schema`, or None if it uses keywords not implemented."""
    try:
        return _compile(schema)
    except _Unsupported:
        return None


def _compile(schema: Any) -> Check:
    if isinstance(schema, bool):
        return (lambda v: True) if schema else (lambda v: False)
    if not isinstance(schema, dict) or schema.keys() - _KNOWN:
        raise _Unsupported(schema)
    checks = [_KEYWORDS[k](v) for k, v in schema.items() if k in _KEYWORDS]
    if schema.keys() & _OBJECT_KEYWORDS:
        checks.append(_object(schema))
    if schema.keys() & _BOUND_KEYWORDS:
        checks.append(_bound(schema.get("minimum"), schema.get("maximum")))
    return _all(checks)


def _all(checks: list[Check]) -> Check:
    if not checks:
        return lambda v: True
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda v: first(v) and second(v)
    return lambda v: all(check(v) for check in checks)


def _type(value: str | list[str]) -> Check:
    return _type_check((value,) if isinstance(value, str) else tuple(value))


@functools.cache  # a few distinct type lists, thousands of uses
def _type_check(names: tuple[str, ...]) -> Check:
    if not set(names) <= _PY_TYPES.keys() | _NUMERIC_TYPES.keys():
        raise _Unsupported(names)
    plain = tuple(_PY_TYPES[name] for name in names if name in _PY_TYPES)
    numeric = [_NUMERIC_TYPES[name] for name in names if name in _NUMERIC_TYPES]
    if not numeric:
        return lambda v: isinstance(v, plain)
    return lambda v: isinstance(v, plain) or any(test(v) for test in numeric)


def _object(schema: Schema) -> Check:
    """properties, additionalProperties and required, in one pass over the instance's keys."""
    properties = {name: _compile(sub) for name, sub in schema.get("properties", {}).items()}
    extra = schema.get("additionalProperties", True)
    closed, extra_check = extra is False, None if isinstance(extra, bool) else _compile(extra)
    required = tuple(schema.get("required", ()))

    def check(v: Any) -> bool:
        if not isinstance(v, dict):
            return True
        if any(name not in v for name in required):
            return False
        for key, item in v.items():
            sub = properties.get(key)
            if sub is None:
                if closed or (extra_check is not None and not extra_check(item)):
                    return False
            elif not sub(item):
                return False
        return True

    return check


def _items(value: Any) -> Check:
    item = _compile(value)
    return lambda v: not isinstance(v, list) or all(item(x) for x in v)


def _enum(value: list[Any]) -> Check:
    if not all(choice is None or isinstance(choice, str) for choice in value):
        raise _Unsupported(value)  # jsonschema's equality (1 != True, [1] == (1,)) is not reimplemented
    strings, null_ok = frozenset(c for c in value if c is not None), None in value
    return lambda v: (isinstance(v, str) and v in strings) or (v is None and null_ok)


def _format(value: str) -> Check:
    return FORMAT_CHECKS.get(value, lambda v: True)


def _bound(low: float | None, high: float | None) -> Check:
    return lambda v: not _is_number(v) or ((low is None or v >= low) and (high is None or v <= high))


def _pattern(value: str) -> Check:
    regex = re.compile(value)
    return lambda v: not isinstance(v, str) or regex.search(v) is not None


def _all_of(value: list[Any]) -> Check:
    return _all([_compile(sub) for sub in value])


def _any_of(value: list[Any]) -> Check:
    subs = [_compile(sub) for sub in value]
    return lambda v: any(sub(v) for sub in subs)


def _one_of(value: list[Any]) -> Check:
    subs = [_compile(sub) for sub in value]
    return lambda v: sum(1 for sub in subs if sub(v)) == 1


# Keyword -> compiler, for keywords checked on their own. The object keywords compile together into one
# pass over the instance's keys, minimum and maximum into one comparison.
_KEYWORDS: dict[str, Callable[[Any], Check]] = {
    "type": _type,
    "enum": _enum,
    "format": _format,
    "items": _items,
    "pattern": _pattern,
    "allOf": _all_of,
    "anyOf": _any_of,
    "oneOf": _one_of,
}
_OBJECT_KEYWORDS = frozenset({"properties", "additionalProperties", "required"})
_BOUND_KEYWORDS = frozenset({"minimum", "maximum"})
_KNOWN = _KEYWORDS.keys() | _OBJECT_KEYWORDS | _BOUND_KEYWORDS | {"$schema", "title"}
