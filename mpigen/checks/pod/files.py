"""The files a volume writes: a configMap's or secret's items (KeyToPath) and file modes, downward API
files, and projected volumes with their sources (Kubernetes 1.37 pkg/apis/core/validation:
validateKeyToPath, validateDownwardAPIVolumeFile, validateProjectedVolumeSource,
validateProjectionSources). The clusterTrustBundle and podCertificate projections are in
mpigen.checks.pod.projected."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mpigen.checks.pod import env, projected
from mpigen.checks.pod.field import Path, Violation, forbidden, invalid, required
from mpigen.checks.pod.view import mapping, mappings, number, text

_FILE_MODE = "must be a number between 0 and 0777 (octal), both inclusive"


def mode(source: dict[str, Any], where: Path, field: str) -> Iterator[Violation]:
    mode = number(source.get(field))
    if mode is not None and not 0 <= mode <= 0o777:
        yield invalid((*where, field), mode, _FILE_MODE)


def key_to_path(item: dict[str, Any], where: Path) -> Iterator[Violation]:
    if not text(item.get("key")):
        yield required((*where, "key"))
    path = text(item.get("path"))
    if not path:
        yield required((*where, "path"))
    if path.startswith("/"):
        yield invalid((*where, "path"), path, "must be a relative path")
    if ".." in path.split("/"):
        yield invalid((*where, "path"), path, "must not contain '..'")
    if path.startswith("..") and not path.startswith("../"):
        yield invalid((*where, "path"), path, "must not start with '..'")
    yield from mode(item, where, "mode")


_PROJECTIONS = ("secret", "configMap", "downwardAPI", "serviceAccountToken")
_PROJECTIONS_1_37 = (*_PROJECTIONS, "clusterTrustBundle", "podCertificate")


def projected_volume(source: dict[str, Any], where: Path, version: tuple[int, int]) -> Iterator[Violation]:
    yield from mode(source, where, "defaultMode")
    paths: set[str] = set()

    def claim(path: str, value: object) -> Iterator[Violation]:
        if path in paths:
            yield invalid(where, value, "conflicting duplicate paths")
        paths.add(path)

    for index, item in enumerate(mappings(source.get("sources"))):
        at = (*where, "sources", index)
        kinds = _PROJECTIONS_1_37 if projected.read(version) else _PROJECTIONS
        present = [kind for kind in kinds if (item or {}).get(kind) is not None]
        for kind in present:
            part = mapping((item or {})[kind])
            if kind in ("secret", "configMap"):
                if not text(part.get("name")):
                    yield required((*at, kind, "name"))
                for j, key_path in enumerate(mappings(part.get("items"))):
                    yield from key_to_path(key_path or {}, (*at, kind, "items", j))
                    if text((key_path or {}).get("path")):
                        yield from claim(text((key_path or {}).get("path")), text(part.get("name")))
            elif kind == "clusterTrustBundle":
                yield from projected.cluster_trust_bundle(part, (*at, kind), claim)
            elif kind == "podCertificate":
                yield from projected.pod_certificate(part, (*at, kind), claim)
            elif kind == "downwardAPI":
                for file in mappings(part.get("items")):
                    yield from _downward_file(file or {}, (*at, kind))
                    path = text((file or {}).get("path"))
                    if path:
                        yield from claim(path, path)
            else:
                expiry = number(part.get("expirationSeconds"))
                if expiry is not None and expiry < 600:
                    yield invalid(
                        (*at, kind, "expirationSeconds"),
                        expiry,
                        "may not specify a duration less than 10 minutes",
                    )
                if expiry is not None and expiry > 1 << 32:
                    yield invalid(
                        (*at, kind, "expirationSeconds"),
                        expiry,
                        "may not specify a duration larger than 2^32 seconds",
                    )
                path = text(part.get("path"))
                if not path:  # the server names the volume's `projected.path`
                    yield required((*where, "path"))
                else:
                    yield from projected.local_path(path, (*where, "path"))
        if len(present) > 1:
            yield forbidden(at, "may not specify more than 1 volume type per source")


VOLUME_FIELD_PATHS = (
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
)


def _downward_file(file: dict[str, Any], where: Path) -> Iterator[Violation]:
    """validateDownwardAPIVolumeFile; the server names the errors of every file at the source's path."""
    path = text(file.get("path"))
    if not path:
        yield required((*where, "path"))
    yield from projected.local_path(path, (*where, "path"))
    field, resource = file.get("fieldRef"), file.get("resourceFieldRef")
    if isinstance(field, dict):
        yield from env.field_ref(field, (*where, "fieldRef"), VOLUME_FIELD_PATHS)
        if resource is not None:
            yield invalid(
                where, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"
            )
    elif isinstance(resource, dict):
        yield from env.resource_field_ref(resource, (*where, "resourceFieldRef"), volume=True)
    else:
        yield required(where, "one of fieldRef and resourceFieldRef is required")
    yield from mode(file, where, "mode")


def downward_api(source: dict[str, Any], where: Path) -> Iterator[Violation]:
    yield from mode(source, where, "defaultMode")
    for file in mappings(source.get("items")):
        yield from _downward_file(file or {}, where)
