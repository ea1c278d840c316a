"""Resource requirements: names, quantities, requests against limits, extended resources and hugepages
(Kubernetes 1.37 pkg/apis/core/validation: validateResourceRequirements, ValidateContainerResourceName,
ValidateResourceQuantityValue; pkg/apis/core/helper: IsExtendedResourceName, IsOvercommitAllowed).
A quantity the server cannot read at all (`cpu: one`, `memory: 1GB`) is refused when the object is
decoded, before validation; it is reported here the same way.

Resource claims (validatePodResourceClaims, validateResourceClaimNames): the pod's `resourceClaims` and
each container's `resources.claims`, from Kubernetes 1.34 (feature DynamicResourceAllocation, on by
default from 1.34; before, the server drops both fields unread).

Pod-level resources: mpigen.checks.pod.podresources."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

from mpigen.checks.pod import formats
from mpigen.checks.pod.field import (
    Path,
    Violation,
    duplicate,
    forbidden,
    invalid,
    not_found,
    required,
)
from mpigen.checks.pod.view import Pod, mapping, mappings, text

CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")
_HUGEPAGES = "hugepages-"
_QOS = ("cpu", "memory")


def native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


@functools.lru_cache(maxsize=256)
def extended(name: str) -> bool:
    return (
        not native(name)
        and not name.startswith("requests.")
        and not formats.qualified_name("requests." + name)
    )


def overcommit_allowed(name: str) -> bool:
    return native(name) and not name.startswith(_HUGEPAGES)


@functools.lru_cache(maxsize=256)
def name_problems(name: str) -> tuple[str, ...]:
    problems = formats.qualified_name(name)
    if problems:
        return problems
    if "/" not in name:
        return (
            ()
            if name in CONTAINER_RESOURCES or name.startswith(_HUGEPAGES)
            else ("must be a standard resource for containers",)
        )
    return () if native(name) or extended(name) else ("doesn't follow extended resource name standard",)


def _page_size(name: str) -> formats.Exact | None:
    return formats.parse_quantity(name[len(_HUGEPAGES) :])


def _values(
    section: dict[str, Any], where: Path
) -> Iterator[tuple[str, formats.Exact | None, Violation | None]]:
    for name, value in section.items():
        key = str(name)
        parsed = formats.parse_quantity(value)
        if parsed is None:
            text = formats.quantity_text(value)
            yield key, None, invalid((*where, key), text, formats.QUANTITY_MSG)
        else:
            yield key, parsed, None


def container_resources(pod: Pod) -> Iterator[Violation]:
    claims_read = pod.version >= (1, 34)
    for at, container in pod.containers():
        resources = mapping(container.get("resources"))
        if resources:
            yield from requirements(resources, (*at, "resources"))
            if claims_read and resources.get("claims"):
                yield from _claim_names(
                    mappings(resources["claims"]), (*at, "resources", "claims"), _pod_claims(pod)
                )


def _pod_claims(pod: Pod) -> list[str]:
    """The names of the pod's resource claims (gatherPodResourceClaimNames)."""
    return sorted({text((c or {}).get("name")) for c in mappings(pod.spec.get("resourceClaims"))} - {""})


def _container_name(name: str, where: Path) -> Iterator[Violation]:
    yield from (invalid(where, name, msg) for msg in name_problems(name))


def requirements(
    resources: dict[str, Any],
    where: Path,
    check_name: Callable[[str, Path], Iterator[Violation]] = _container_name,
) -> Iterator[Violation]:
    limits_at, requests_at = (*where, "limits"), (*where, "requests")
    limits: dict[str, formats.Exact | None] = {}
    qos = hugepages = False
    for section, at in (
        (mapping(resources.get("limits")), limits_at),
        (mapping(resources.get("requests")), requests_at),
    ):
        for name, value, unreadable in _values(section, at):
            if unreadable:
                yield unreadable
                continue
            assert value is not None
            yield from check_name(name, (*at, name))
            yield from _one(name, value, section[name], (*at, name))
            qos = qos or name in _QOS
            hugepages = hugepages or name.startswith(_HUGEPAGES)
            if at == limits_at:
                limits[name] = value
            else:
                yield from _against_limit(name, value, section[name], limits, resources, where)
    if hugepages and not qos:
        yield forbidden(where, "HugePages require cpu or memory")


def _one(name: str, value: formats.Exact, raw: object, where: Path) -> Iterator[Violation]:
    shown = formats.quantity_text(raw)
    if value < formats.ZERO:
        yield invalid(where, shown, "must be greater than or equal to 0")
    if extended(name) and value.milli_ceil() % 1000:
        yield invalid(where, shown, "must be an integer")
    if name.startswith(_HUGEPAGES):
        # IsHugePageResourceValueDivisible: whole page sizes, and Value() (rounded up) a multiple of one.
        page = _page_size(name)
        if page is None or not page > formats.ZERO or page.milli_ceil() % 1000 or value.ceil() % page.ceil():
            yield invalid(where, shown, f"{shown} is not positive integer multiple of {name}")


def _against_limit(
    name: str,
    value: formats.Exact,
    raw: object,
    limits: dict[str, formats.Exact | None],
    resources: dict[str, Any],
    where: Path,
) -> Iterator[Violation]:
    limit_raw = mapping(resources.get("limits")).get(name)
    if name in limits:
        limit = limits[name]
        assert limit is not None
        shown, limit_shown = formats.quantity_text(raw), formats.quantity_text(limit_raw)
        if not value.same(limit) and not overcommit_allowed(name):
            yield invalid((*where, "requests"), shown, f"must be equal to {name} limit of {limit_shown}")
        elif value > limit:
            yield invalid(
                (*where, "requests"), shown, f"must be less than or equal to {name} limit of {limit_shown}"
            )
    elif limit_raw is None and not overcommit_allowed(name):
        yield required((*where, "limits"), "Limit must be set for non overcommitable resources")


def resource_claims(pod: Pod) -> Iterator[Violation]:
    """The pod's own resource claims (the containers' references: container_resources)."""
    if pod.version < (1, 34) or not pod.spec.get("resourceClaims"):
        return
    names: set[str] = set()
    for index, claim in enumerate(mappings(pod.spec.get("resourceClaims"))):
        claim = claim or {}
        at = pod.path("resourceClaims", index)
        name = text(claim.get("name"))
        if not name:
            yield required((*at, "name"))
        elif name in names:
            yield duplicate((*at, "name"), name)
        else:
            yield from (invalid((*at, "name"), name, msg) for msg in formats.dns1123_label(name))
            names.add(name)
        refs = [
            field
            for field in ("resourceClaimName", "resourceClaimTemplateName")
            if claim.get(field) is not None
        ]
        if len(refs) == 2:
            yield invalid(
                at,
                claim,
                "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified",
            )
        elif not refs:
            yield invalid(at, claim, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`")
        for field in refs:
            value = text(claim.get(field))
            yield from (invalid((*at, field), value, msg) for msg in formats.dns1123_subdomain(value))


def _claim_names(claims: list[dict[str, Any] | None], at: Path, pod_claims: list[str]) -> Iterator[Violation]:
    seen: set[str] = set()
    for index, claim in enumerate(claims):
        name, request = text((claim or {}).get("name")), text((claim or {}).get("request"))
        if not name:
            yield required((*at, index))
            continue
        if name in seen:
            yield duplicate((*at, index), name)
        else:
            key = name
            if request:
                yield from (
                    invalid((*at, index, "request"), request, msg) for msg in formats.dns1123_label(request)
                )
                key = f"{name}/{request}"
            if key in seen:
                yield duplicate((*at, index), key)
            elif not request:
                for other in seen:
                    if "/" in other and other.split("/", 1)[0] == name:
                        yield duplicate((*at, index), name)
            seen.add(key)
        if name not in pod_claims:
            listed = f": {', '.join(pod_claims)}" if pod_claims else " which is empty"
            found = not_found((*at, index), name)
            yield Violation(
                found.path, f"{found.body}: must be one of the names in pod.spec.resourceClaims{listed}"
            )
