"""Container fields: image, pull and termination-message policies, restart policies of init (sidecar)
and regular containers, what init containers may not have, ephemeral containers
(Kubernetes 1.37 pkg/apis/core/validation: validateContainerCommon, validateInitContainers,
validateContainers, validateInitContainerRestartPolicy, ValidatePodTemplateSpec)."""

from __future__ import annotations

from collections.abc import Iterator

from mpigen.checks.pod.field import Violation, forbidden, not_supported, required
from mpigen.checks.pod.view import Pod, mappings, text

PULL_POLICIES = ("Always", "IfNotPresent", "Never")
TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
CONTAINER_RESTART_POLICIES = ("Always", "Never", "OnFailure")
_NOT_SIDECAR = "may not be set for init containers without restartPolicy=Always"


def images(pod: Pod) -> Iterator[Violation]:
    for at, container in pod.containers():
        if not text(container.get("image")):
            yield required((*at, "image"))


def policies(pod: Pod) -> Iterator[Violation]:
    """Both are defaulted when empty (IfNotPresent or Always; File), so only a value outside the enum fails."""
    for at, container in pod.containers():
        pull = text(container.get("imagePullPolicy"))
        if pull and pull not in PULL_POLICIES:
            yield not_supported((*at, "imagePullPolicy"), pull, PULL_POLICIES)
        message = text(container.get("terminationMessagePolicy"))
        if message and message not in TERMINATION_MESSAGE_POLICIES:
            yield not_supported((*at, "terminationMessagePolicy"), message, TERMINATION_MESSAGE_POLICIES)


def restart_rules_allowed(pod: Pod) -> bool:
    """ContainerRestartRules: beta and on by default from Kubernetes 1.35."""
    return pod.version >= (1, 35)


def init_containers(pod: Pod) -> Iterator[Violation]:
    rules = restart_rules_allowed(pod)
    for index, container in enumerate(mappings(pod.spec.get("initContainers"))):
        if container is None:
            continue
        at = pod.path("initContainers", index)
        policy = container.get("restartPolicy")
        if isinstance(policy, str):
            allowed = CONTAINER_RESTART_POLICIES if rules else ("Always",)
            if policy not in allowed:
                yield not_supported((*at, "restartPolicy"), policy, allowed)
        if policy == "Always":
            continue
        for field in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
            if container.get(field) is not None:
                yield forbidden((*at, field), _NOT_SIDECAR)


def regular_restart_policies(pod: Pod) -> Iterator[Violation]:
    if not restart_rules_allowed(pod):
        return  # the field is dropped before validation while its feature is off
    for index, container in enumerate(mappings(pod.spec.get("containers"))):
        policy = (container or {}).get("restartPolicy")
        if isinstance(policy, str) and policy not in CONTAINER_RESTART_POLICIES:
            yield not_supported(
                pod.path("containers", index, "restartPolicy"), policy, CONTAINER_RESTART_POLICIES
            )


def ephemeral_containers(pod: Pod) -> Iterator[Violation]:
    if pod.spec.get("ephemeralContainers"):
        yield forbidden(pod.path("ephemeralContainers"), "ephemeral containers not allowed in pod template")
