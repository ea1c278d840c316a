"""Pod-level resources (Kubernetes 1.37 pkg/apis/core/validation: validatePodResources,
validatePodResourceRequirements, validatePodResourceName), from Kubernetes 1.34 (feature
PodLevelResources, on by default from 1.34): names, quantities, requests against limits, and the
pod-level requests against the containers' aggregate requests (validatePodResourceConsistency with
resourcehelper.AggregateContainerRequests: the regular containers' and sidecars' sum, or an init
container's with the sidecars started before it, whichever is larger), the pod-level hugepages limits
against the containers' aggregate limits (AggregateContainerLimits, the same sum of limits), and each
regular container's limits against the pod-level ones."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from mpigen.checks.pod import formats
from mpigen.checks.pod.field import Key, Path, Violation, forbidden, invalid, not_supported
from mpigen.checks.pod.resources import requirements
from mpigen.checks.pod.view import Pod, mapping, mappings, text

_HUGEPAGES = "hugepages-"
POD_LEVEL_RESOURCES = ("cpu", "hugepages-", "memory")
_STANDARD_RESOURCES = frozenset(
    {
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "storage",
        "requests.storage",
        "services.nodeports",
        "services.loadbalancers",
    }
)


def _pod_level_name(name: str, where: Path) -> Iterator[Violation]:
    """validatePodResourceName: a resource name, then one of cpu, memory and hugepages-*."""
    problems = formats.qualified_name(name)
    if problems:
        yield from (invalid(where, name, msg) for msg in problems)
    elif "/" not in name and not (
        name in _STANDARD_RESOURCES or name.startswith(("hugepages-", "requests.hugepages-"))
    ):
        yield invalid(where, name, "must be a standard resource type or fully qualified")
    elif name not in ("cpu", "memory") and not name.startswith(_HUGEPAGES):
        yield not_supported(where, name, POD_LEVEL_RESOURCES)


def pod_resources(pod: Pod) -> Iterator[Violation]:
    resources = pod.spec.get("resources")
    if pod.version < (1, 34) or not isinstance(resources, dict):
        return
    at = pod.path("resources")
    if text(mapping(pod.spec.get("os")).get("name")) == "windows":
        yield forbidden(at, "may not be set for a windows pod")
        return
    if resources.get("claims") is not None:
        yield forbidden((*at, "claims"), "claims may not be set for Resources at pod-level")
    found = list(requirements(resources, at, _pod_level_name))
    yield from found
    if not found:
        yield from _against_containers(pod, resources, at)


def _container_request(container: Any, name: str) -> formats.Exact:
    """A container's request of `name` as written: a pod template is not defaulted as a Pod is (where
    a request missing beside its limit becomes the limit, SetDefaults_Pod)."""
    return _quantity(mapping(mapping(mapping(container).get("resources")).get("requests")).get(name))


def _container_limit(container: Any, name: str) -> formats.Exact:
    return _quantity(mapping(mapping(mapping(container).get("resources")).get("limits")).get(name))


def _quantity(value: object) -> formats.Exact:
    return formats.parse_quantity(value) or formats.ZERO if value is not None else formats.ZERO


def _plus(a: formats.Exact, b: formats.Exact) -> formats.Exact:
    return formats.Exact(a[0] * b[1] + b[0] * a[1], a[1] * b[1])


def _aggregate(
    pod: Pod, name: str, of: Callable[[Any, str], formats.Exact] = _container_request
) -> formats.Exact:
    """AggregateContainerRequests (or, `of` _container_limit, AggregateContainerLimits)."""
    total = formats.ZERO
    for container in mappings(pod.spec.get("containers")):
        total = _plus(total, of(container, name))
    sidecars, largest_init = formats.ZERO, formats.ZERO
    for container in mappings(pod.spec.get("initContainers")):
        own = of(container, name)
        if text(mapping(container).get("restartPolicy")) == "Always":
            sidecars = _plus(sidecars, own)
            total = _plus(total, own)
        else:
            started = _plus(own, sidecars)
            largest_init = max(largest_init, started)
    return max(total, largest_init)


def _against_containers(pod: Pod, resources: dict[str, Any], at: Path) -> Iterator[Violation]:
    """Each pod-level request at least the containers' aggregate (a template's pod-level requests are
    not defaulted from its limits or its containers, as a Pod's are)."""
    requests, limits = mapping(resources.get("requests")), mapping(resources.get("limits"))
    for name in sorted(requests):
        raw = requests[name]
        value = formats.parse_quantity(raw)
        if value is None:
            continue
        aggregate = _aggregate(pod, name)
        if aggregate > value:
            yield invalid(
                (*at, "requests", name),
                formats.quantity_text(raw),
                f"must be greater than or equal to aggregate container requests of {_shown(aggregate)}",
            )
    yield from _against_container_limits(pod, limits, at)


def _against_container_limits(pod: Pod, limits: dict[str, Any], at: Path) -> Iterator[Violation]:
    """Each pod-level hugepages limit at least the containers' aggregate limit; each regular container's
    limit at most the pod's."""
    for name in sorted(limits):
        value = formats.parse_quantity(limits[name])
        if value is None or not name.startswith(_HUGEPAGES):
            continue
        aggregate = _aggregate(pod, name, _container_limit)
        if aggregate > value:
            yield invalid(
                (*at, "limits", name),
                formats.quantity_text(limits[name]),
                f"must be greater than or equal to aggregate container limits of {_shown(aggregate)}",
            )
    for index, container in enumerate(mappings(pod.spec.get("containers"))):
        own = mapping(mapping(mapping(container).get("resources")).get("limits"))
        for name in sorted(set(own) & set(limits)):
            value, limit = formats.parse_quantity(own[name]), formats.parse_quantity(limits[name])
            if value is not None and limit is not None and value > limit:
                yield invalid(
                    (*at, "containers", index, Key(name), "limits"),
                    formats.quantity_text(own[name]),
                    f"must be less than or equal to pod limits of {formats.quantity_text(limits[name])}",
                )


def _shown(value: formats.Exact) -> str:
    """A quantity as the server prints a sum (whole units, else thousandths)."""
    if value.milli_ceil() % 1000 == 0:
        return str(value.milli_ceil() // 1000)
    return f"{value.milli_ceil()}m"
