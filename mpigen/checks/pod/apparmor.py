"""The pod template's AppArmor annotations, `container.apparmor.security.beta.kubernetes.io/<name>`
(Kubernetes 1.37 pkg/apis/core/validation: ValidatePodTemplateSpec calls ValidateAppArmorPodAnnotations
and validateAppArmorAnnotationsAndFieldsMatchOnCreate, as ValidatePodCreate does for a pod): each names a
container of the pod and holds a profile the server can read, and from Kubernetes 1.30 (feature
AppArmorFields) agrees with the `appArmorProfile` field that applies to its container (the container's,
else the pod's) unless the pod runs Windows. The fields themselves: mpigen.checks.pod.security."""

from __future__ import annotations

from collections.abc import Iterator

from mpigen.checks.pod.field import Key, Violation, forbidden, invalid
from mpigen.checks.pod.view import Pod, mapping, text

PREFIX = "container.apparmor.security.beta.kubernetes.io/"
_LOCALHOST = "localhost/"
_NAMED = {"runtime/default": "RuntimeDefault", "unconfined": "Unconfined"}
FIELDS_READ_FROM = (1, 30)


def annotated_profiles(pod: Pod) -> Iterator[Violation]:
    """ValidateAppArmorPodAnnotations: the container each names, and its value's syntax."""
    found = mapping(pod.meta.get("annotations"))
    if not any(str(key).startswith(PREFIX) for key in found):
        return
    names = {text(container.get("name")) for _, container in pod.containers()}
    for key, value in found.items():
        key = str(key)
        if not key.startswith(PREFIX):
            continue
        at = (*pod.at, "annotations", Key(key))
        container = key[len(PREFIX) :]
        if container not in names:
            yield invalid(at, container, "container not found")
        profile = value if isinstance(value, str) else ""
        if profile and profile not in _NAMED and not profile.startswith(_LOCALHOST):
            yield invalid(at, profile, f"invalid AppArmor profile name: {_go_quoted(profile)}")


def _go_quoted(value: str) -> str:
    """%q of a Go string (printable characters as they are)."""
    out = ['"']
    for char in value:
        if char in '"\\':
            out.append("\\" + char)
        elif char.isprintable():
            out.append(char)
        elif ord(char) < 0x80:
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(char, f"\\x{ord(char):02x}"))
        else:
            out.append(f"\\u{ord(char):04x}" if ord(char) < 0x10000 else f"\\U{ord(char):08x}")
    return "".join(out) + '"'


def fields_match(pod: Pod) -> Iterator[Violation]:
    """validateAppArmorAnnotationsAndFieldsMatchOnCreate, from 1.30."""
    found = mapping(pod.meta.get("annotations"))
    if (
        pod.version < FIELDS_READ_FROM
        or text(mapping(pod.spec.get("os")).get("name")) == "windows"
        or not any(str(key).startswith(PREFIX) for key in found)
    ):
        return
    of_pod = mapping(pod.spec.get("securityContext")).get("appArmorProfile")
    for at, container in pod.containers():
        own = mapping(container.get("securityContext")).get("appArmorProfile")
        profile = own if isinstance(own, dict) else of_pod
        annotation = found.get(PREFIX + text(container.get("name")))
        if not isinstance(profile, dict) or not isinstance(annotation, str):
            continue
        where = (*at, "securityContext", "appArmorProfile")
        kind = text(profile.get("type"))
        if kind in ("Unconfined", "RuntimeDefault") and _NAMED.get(annotation) != kind:
            yield forbidden((*where, "type"), "apparmor type in annotation and field must match")
        elif kind == "Localhost":
            if not annotation.startswith(_LOCALHOST):
                yield forbidden((*where, "type"), "apparmor type in annotation and field must match")
            elif annotation[len(_LOCALHOST) :] != profile.get("localhostProfile"):
                yield forbidden(
                    (*where, "localhostProfile"), "apparmor profile in annotation and field must match"
                )
