"""Security contexts of the pod and of each container (Kubernetes 1.37 pkg/apis/core/validation:
validatePodSpecSecurityContext, ValidateSecurityContext, validateSeccompProfileField,
validateFSGroupChangePolicy; apimachinery IsValidUserID, IsValidGroupID)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mpigen.checks.pod import formats
from mpigen.checks.pod.field import Path, Violation, invalid, not_supported, required
from mpigen.checks.pod.view import Pod, mapping, number, text

SECCOMP_TYPES = ("Localhost", "RuntimeDefault", "Unconfined")
FS_GROUP_CHANGE_POLICIES = ("Always", "OnRootMismatch")
_RANGE = formats.range_error(0, formats.INT32_MAX)


def _ids(context: dict[str, Any], where: Path, fields: tuple[str, ...]) -> Iterator[Violation]:
    for field in fields:
        value = number(context.get(field))
        if value is not None and not 0 <= value <= formats.INT32_MAX:
            yield invalid((*where, field), value, _RANGE)


def _seccomp(context: dict[str, Any], where: Path) -> Iterator[Violation]:
    profile = context.get("seccompProfile")
    if not isinstance(profile, dict):
        return
    at = (*where, "seccompProfile")
    kind = text(profile.get("type"))
    if not kind:
        yield required((*at, "type"))
    elif kind not in SECCOMP_TYPES:
        yield not_supported((*at, "type"), kind, SECCOMP_TYPES)
    local = profile.get("localhostProfile")
    if kind == "Localhost" and local is None:
        yield required((*at, "localhostProfile"), "must be set when seccomp type is Localhost")
    elif kind == "Localhost" and isinstance(local, str):
        if local.startswith("/"):
            yield invalid((*at, "localhostProfile"), local, "must be a relative path")
        if ".." in local.split("/"):
            yield invalid((*at, "localhostProfile"), local, "must not contain '..'")
    elif kind != "Localhost" and local is not None:
        yield invalid((*at, "localhostProfile"), profile, "can only be set when seccomp type is Localhost")


def pod_context(pod: Pod) -> Iterator[Violation]:
    context = mapping(pod.spec.get("securityContext"))
    at = pod.path("securityContext")
    yield from _ids(context, at, ("fsGroup", "runAsUser", "runAsGroup"))
    for index, group in enumerate(context.get("supplementalGroups") or []):
        if isinstance(group, int) and not 0 <= group <= formats.INT32_MAX:
            yield invalid((*at, "supplementalGroups", index), group, _RANGE)
    policy = context.get("fsGroupChangePolicy")
    if isinstance(policy, str) and policy not in FS_GROUP_CHANGE_POLICIES:
        yield not_supported((*at, "fsGroupChangePolicy"), policy, FS_GROUP_CHANGE_POLICIES)
    yield from _seccomp(context, at)


def container_contexts(pod: Pod) -> Iterator[Violation]:
    for path, container in pod.containers():
        context = mapping(container.get("securityContext"))
        at = (*path, "securityContext")
        yield from _ids(context, at, ("runAsUser", "runAsGroup"))
        yield from _seccomp(context, at)
        if context.get("allowPrivilegeEscalation") is False:
            if context.get("privileged") is True:
                yield invalid(
                    at, context, "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"
                )
            if "CAP_SYS_ADMIN" in (mapping(context.get("capabilities")).get("add") or []):
                yield invalid(
                    at,
                    context,
                    "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
                )
