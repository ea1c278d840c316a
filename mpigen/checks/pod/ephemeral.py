"""An ephemeral volume's claim template (Kubernetes 1.37 pkg/apis/core/validation:
validateEphemeralVolumeSource, ValidatePersistentVolumeClaimTemplate, ValidateTemplateObjectMeta,
ValidatePersistentVolumeClaimSpec, validateDataSource, validateDataSourceRef).

What changed since 1.25 follows the version: ReadWriteOncePod is an access mode from 1.27 (beta, on),
a data source's apiGroup is a DNS subdomain from 1.29, and volumeAttributesClassName is read from
1.34 (VolumeAttributesClass on by default)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mpigen.checks.pod import formats
from mpigen.checks.pod.field import Key, Path, Violation, forbidden, invalid, not_supported, required
from mpigen.checks.pod.metadata import annotation_map, label_selector, labels
from mpigen.checks.pod.view import mapping, text

VOLUME_MODES = ("Block", "Filesystem")
# ObjectMeta's fields other than labels and annotations, by their JSON names, as the server names
# them (the Go field's name with its first letter in lower case: UID is `uID`).
_META_FIELDS = {
    "name": "name",
    "generateName": "generateName",
    "namespace": "namespace",
    "selfLink": "selfLink",
    "uid": "uID",
    "resourceVersion": "resourceVersion",
    "generation": "generation",
    "creationTimestamp": "creationTimestamp",
    "deletionTimestamp": "deletionTimestamp",
    "deletionGracePeriodSeconds": "deletionGracePeriodSeconds",
    "ownerReferences": "ownerReferences",
    "finalizers": "finalizers",
    "managedFields": "managedFields",
}


def access_modes(version: tuple[int, int]) -> tuple[str, ...]:
    modes = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce")
    return (*modes, "ReadWriteOncePod") if version >= (1, 27) else modes


def ephemeral(source: dict[str, Any], where: Path, version: tuple[int, int]) -> Iterator[Violation]:
    template = source.get("volumeClaimTemplate")
    at = (*where, "volumeClaimTemplate")
    if template is None:
        yield required(at)
        return
    meta = mapping(mapping(template).get("metadata"))
    yield from annotation_map(meta.get("annotations"), (*at, "metadata", "annotations"))
    yield from labels(meta.get("labels"), (*at, "metadata", "labels"))
    for name, shown in _META_FIELDS.items():
        value = meta.get(name)
        pointer = name in ("deletionGracePeriodSeconds", "deletionTimestamp")
        if value is not None and (pointer or value not in ("", 0)):  # not Go's zero value ([] is set)
            yield forbidden((*at, "metadata", shown), "cannot be set")
    yield from claim_spec(mapping(mapping(template).get("spec")), (*at, "spec"), version)


def claim_spec(spec: dict[str, Any], at: Path, version: tuple[int, int]) -> Iterator[Violation]:
    modes = spec.get("accessModes") or []
    if not modes:
        yield required((*at, "accessModes"), "at least 1 access mode is required")
    if spec.get("selector") is not None:
        yield from label_selector(spec["selector"], (*at, "selector"))
    supported = access_modes(version)
    once_pod = others = False
    for mode in modes if isinstance(modes, list) else []:
        if mode not in supported:
            yield not_supported((*at, "accessModes"), mode, supported)
        if mode == "ReadWriteOncePod":
            once_pod = True
        elif mode in supported:
            others = True
    if once_pod and others:
        yield forbidden((*at, "accessModes"), "may not use ReadWriteOncePod with other access modes")
    yield from _storage(mapping(mapping(spec.get("resources")).get("requests")), at)
    for name in ("storageClassName", "volumeAttributesClassName"):
        value = text(spec.get(name))
        if value and (name == "storageClassName" or version >= (1, 34)):
            yield from (invalid((*at, name), value, msg) for msg in formats.dns1123_subdomain(value))
    mode = spec.get("volumeMode")
    if isinstance(mode, str) and mode not in VOLUME_MODES:
        yield not_supported((*at, "volumeMode"), mode, VOLUME_MODES)
    yield from _data_sources(spec, at, version)


def _storage(requests: dict[str, Any], at: Path) -> Iterator[Violation]:
    where = (*at, "resources", Key("storage"))
    if "storage" not in requests:
        yield required(where)
        return
    raw = requests["storage"]
    value = formats.parse_quantity(raw)
    if value is None:  # refused as the object is decoded
        yield invalid(
            (*at, "resources", "requests", "storage"), formats.quantity_text(raw), formats.QUANTITY_MSG
        )
    elif not value > formats.ZERO:
        yield invalid(where, formats.canonical_quantity(raw), "must be greater than zero")


def _data_sources(spec: dict[str, Any], at: Path, version: tuple[int, int]) -> Iterator[Violation]:
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    if isinstance(source, dict):
        yield from _data_source(source, (*at, "dataSource"), version)
    if isinstance(ref, dict):
        yield from _data_source(ref, (*at, "dataSourceRef"), version)
        namespace = text(ref.get("namespace"))
        if namespace:
            yield from (
                invalid((*at, "dataSourceRef", "namespace"), namespace, msg)
                for msg in formats.dns1123_label(namespace)
            )
        if namespace and source is not None:
            yield invalid(
                at, "spec.dataSource", "may not be specified when dataSourceRef.namespace is specified"
            )
        elif (
            not namespace
            and isinstance(source, dict)
            and any(source.get(k) != ref.get(k) for k in ("apiGroup", "kind", "name"))
        ):
            yield invalid(at, "spec.dataSource", "must match dataSourceRef")


def _data_source(ref: dict[str, Any], at: Path, version: tuple[int, int]) -> Iterator[Violation]:
    kind, group = text(ref.get("kind")), text(ref.get("apiGroup"))
    if not text(ref.get("name")):
        yield required((*at, "name"))
    if not kind:
        yield required((*at, "kind"))
    if not group and kind != "PersistentVolumeClaim":
        yield invalid(at, kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup")
    if group and version >= (1, 29):
        yield from (invalid((*at, "apiGroup"), group, msg) for msg in formats.dns1123_subdomain(group))
