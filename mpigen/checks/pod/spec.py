"""Pod-level fields: the spec's enums, host and DNS names, DNS config, host aliases, pull secrets,
gates, deadlines (Kubernetes 1.37 pkg/apis/core/validation: ValidatePodSpec, validateRestartPolicy,
validateDNSPolicy, ValidatePreemptionPolicy, validatePodDNSConfig, ValidateHostAliases,
validateImagePullSecrets, validateReadinessGates, validateSchedulingGates, validateShareProcessNamespace).
An empty restartPolicy or dnsPolicy is defaulted before validation."""

from __future__ import annotations

from collections.abc import Iterator

from mpigen.checks.pod import formats
from mpigen.checks.pod.field import Violation, duplicate, invalid, not_supported, required
from mpigen.checks.pod.view import Pod, mapping, mappings, number, text

RESTART_POLICIES = ("Always", "OnFailure", "Never")
DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")


def enums(pod: Pod) -> Iterator[Violation]:
    for field, choices in (("restartPolicy", RESTART_POLICIES), ("dnsPolicy", DNS_POLICIES)):
        value = text(pod.spec.get(field))
        if value and value not in choices:
            yield not_supported(pod.path(field), value, choices)
    preemption = pod.spec.get("preemptionPolicy")
    if isinstance(preemption, str) and preemption not in PREEMPTION_POLICIES:
        yield (
            required(pod.path("preemptionPolicy"))
            if not preemption
            else not_supported(pod.path("preemptionPolicy"), preemption, PREEMPTION_POLICIES)
        )


def names(pod: Pod) -> Iterator[Violation]:
    for field in ("hostname", "subdomain"):
        value = text(pod.spec.get(field))
        if value:
            yield from (invalid(pod.path(field), value, msg) for msg in formats.dns1123_label(value))
    for field in ("serviceAccountName", "priorityClassName", "nodeName", "runtimeClassName"):
        value = text(pod.spec.get(field))
        if value:
            yield from (invalid(pod.path(field), value, msg) for msg in formats.dns1123_subdomain(value))
    group = pod.spec.get("schedulingGroup")  # 1.37 validateSchedulingGroup: a one-of of one member
    if isinstance(group, dict):
        where, name = pod.path("schedulingGroup", "podGroupName"), group.get("podGroupName")
        if name is None:
            yield invalid(where, None, "must specify one of: `podGroupName`")
        elif isinstance(name, str):
            yield from (invalid(where, name, msg) for msg in formats.dns1123_subdomain(name))
    # `serviceAccount` never disagrees with `serviceAccountName` here: the server's defaulting syncs the
    # two before validation (mpigen.inputs.aliases does the same for the job's templates).
    deadline = number(pod.spec.get("activeDeadlineSeconds"))
    if deadline is not None and not 1 <= deadline <= formats.INT32_MAX:
        yield invalid(pod.path("activeDeadlineSeconds"), deadline, formats.range_error(1, formats.INT32_MAX))
    if pod.spec.get("shareProcessNamespace") is True and pod.spec.get("hostPID") is True:
        yield invalid(
            pod.path("shareProcessNamespace"),
            True,
            "ShareProcessNamespace and HostPID cannot both be enabled",
        )


def dns_config(pod: Pod) -> Iterator[Violation]:
    config = pod.spec.get("dnsConfig")
    at = pod.path("dnsConfig")
    if pod.spec.get("dnsPolicy") == "None":
        if not isinstance(config, dict):
            yield required(at, "must provide `dnsConfig` when `dnsPolicy` is None")
            return
        if not config.get("nameservers"):
            yield required(
                (*at, "nameservers"), "must provide at least one DNS nameserver when `dnsPolicy` is None"
            )
            return
    if not isinstance(config, dict):
        return
    servers = [s for s in config.get("nameservers") or [] if isinstance(s, str)]
    if len(servers) > 3:
        yield invalid((*at, "nameservers"), servers, "must not have more than 3 nameservers")
    for index, server in enumerate(servers):
        yield from (invalid((*at, "nameservers", index), server, msg) for msg in formats.ip_address(server))
    searches = [s for s in config.get("searches") or [] if isinstance(s, str)]
    if len(searches) > 32:
        yield invalid((*at, "searches"), searches, "must not have more than 32 search paths")
    if len(" ".join(searches)) > 2048:
        yield invalid(
            (*at, "searches"),
            searches,
            "must not have more than 2048 characters (including spaces) in the search list",
        )
    for index, search in enumerate(searches):
        if search != ".":
            trimmed = search.removesuffix(".")
            yield from (
                invalid((*at, "searches", index), trimmed, msg)
                for msg in formats.dns1123_subdomain_underscore(trimmed)
            )
    for index, option in enumerate(mappings(config.get("options"))):
        if not text((option or {}).get("name")):
            yield required((*at, "options", index), "must not be empty")


def host_aliases(pod: Pod) -> Iterator[Violation]:
    for index, alias in enumerate(mappings(pod.spec.get("hostAliases"))):
        alias = alias or {}
        ip = text(alias.get("ip"))
        yield from (invalid(pod.path("hostAliases", index, "ip"), ip, msg) for msg in formats.ip_address(ip))
        for j, host in enumerate(alias.get("hostnames") or []):
            if isinstance(host, str):
                where = pod.path("hostAliases", index, "hostnames", j)
                yield from (invalid(where, host, msg) for msg in formats.dns1123_subdomain(host))


def gates(pod: Pod) -> Iterator[Violation]:
    for index, gate in enumerate(mappings(pod.spec.get("readinessGates"))):
        kind = text((gate or {}).get("conditionType"))
        where = pod.path("readinessGates", index, "conditionType")
        yield from (invalid(where, kind, msg) for msg in formats.qualified_name(kind))
    seen: set[str] = set()
    for index, gate in enumerate(mappings(pod.spec.get("schedulingGates"))):
        name = text((gate or {}).get("name"))
        yield from (
            invalid(pod.path("schedulingGates", index), name, msg) for msg in formats.qualified_name(name)
        )
        if name in seen:
            yield duplicate(pod.path("schedulingGates", index), name)
        seen.add(name)
    for index, secret in enumerate(mappings(pod.spec.get("imagePullSecrets"))):
        if secret is not None and set(secret) - {"name"}:
            yield invalid(pod.path("imagePullSecrets", index), mapping(secret), "only name may be set")
