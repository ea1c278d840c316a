"""The pod template's seccomp annotations, `seccomp.security.alpha.kubernetes.io/pod` and
`container.seccomp.security.alpha.kubernetes.io/<name>` (Kubernetes 1.37 pkg/apis/core/validation:
ValidatePodTemplateSpec calls ValidateSeccompPodAnnotations and validateSeccompAnnotationsAndFields, as
ValidatePodCreate does for a pod). Their values are checked at every version, and where an annotation
and the `seccompProfile` field of the same pod or container are both set they must agree. A container
annotation need not name a container of the pod. The server has not read them since 1.27 (it warns that
they are non-functional; mpigen does not repeat warnings), yet still refuses a template they spoil.
The fields themselves: mpigen.checks.pod.security."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mpigen.checks.pod.field import Path, Violation, forbidden, invalid
from mpigen.checks.pod.view import Pod, mapping, text

POD_KEY = "seccomp.security.alpha.kubernetes.io/pod"
CONTAINER_PREFIX = "container.seccomp.security.alpha.kubernetes.io/"
_LOCALHOST = "localhost/"
_RUNTIME_DEFAULT = ("runtime/default", "docker/default")
_UNCONFINED = "unconfined"


def annotated_profiles(pod: Pod) -> Iterator[Violation]:
    """ValidateSeccompPodAnnotations: each annotation's value is a profile the server can read. The
    server names the key as a field of the annotations (`template.annotations.seccomp...`)."""
    found = mapping(pod.meta.get("annotations"))
    at = (*pod.at, "annotations")
    if POD_KEY in found:
        yield from _profile(text(found[POD_KEY]), (*at, POD_KEY))
    for key, value in found.items():
        if str(key).startswith(CONTAINER_PREFIX):
            yield from _profile(text(value), (*at, str(key)))


def _profile(value: str, at: Path) -> Iterator[Violation]:
    """ValidateSeccompProfile."""
    if value in _RUNTIME_DEFAULT or value == _UNCONFINED:
        return
    if not value.startswith(_LOCALHOST):
        yield invalid(at, value, "must be a valid seccomp profile")
        return
    local = value[len(_LOCALHOST) :]
    if local.startswith("/"):
        yield invalid(at, local, "must be a relative path")
    if ".." in local.split("/"):
        yield invalid(at, local, "must not contain '..'")


def fields_match(pod: Pod) -> Iterator[Violation]:
    """validateSeccompAnnotationsAndFields: the pod's annotation against the pod's field, each container's
    against that container's own field (not the pod's)."""
    found = mapping(pod.meta.get("annotations"))
    if not found:
        return
    profile = mapping(pod.spec.get("securityContext")).get("seccompProfile")
    if isinstance(profile, dict) and POD_KEY in found:
        yield from _match(text(found[POD_KEY]), profile, pod.path("securityContext", "seccompProfile"))
    for at, container in pod.containers():
        profile = mapping(container.get("securityContext")).get("seccompProfile")
        key = CONTAINER_PREFIX + text(container.get("name"))
        if isinstance(profile, dict) and key in found:
            yield from _match(text(found[key]), profile, (*at, "securityContext", "seccompProfile"))


def _match(annotation: str, profile: dict[str, Any], at: Path) -> Iterator[Violation]:
    """validateSeccompAnnotationsAndFieldsMatch (a field of another type is not compared)."""
    kind = text(profile.get("type"))
    if (
        (kind == "Unconfined" and annotation != _UNCONFINED)
        or (kind == "RuntimeDefault" and annotation not in _RUNTIME_DEFAULT)
        or (kind == "Localhost" and not annotation.startswith(_LOCALHOST))
    ):
        yield forbidden((*at, "type"), "seccomp type in annotation and field must match")
    elif kind == "Localhost" and annotation[len(_LOCALHOST) :] != profile.get("localhostProfile"):
        yield forbidden((*at, "localhostProfile"), "seccomp profile in annotation and field must match")
