"""Security contexts of the pod and of each container (Kubernetes 1.37 pkg/apis/core/validation:
validatePodSpecSecurityContext, ValidateSecurityContext, validateSeccompProfileField,
validateFSGroupChangePolicy, validateSysctls, ValidateHostSysctl, ValidateAppArmorProfileField,
validateWindowsSecurityContextOptions, ValidateProcMountType;
apimachinery IsValidUserID, IsValidGroupID; component-helpers node/util/sysctl GetNamespace)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from mpigen.checks.pod import formats
from mpigen.checks.pod.field import Path, Violation, duplicate, invalid, not_supported, required, too_long
from mpigen.checks.pod.view import Pod, mapping, number, text

SECCOMP_TYPES = ("Localhost", "RuntimeDefault", "Unconfined")
FS_GROUP_CHANGE_POLICIES = ("Always", "OnRootMismatch")
SUPPLEMENTAL_GROUPS_POLICIES = ("Merge", "Strict")
# SupplementalGroupsPolicy and SELinuxChangePolicy are on by default from 1.33 (before, the server drops
# both fields unread); MountOption is allowed from 1.37, where SELinuxMount is on by default
# (pkg/api/pod useOnlyRecursiveSELinuxChangePolicy: before, a new pod may only ask for Recursive).
POLICIES_READ_FROM = (1, 33)
MOUNT_OPTION_FROM = (1, 37)
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
    if not context:
        return
    at = pod.path("securityContext")
    yield from _ids(context, at, ("fsGroup", "runAsUser", "runAsGroup"))
    for index, group in enumerate(context.get("supplementalGroups") or []):
        if isinstance(group, int) and not 0 <= group <= formats.INT32_MAX:
            yield invalid((*at, "supplementalGroups", index), group, _RANGE)
    policy = context.get("fsGroupChangePolicy")
    if isinstance(policy, str) and policy not in FS_GROUP_CHANGE_POLICIES:
        yield not_supported((*at, "fsGroupChangePolicy"), policy, FS_GROUP_CHANGE_POLICIES)
    yield from _seccomp(context, at)
    yield from _app_armor(context, at)
    yield from _windows(context, at)
    yield from _sysctls(pod, context, (*at, "sysctls"))
    yield from _policies(pod, context, at)


def _policies(pod: Pod, context: dict[str, Any], at: Path) -> Iterator[Violation]:
    """validateSupplementalGroupsPolicy, validateSELinuxChangePolicy (seLinuxOptions' values are not
    checked by the server at all)."""
    if pod.version < POLICIES_READ_FROM:
        return
    groups = context.get("supplementalGroupsPolicy")
    if isinstance(groups, str) and groups not in SUPPLEMENTAL_GROUPS_POLICIES:
        yield not_supported((*at, "supplementalGroupsPolicy"), groups, SUPPLEMENTAL_GROUPS_POLICIES)
    change = context.get("seLinuxChangePolicy")
    allowed = ("MountOption", "Recursive") if pod.version >= MOUNT_OPTION_FROM else ("Recursive",)
    if isinstance(change, str) and change not in allowed:
        yield not_supported((*at, "seLinuxChangePolicy"), change, allowed)


APP_ARMOR_TYPES = ("Localhost", "RuntimeDefault", "Unconfined")


def _app_armor(context: dict[str, Any], where: Path) -> Iterator[Violation]:
    profile = context.get("appArmorProfile")
    if not isinstance(profile, dict):
        return
    at = (*where, "appArmorProfile")
    kind, local = text(profile.get("type")), profile.get("localhostProfile")
    if kind == "Localhost":
        if not isinstance(local, str):
            yield required((*at, "localhostProfile"), "must be set when AppArmor type is Localhost")
            return
        if local.strip() != local:
            yield invalid((*at, "localhostProfile"), local, "must not be padded with whitespace")
        elif not local:
            yield required((*at, "localhostProfile"), "must be set when AppArmor type is Localhost")
        if len(local.encode()) > 4095:
            yield too_long((*at, "localhostProfile"), 4095)
    elif kind in ("RuntimeDefault", "Unconfined"):
        if local is not None:
            yield invalid((*at, "localhostProfile"), local, "can only be set when AppArmor type is Localhost")
    elif not kind:
        yield required((*at, "type"), "type is required when appArmorProfile is set")
    else:
        yield not_supported((*at, "type"), kind, APP_ARMOR_TYPES)


_CONTROL = "[\x00-\x1f\x7f]"
_NETBIOS = r'[^\\/:*?"<>|.][^\\/:*?"<>|]{0,14}'
_DNS_LABEL = "[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
_DOMAIN_DNS = f"{_DNS_LABEL}(?:\\.{_DNS_LABEL})*"
_USER_CHARS = r'["/\\:;|=,+*?<>@\[\]]'
_DOTS_SPACES = "[. ]+"


def _windows(context: dict[str, Any], where: Path) -> Iterator[Violation]:
    """validateWindowsSecurityContextOptions (the options' own fields; not the host-process rules)."""
    options = context.get("windowsOptions")
    if not isinstance(options, dict):
        return
    at = (*where, "windowsOptions")
    name = options.get("gmsaCredentialSpecName")
    if isinstance(name, str):
        yield from (
            invalid((*at, "gmsaCredentialSpecName"), name, msg) for msg in formats.dns1123_subdomain(name)
        )
    spec = options.get("gmsaCredentialSpec")
    if isinstance(spec, str):
        if not spec:
            yield invalid((*at, "gmsaCredentialSpec"), spec, "gmsaCredentialSpec cannot be an empty string")
        elif len(spec.encode()) > 64 * 1024:
            yield invalid((*at, "gmsaCredentialSpec"), spec, "gmsaCredentialSpec size must be under 64 KiB")
    user = options.get("runAsUserName")
    if isinstance(user, str):
        yield from (invalid((*at, "runAsUserName"), user, msg) for msg in _user_name(user))


def _user_name(value: str) -> Iterator[str]:
    if not value:
        yield "runAsUserName cannot be an empty string"
        return
    if re.search(_CONTROL, value):
        yield "runAsUserName cannot contain control characters"
        return
    parts = value.split("\\")
    if len(parts) > 2:
        yield "runAsUserName cannot contain more than one backslash"
        return
    domain, user = (parts[0], parts[1]) if len(parts) == 2 else ("", parts[0])
    if len(domain.encode()) >= 256:
        yield "runAsUserName's Domain length must be under 256 characters"
    if len(parts) == 2 and not (re.fullmatch(_NETBIOS, domain) or re.fullmatch(_DOMAIN_DNS, domain)):
        yield "runAsUserName's Domain doesn't match the NetBios nor the DNS format"
    if not user:
        yield "runAsUserName's User cannot be empty"
    elif len(user.encode()) > 104:
        yield "runAsUserName's User length must not be longer than 104 characters"
    if re.fullmatch(_DOTS_SPACES, user):
        yield "runAsUserName's User cannot contain only periods or spaces"
    if re.search(_USER_CHARS, user):
        yield "runAsUserName's User cannot contain the following characters: \"/\\:;|=,+*?<>@[]"


_SYSCTL_SEGMENT = "[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
_SYSCTL = f"({_SYSCTL_SEGMENT}[\\./])*{_SYSCTL_SEGMENT}"
_SYSCTL_NAME = f"^{_SYSCTL}$"
_SYSCTL_MSG = f"must have at most 253 characters and match regex ^{_SYSCTL}$"
# Which sysctls live in the pod's network or IPC namespace (the host's, under hostNetwork or hostIPC).
_IPC_SYSCTLS = frozenset(
    {
        "kernel.sem",
        "kernel.shmall",
        "kernel.shmmax",
        "kernel.shmmni",
        "kernel.shm_rmid_forced",
        "kernel.shm",
        "kernel.msgmax",
        "kernel.msgmnb",
        "kernel.msgmni",
        "kernel.msg",
    }
)


def _sysctl_namespace(name: str) -> str:
    """GetNamespace: "Net", "IPC" or "" (another or none), for a name written with dots or slashes."""
    first = min((i for i in (name.find("."), name.find("/")) if i >= 0), default=-1)
    if first >= 0 and name[first] == "/":
        name = name.translate(str.maketrans("./", "/."))
    name = name.split("*", 1)[0]
    if name in _IPC_SYSCTLS or name.startswith("fs.mqueue."):
        return "IPC"
    if name.startswith("net."):
        return "Net"
    return ""


def _sysctls(pod: Pod, context: dict[str, Any], at: Path) -> Iterator[Violation]:
    seen: set[str] = set()
    for index, sysctl in enumerate(context.get("sysctls") or []):
        if not isinstance(sysctl, dict):
            continue
        name = text(sysctl.get("name"))
        where = (*at, index, "name")
        if not name:
            yield required(where)
        elif len(name) > 253 or not re.match(_SYSCTL_NAME, name):
            yield invalid(where, name, _SYSCTL_MSG)
        elif name in seen:
            yield duplicate(where, name)
        namespace = _sysctl_namespace(name)
        if pod.spec.get("hostNetwork") is True and namespace == "Net":
            yield invalid(where, name, "may not be specified when 'hostNetwork' is true")
        elif pod.spec.get("hostIPC") is True and namespace == "IPC":
            yield invalid(where, name, "may not be specified when 'hostIPC' is true")
        seen.add(name)


def container_contexts(pod: Pod) -> Iterator[Violation]:
    for path, container in pod.containers():
        context = mapping(container.get("securityContext"))
        if not context:
            continue
        at = (*path, "securityContext")
        yield from _ids(context, at, ("runAsUser", "runAsGroup"))
        yield from _seccomp(context, at)
        yield from _app_armor(context, at)
        yield from _windows(context, at)
        yield from _proc_mount(pod, context, at)
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


PROC_MOUNTS = ("Default", "Unmasked")


def _proc_mount(pod: Pod, context: dict[str, Any], at: Path) -> Iterator[Violation]:
    """From 1.33 (feature ProcMountType, on by default from 1.33; before, the server reads any value
    as Default): a known type, and Unmasked only in the pod's own user namespace."""
    mount = context.get("procMount")
    if pod.version < (1, 33) or not isinstance(mount, str):
        return
    if mount not in PROC_MOUNTS:
        yield not_supported((*at, "procMount"), mount, PROC_MOUNTS)
    elif mount == "Unmasked" and pod.spec.get("hostUsers") is not False:
        yield invalid((*at, "procMount"), mount, "`hostUsers` must be false to use `Unmasked`")
