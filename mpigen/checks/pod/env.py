"""Environment variables: names and value sources, envFrom prefixes and sources
(Kubernetes 1.37 pkg/apis/core/validation: ValidateEnv, validateEnvVarValueFrom, ValidateEnvFrom)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mpigen.checks.pod import formats
from mpigen.checks.pod.field import Path, Violation, invalid, not_supported, required
from mpigen.checks.pod.view import Pod, mapping, mappings, text

FIELD_PATHS = (
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
)
RESOURCE_FIELDS = (
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
)
_SOURCES = ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef")


def relaxed_names(pod: Pod) -> bool:
    """RelaxedEnvironmentVariableValidation: beta and on by default from Kubernetes 1.32."""
    return pod.version >= (1, 32)


def env_vars(pod: Pod) -> Iterator[Violation]:
    relaxed = relaxed_names(pod)
    for at, container in pod.containers():
        for index, var in enumerate(mappings(container.get("env"))):
            if var is None:
                continue
            where = (*at, "env", index)
            name = text(var.get("name"))
            if not name:
                yield required((*where, "name"))
            else:
                yield from (invalid((*where, "name"), name, msg) for msg in formats.env_name(name, relaxed))
            if isinstance(var.get("valueFrom"), dict):
                yield from _value_from(var, (*where, "valueFrom"))


def _value_from(var: dict[str, Any], where: Path) -> Iterator[Violation]:
    source = var["valueFrom"]
    present = [name for name in _SOURCES if isinstance(source.get(name), dict)]
    if not present:
        yield invalid(
            where,
            "",
            "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, "
            "`secretKeyRef` or `fileKeyRef`",
        )
    elif text(var.get("value")):
        yield invalid(where, "", "may not be specified when `value` is not empty")
    elif len(present) > 1:
        yield invalid(where, "", "may not have more than one field specified at a time")
    if "fieldRef" in present:
        yield from field_ref(source["fieldRef"], (*where, "fieldRef"))
    if "resourceFieldRef" in present:
        ref = source["resourceFieldRef"]
        resource = text(ref.get("resource"))
        if not resource:
            yield required((*where, "resourceFieldRef", "resource"))
        elif resource not in RESOURCE_FIELDS and not resource.startswith(
            ("requests.hugepages-", "limits.hugepages-")
        ):
            yield not_supported((*where, "resourceFieldRef", "resource"), resource, RESOURCE_FIELDS)
    for name in ("configMapKeyRef", "secretKeyRef"):
        if name in present:
            yield from _key_ref(source[name], (*where, name))


def field_ref(
    ref: dict[str, Any], where: Path, expressions: tuple[str, ...] = FIELD_PATHS
) -> Iterator[Violation]:
    """validateObjectFieldSelector, of an env var (FIELD_PATHS) or a downward API volume file."""
    path = text(ref.get("fieldPath"))
    if not path:
        yield required((*where, "fieldPath"))
        return
    base, bracket, rest = path.partition("[")
    if bracket:
        if (
            base not in ("metadata.annotations", "metadata.labels")
            or not rest.endswith("']")
            or not rest.startswith("'")
        ):
            return  # the server's conversion decides these; mpigen does not guess
        key = rest[1:-2]
        key = key.lower() if base == "metadata.annotations" else key
        yield from (invalid(where, key, msg) for msg in formats.qualified_name(key))
    elif path not in expressions:
        yield not_supported((*where, "fieldPath"), path, expressions)


def _key_ref(ref: dict[str, Any], where: Path) -> Iterator[Violation]:
    name, key = text(ref.get("name")), text(ref.get("key"))
    yield from (invalid((*where, "name"), name, msg) for msg in formats.dns1123_subdomain(name))
    if not key:
        yield required((*where, "key"))
    else:
        yield from (invalid((*where, "key"), key, msg) for msg in formats.config_map_key(key))


def env_from(pod: Pod) -> Iterator[Violation]:
    relaxed = relaxed_names(pod)
    for at, container in pod.containers():
        for index, source in enumerate(mappings(container.get("envFrom"))):
            if source is None:
                continue
            where = (*at, "envFrom", index)
            prefix = text(source.get("prefix"))
            if prefix:
                yield from (
                    invalid((*where, "prefix"), prefix, msg) for msg in formats.env_name(prefix, relaxed)
                )
            present = [name for name in ("configMapRef", "secretRef") if isinstance(source.get(name), dict)]
            if not present:
                yield invalid((*at, "envFrom"), "", "must specify one of: `configMapRef` or `secretRef`")
            elif len(present) > 1:
                yield invalid((*at, "envFrom"), "", "may not have more than one field specified at a time")
            for name in present:
                ref = text(mapping(source[name]).get("name"))
                if not ref:
                    yield required((*where, name, "name"))
                else:
                    yield from (
                        invalid((*where, name, "name"), ref, msg) for msg in formats.dns1123_subdomain(ref)
                    )
