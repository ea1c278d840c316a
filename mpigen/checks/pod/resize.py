"""In-place resize and pod overhead (Kubernetes 1.37 pkg/apis/core/validation: validateResizePolicy,
validateInitContainers, validateOverhead; plugin/pkg/admission/runtimeclass: validateOverhead).

A container's `resizePolicy` names each of cpu and memory at most once, with `NotRequired` or
`RestartContainer` (`NotRequired` only, in a pod whose restartPolicy is Never); an init container that is
not a sidecar may not ask for `RestartContainer` (InPlacePodVerticalScaling is on: sidecars may resize).
A pod's `overhead` is checked as container limits are (at `overhead.limits`, as the server names it).
The server takes a template with an overhead, but its default admission (RuntimeClass) refuses every pod
that sets one without a RuntimeClass: mpigen refuses that template (docs/departures.md)."""

from __future__ import annotations

from collections.abc import Iterator

from mpigen.checks.pod.field import Violation, duplicate, forbidden, invalid, not_supported, required
from mpigen.checks.pod.resources import requirements
from mpigen.checks.pod.view import Pod, mapping, mappings, text

RESOURCES = ("cpu", "memory")
POLICIES = ("NotRequired", "RestartContainer")
NO_RUNTIME_CLASS = "set without a runtimeClassName: the RuntimeClass admission plugin refuses every such pod"


def resize_policies(pod: Pod) -> Iterator[Violation]:
    restart = text(pod.spec.get("restartPolicy")) or "Always"
    for field in ("containers", "initContainers"):
        for index, container in enumerate(mappings(pod.spec.get(field))):
            if container is None or not isinstance(container.get("resizePolicy"), list):
                continue
            at = pod.path(field, index, "resizePolicy")
            policies = mappings(container["resizePolicy"])
            yield from _policies(policies, at, restart)
            sidecar = text(container.get("restartPolicy")) == "Always"
            if field == "initContainers" and not sidecar:
                for j, policy in enumerate(policies):
                    if policy is not None and policy.get("restartPolicy") == "RestartContainer":
                        yield invalid(
                            (*at, j, "restartPolicy"),
                            "RestartContainer",
                            "must not be set to 'RestartContainer' for non-sidecar initContainers",
                        )


def _policies(
    policies: list[dict[str, object] | None], at: tuple[str | int, ...], restart: str
) -> Iterator[Violation]:
    seen: set[str] = set()
    for i, policy in enumerate(policies):
        if policy is None:
            continue
        name, wanted = text(policy.get("resourceName")), text(policy.get("restartPolicy"))
        if name in seen:
            yield duplicate((*at, i), name)
        seen.add(name)
        if not name:
            yield required(at)
        elif name not in RESOURCES:
            yield not_supported(at, name, RESOURCES)
        if not wanted:
            yield required(at)
        elif wanted not in POLICIES:
            yield not_supported(at, wanted, POLICIES)
        if restart == "Never" and wanted != "NotRequired":
            yield invalid(at, wanted, "must be 'NotRequired' when pod `restartPolicy` is 'Never'")


def overhead(pod: Pod) -> Iterator[Violation]:
    wanted = mapping(pod.spec.get("overhead"))
    if not wanted:
        return
    yield from requirements({"limits": wanted}, pod.path("overhead"))
    if not text(pod.spec.get("runtimeClassName")):
        yield forbidden(pod.path("overhead"), NO_RUNTIME_CLASS)
