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
        yield from resource_field_ref(source["resourceFieldRef"], (*where, "resourceFieldRef"))
    for name in ("configMapKeyRef", "secretKeyRef"):
        if name in present:
            yield from _key_ref(source[name], (*where, name))


def resource_field_ref(ref: dict[str, Any], where: Path, volume: bool = False) -> Iterator[Violation]:
    """validateContainerResourceFieldSelector, of an env var or (`volume`) a downward API volume file,
    whose containerName is required."""
    resource = text(ref.get("resource"))
    if volume and not text(ref.get("containerName")):
        yield required((*where, "containerName"))
    elif not resource:
        yield required((*where, "resource"))
    elif resource not in RESOURCE_FIELDS and not resource.startswith(_HUGEPAGES):
        yield not_supported((*where, "resource"), resource, RESOURCE_FIELDS)
    yield from _divisor(resource, ref.get("divisor"), where)


# validateContainerResourceDivisor: the divisors each resource allows, as Quantity.String() writes them.
_BYTES = frozenset(("1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"))
_DIVISORS = {
    "cpu": (frozenset(("1m", "1")), "only divisor's values 1m and 1 are supported with the cpu resource"),
    "memory": (
        _BYTES,
        "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the memory resource",
    ),
    "ephemeral-storage": (
        _BYTES,
        "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the local ephemeral storage resource",
    ),
    "hugepages-": (
        _BYTES,
        "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the hugepages resource",
    ),
}
_HUGEPAGES = ("requests.hugepages-", "limits.hugepages-")


def _divisor(resource: str, divisor: object, where: Path) -> Iterator[Violation]:
    if divisor is None:
        return
    shown = formats.canonical_quantity(divisor)
    if shown is None:  # refused as the object is decoded
        yield invalid((*where, "divisor"), formats.quantity_text(divisor), formats.QUANTITY_MSG)
        return
    if shown == "0":  # the zero Quantity: as if unset
        return
    kind = resource.partition(".")[2]
    rule = _DIVISORS.get("hugepages-" if resource.startswith(_HUGEPAGES) else kind)
    if resource.partition(".")[0] in ("limits", "requests") and rule and shown not in rule[0]:
        yield invalid((*where, "divisor"), resource, rule[1])


def field_ref(
    ref: dict[str, Any], where: Path, expressions: tuple[str, ...] = FIELD_PATHS
) -> Iterator[Violation]:
    """validateObjectFieldSelector, of an env var (FIELD_PATHS) or a downward API volume file. An
    empty apiVersion is defaulted to v1; ConvertDownwardAPIFieldLabel knows no other."""
    path = text(ref.get("fieldPath"))
    if not path:
        yield required((*where, "fieldPath"))
        return
    version = text(ref.get("apiVersion")) or "v1"
    if version != "v1":
        yield invalid(
            (*where, "fieldPath"), path, f"error converting fieldPath: unsupported pod version: {version}"
        )
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
