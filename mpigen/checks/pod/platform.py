"""What the pod's operating system and its user namespace ask of the whole pod (Kubernetes 1.37
pkg/apis/core/validation: validateOS, validateLinux, validateWindows, validateWindowsHostProcessPod,
validateHostUsers). Every container counts, mpigen's own init containers included.

Versions: `hostUsers` is dropped unread before 1.33 (feature UserNamespacesSupport, on by default from
1.33), and so are `supplementalGroupsPolicy` and `seLinuxChangePolicy` (SupplementalGroupsPolicy,
SELinuxChangePolicy); 1.33 words the host namespace refusals "when `pod.Spec.HostUsers` is false" and
1.34 "when `hostUsers` is false", adding `volumeDevices`; `os.name` empty is "cannot be empty" before 1.34."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mpigen.checks.pod.field import Violation, forbidden, invalid, not_supported, required
from mpigen.checks.pod.view import Pod, mapping, text

OS_NAMES = ("linux", "windows")
_ON_WINDOWS = "cannot be set for a windows pod"
# The pod securityContext's fields a windows pod may not set, in the server's order; and the Kubernetes
# version from which each is read (before, the server drops it unread).
_WINDOWS_POD_CONTEXT: tuple[tuple[str, tuple[int, int]], ...] = (
    ("appArmorProfile", (1, 0)),
    ("seLinuxOptions", (1, 0)),
    ("seccompProfile", (1, 0)),
    ("fsGroup", (1, 0)),
    ("fsGroupChangePolicy", (1, 0)),
    ("sysctls", (1, 0)),
    ("runAsUser", (1, 0)),
    ("runAsGroup", (1, 0)),
    ("supplementalGroups", (1, 0)),
    ("supplementalGroupsPolicy", (1, 33)),
    ("seLinuxChangePolicy", (1, 33)),
)
_WINDOWS_CONTAINER_CONTEXT = (
    "appArmorProfile",
    "seLinuxOptions",
    "seccompProfile",
    "capabilities",
    "readOnlyRootFilesystem",
    "privileged",
    "allowPrivilegeEscalation",
    "procMount",
    "runAsUser",
    "runAsGroup",
)
HOST_USERS_READ_FROM = (1, 33)


def _set(context: dict[str, Any], field: str) -> bool:
    """A pointer field the server sees set: present and not null (a list: not empty)."""
    value = context.get(field)
    return bool(value) if field == "sysctls" else value is not None


def os_rules(pod: Pod) -> Iterator[Violation]:
    """validateOS, then what the named OS forbids (validateLinux, validateWindows)."""
    os = pod.spec.get("os")
    if not isinstance(os, dict):
        return
    name = text(os.get("name"))
    if not name:
        yield required(pod.path("os", "name"), "cannot be empty" if pod.version < (1, 34) else "")
    elif name not in OS_NAMES:
        yield not_supported(pod.path("os"), name, OS_NAMES)
    elif name == "linux":
        yield from _linux(pod)
    else:
        yield from _windows(pod)


def _linux(pod: Pod) -> Iterator[Violation]:
    message = "windows options cannot be set for a linux pod"
    if mapping(pod.spec.get("securityContext")).get("windowsOptions") is not None:
        yield forbidden(pod.path("securityContext", "windowsOptions"), message)
    for at, container in pod.containers():
        if mapping(container.get("securityContext")).get("windowsOptions") is not None:
            yield forbidden((*at, "securityContext", "windowsOptions"), message)


def _windows(pod: Pod) -> Iterator[Violation]:
    context = mapping(pod.spec.get("securityContext"))
    for field, since in _WINDOWS_POD_CONTEXT:
        if pod.version >= since and _set(context, field):
            yield forbidden(pod.path("securityContext", field), _ON_WINDOWS)
    if pod.version >= HOST_USERS_READ_FROM and pod.spec.get("hostUsers") is not None:
        yield forbidden(pod.path("hostUsers"), _ON_WINDOWS)
    for field in ("hostPID", "hostIPC"):
        if pod.spec.get(field) is True:
            yield forbidden(pod.path(field), _ON_WINDOWS)
    if pod.spec.get("shareProcessNamespace") is not None:
        yield forbidden(pod.path("shareProcessNamespace"), _ON_WINDOWS)
    for at, container in pod.containers():
        own = mapping(container.get("securityContext"))
        for field in _WINDOWS_CONTAINER_CONTEXT:
            if own.get(field) is not None:
                yield forbidden((*at, "securityContext", field), _ON_WINDOWS)


def _host_process(context: object) -> bool | None:
    value = mapping(mapping(context).get("windowsOptions")).get("hostProcess")
    return value if isinstance(value, bool) else None


def host_process(pod: Pod) -> Iterator[Violation]:
    """validateWindowsHostProcessPod: a pod with any host-process container has only host-process
    containers (set or inherited from the pod), agreeing with the pod's value, and the host network."""
    of_pod = _host_process(pod.spec.get("securityContext"))
    count = 0
    containers = pod.containers()
    for at, container in containers:
        own = _host_process(container.get("securityContext"))
        if of_pod is not None and own is not None and own != of_pod:
            yield invalid(
                (*at, "securityContext", "windowsOptions", "hostProcess"),
                own,
                f"pod hostProcess value must be identical if both are specified, was {str(of_pod).lower()}",
            )
        count += own is True or (own is None and of_pod is True)
    if not count:
        return
    if count != len(containers):
        yield invalid(
            pod.path(),
            "",
            "If pod contains any hostProcess containers then all containers must be HostProcess containers",
        )
    if pod.spec.get("hostNetwork") is not True:
        yield invalid(
            pod.path("hostNetwork"),
            False,
            "hostNetwork must be true if pod contains any hostProcess containers",
        )


def host_users(pod: Pod) -> Iterator[Violation]:
    """validateHostUsers: a pod in its own user namespace (`hostUsers: false`) shares none of the
    host's, and from 1.34 has no raw block devices."""
    if pod.version < HOST_USERS_READ_FROM or pod.spec.get("hostUsers") is not False:
        return
    words = "when `pod.Spec.HostUsers` is false" if pod.version < (1, 34) else "when `hostUsers` is false"
    for field, named in (("hostNetwork", "hostNetwork"), ("hostPID", "HostPID"), ("hostIPC", "HostIPC")):
        if pod.spec.get(field) is True:
            yield forbidden(pod.path(named), words)
    if pod.version >= (1, 34):
        for at, container in pod.containers():
            if container.get("volumeDevices"):
                yield forbidden((*at, "volumeDevices"), words)
