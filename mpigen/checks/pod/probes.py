"""Probes and lifecycle handlers (Kubernetes 1.37 pkg/apis/core/validation: validateProbe,
validateLivenessProbe, validateReadinessProbe, validateStartupProbe, validateHandler, validateLifecycle,
validateHTTPGetAction, ValidatePortNumOrName, validateSleepAction). Probe numbers left at 0 are defaulted
before validation. A sleep handler is dropped unread before 1.30 (feature PodLifecycleSleepAction off),
may not sleep 0 seconds before 1.33 (PodLifecycleSleepActionAllowZero off), and may never sleep longer
than the pod's terminationGracePeriodSeconds (30 when unset)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mpigen.checks.pod import formats
from mpigen.checks.pod.field import Path, Violation, forbidden, invalid, not_supported, required
from mpigen.checks.pod.view import Pod, mapping, mappings, number, text

HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc", "sleep")
SCHEMES = ("HTTP", "HTTPS")
_NUMBERS = ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold")


def probes(pod: Pod) -> Iterator[Violation]:
    for at, container in pod.containers():
        sidecar = at[-2] == "initContainers" and container.get("restartPolicy") == "Always"
        if at[-2] == "initContainers" and not sidecar:
            continue  # refused whole (mpigen.checks.pod.containers.init_containers)
        for field in ("livenessProbe", "readinessProbe", "startupProbe"):
            probe = container.get(field)
            if isinstance(probe, dict):
                yield from _probe(field, probe, (*at, field))


def _probe(kind: str, probe: dict[str, Any], where: Path) -> Iterator[Violation]:
    yield from handler(probe, where)
    for field in _NUMBERS:
        value = number(probe.get(field))
        if value is not None and value < 0:
            yield invalid((*where, field), value, "must be greater than or equal to 0")
    grace = number(probe.get("terminationGracePeriodSeconds"))
    if grace is not None and grace <= 0:
        yield invalid((*where, "terminationGracePeriodSeconds"), grace, "must be greater than 0")
    success = number(probe.get("successThreshold")) or 1  # 0 is defaulted to 1
    if kind != "readinessProbe" and success != 1:
        yield invalid((*where, "successThreshold"), success, "must be 1")
    if kind == "readinessProbe" and probe.get("terminationGracePeriodSeconds") is not None:
        yield invalid(
            (*where, "terminationGracePeriodSeconds"),
            probe["terminationGracePeriodSeconds"],
            "must not be set for readinessProbes",
        )


def lifecycles(pod: Pod) -> Iterator[Violation]:
    for at, container in pod.containers():
        if at[-2] == "initContainers" and container.get("restartPolicy") != "Always":
            continue
        lifecycle = mapping(container.get("lifecycle"))
        for hook in ("postStart", "preStop"):
            if isinstance(lifecycle.get(hook), dict):
                yield from handler(lifecycle[hook], (*at, "lifecycle", hook))
                yield from _sleep(pod, lifecycle[hook], (*at, "lifecycle", hook))


def handler(spec: dict[str, Any], where: Path) -> Iterator[Violation]:
    present = [name for name in HANDLERS if spec.get(name) is not None]
    if not present:
        yield required(where, "must specify a handler type")
    for name in present[1:]:
        yield forbidden((*where, name), "may not specify more than 1 handler type")
    if present:
        yield from _ACTIONS[present[0]](mapping(spec[present[0]]), (*where, present[0]))


def _exec(action: dict[str, Any], where: Path) -> Iterator[Violation]:
    if not action.get("command"):
        yield required((*where, "command"))


def port(value: object, where: Path) -> Iterator[Violation]:
    if isinstance(value, str):
        yield from (invalid(where, value, msg) for msg in formats.port_name(value))
    elif (found := number(value)) is not None:
        yield from (invalid(where, found, msg) for msg in formats.port_number(found))


def _http_get(action: dict[str, Any], where: Path) -> Iterator[Violation]:
    yield from port(action.get("port", 0), (*where, "port"))
    scheme = text(action.get("scheme"))
    if scheme and scheme not in SCHEMES:
        yield not_supported((*where, "scheme"), scheme, SCHEMES)
    for header in mappings(action.get("httpHeaders")):
        name = text((header or {}).get("name"))
        yield from (invalid((*where, "httpHeaders"), name, msg) for msg in formats.http_header_name(name))


def _tcp(action: dict[str, Any], where: Path) -> Iterator[Violation]:
    yield from port(action.get("port", 0), (*where, "port"))


def _grpc(action: dict[str, Any], where: Path) -> Iterator[Violation]:
    yield from port(number(action.get("port")) or 0, (*where, "port"))


def _no_checks(action: dict[str, Any], where: Path) -> Iterator[Violation]:
    return iter(())  # a sleep's bounds depend on the pod's grace period (_sleep)


def _sleep(pod: Pod, hook: dict[str, Any], where: Path) -> Iterator[Violation]:
    """validateSleepAction, for a hook whose first handler is a sleep."""
    present = [name for name in HANDLERS if hook.get(name) is not None]
    if present[:1] != ["sleep"] or pod.version < (1, 30):
        return
    seconds = number(mapping(hook["sleep"]).get("seconds")) or 0
    grace = number(pod.spec.get("terminationGracePeriodSeconds"))
    grace = 30 if grace is None else grace
    if pod.version >= (1, 33):
        if seconds < 0 or seconds > grace:
            yield invalid(
                (*where, "sleep"),
                seconds,
                f"must be non-negative and less than terminationGracePeriodSeconds ({grace})",
            )
    elif seconds <= 0 or seconds > grace:
        yield invalid(
            (*where, "sleep"),
            seconds,
            f"must be greater than 0 and less than terminationGracePeriodSeconds ({grace})",
        )


_ACTIONS = {"exec": _exec, "httpGet": _http_get, "tcpSocket": _tcp, "grpc": _grpc, "sleep": _no_checks}
