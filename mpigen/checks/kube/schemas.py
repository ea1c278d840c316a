"""Kubernetes schemas: the strict, self-contained JSON Schema of one apiVersion/kind, and a quick check.

Schemas come from two offline places and nowhere else:
- the `-local-strict` schemas that kubernetes-validate ships for each Kubernetes minor version (one file
  per kind, `$ref`s into a `_definitions.json` next to it);
- the CRD schemas vendored in `mpigen.schemas` (the PodGroups of the gang schedulers), whose `$ref`s point
  into the same `_definitions.json`, so their ObjectMeta is that of the chosen Kubernetes version.

Every schema is returned with its `$ref`s inlined and its annotations (descriptions, `x-kubernetes-*`)
dropped: jsonschema then walks plain nested dicts instead of resolving a reference at every step. A
definition that refers to itself (none of the kinds mpigen emits) stays a local `#/$defs/...` reference.
`mpigen.checks.kube._fast_schema` compiles a schema into closures that only say valid or not, 15x faster than jsonschema.

For the newest Kubernetes version mpigen was released with, the kinds it emits are also shipped inside
the package (`mpigen/checks/kube/strict-<version>.json`, written by tools/kubeschemas.py, checked against
kubernetes-validate's files by a test): their schemas with annotations dropped and only the definitions
they reach, 60 KB instead of the 1.8 MB `_definitions.json`, so one job's check starts at once.

kubernetes-validate's own lookup maps any group onto its first DNS label (`scheduling.volcano.sh` ->
`scheduling`), which finds the built-in scheduling.k8s.io PodGroup for a Volcano one. Here a file only
counts when its `x-kubernetes-group-version-kind` names the exact group, version and kind asked for.
"""

from __future__ import annotations

import functools
import importlib.util
import io
import json
import os
import re
from typing import TYPE_CHECKING, Any

from mpigen.checks.kube._fast_schema import FORMAT_CHECKS, quick_check

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["FORMAT_CHECKS", "quick_check"]  # re-exported: where they were first defined

Schema = dict[str, Any]

POD_TEMPLATE_SPEC = "io.k8s.api.core.v1.PodTemplateSpec"

# CRD outputs, validated against the schemas vendored in schemas/ and never against built-in kinds: the
# gang schedulers' PodGroups here, a run target's own kinds in its `kinds` module (mpigen.targets.Kind),
# handed in by the caller as `vendored`.
VENDORED_SCHEMAS: dict[tuple[str, str], str] = {
    ("scheduling.volcano.sh/v1beta1", "PodGroup"): "podgroup-volcano-v1beta1.json",
    ("scheduling.x-k8s.io/v1alpha1", "PodGroup"): "podgroup-scheduler-plugins-v1alpha1.json",
}
# CRD inputs (never emitted, so not in the shipped strict file), written by tools/trainerschema.py from
# the CRDs of Kubeflow Trainer v2.3.0.
TRAINER = "trainer.kubeflow.org/v1alpha1"
INPUT_SCHEMAS: dict[tuple[str, str], str] = {
    (TRAINER, "TrainJob"): "trainjob-trainer-v1alpha1.json",
    (TRAINER, "TrainingRuntime"): "trainingruntime-trainer-v1alpha1.json",
    (TRAINER, "ClusterTrainingRuntime"): "clustertrainingruntime-trainer-v1alpha1.json",
}

_VERSION_DIR = re.compile(r"v(\d+)\.(\d+)\.0-local-strict")
_API_VERSION = r"(?:([a-z0-9][a-z0-9.-]*)/)?(v[0-9][a-z0-9]*)"
_KIND = r"[A-Za-z][A-Za-z0-9]*"
# Annotations (no effect on validity) and references (replaced below). A title stays: validate.py
# names what a pattern means with it.
_DROPPED = frozenset({"description", "$comment", "$id", "$schema", "$ref"})
# Keywords whose values are data (names, literals), not subschemas: never rewritten.
_DATA_KEYWORDS = frozenset({"enum", "const", "required", "default", "examples"})
# Keywords whose values map names to subschemas: the names are kept whatever they are.
_NAMED_SCHEMAS = frozenset({"properties", "patternProperties", "$defs"})


def _schema_dir() -> str:
    # find_spec locates the package without importing it: kubernetes_validate/__init__ imports jsonschema
    # and PyYAML, which would make `import mpigen.checks.kube.validator` slow.

    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("mpigen needs the kubernetes-validate package for its Kubernetes schemas")
    return os.path.join(next(iter(spec.submodule_search_locations)), "kubernetes-json-schema")


def _schema_root() -> Path:
    # pathlib loads only when kubernetes-validate's files are read: one job's check lists their
    # directory (the versions) and reads the shipped file alone (start-up time).
    # deferred: pathlib only when a schema is read from kubernetes-validate's own files, which a valid
    # job's render never does
    from pathlib import Path

    return Path(_schema_dir())


def supported_versions() -> tuple[str, ...]:
    """The Kubernetes minor versions ("1.25", ...) with strict schemas installed, oldest first."""
    found = (_VERSION_DIR.fullmatch(name) for name in os.listdir(_schema_dir()))
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
    match = re.fullmatch(_API_VERSION, api_version)
    if match is None or not re.fullmatch(_KIND, kind):
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
    # deferred: importlib.resources (with pathlib) only for a schema shipped in mpigen/schemas: Trainer's
    # kinds, `mpigen schema`
    import importlib.resources

    text = importlib.resources.files("mpigen.schemas").joinpath(name).read_text(encoding="utf-8")
    schema: Schema = json.loads(text)
    return schema


@functools.lru_cache(maxsize=256)
def object_schema(version: str, api_version: str, kind: str, vendored: str | None = None) -> Schema | None:
    """The strict schema of `kind` in `api_version` for Kubernetes `version`, or None if none is shipped;
    `vendored` names the file in schemas/ of a run target's own kind."""
    vendored = vendored or VENDORED_SCHEMAS.get((api_version, kind)) or INPUT_SCHEMAS.get((api_version, kind))
    schema = _vendored_file(vendored) if vendored else _kube_file(version, api_version, kind)
    return None if schema is None else _Inliner(_definitions(version)).root(schema)


@functools.cache
def definition_schema(version: str, name: str) -> Schema:
    """One named definition of Kubernetes `version` (e.g. POD_TEMPLATE_SPEC) as a standalone schema."""
    return _Inliner(_definitions(version)).root({"$ref": f"#/$defs/{name}"})


def shipped_file(version: str) -> str:
    """Where the schemas shipped for `version` would be (the file exists for one version, or none)."""
    return os.path.join(os.path.dirname(__file__), f"strict-{version}.json")


@functools.cache
def _shipped(version: str) -> dict[str, Any] | None:
    try:
        with io.FileIO(shipped_file(version)) as file:  # not pathlib: one more import for one read
            data: dict[str, Any] = json.loads(file.readall())
    except FileNotFoundError:
        return None
    return data


def shipped_key(api_version: str, kind: str) -> str:
    return f"{api_version} {kind}"


def shipped_schema(version: str, key: str) -> tuple[Schema, dict[str, Schema]] | None:
    """A shipped schema (`shipped_key(...)` or a definition's name) with the definitions its `#/$defs/`
    references name, or None if `version` or `key` is not shipped."""
    data = _shipped(version)
    if data is None:
        return None
    if key in data["schemas"]:
        return data["schemas"][key], data["$defs"]
    if key in data["$defs"]:
        return {"$ref": f"#/$defs/{key}"}, data["$defs"]
    return None
