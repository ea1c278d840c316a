"""Container ports: names, numbers, protocols, host ports under hostNetwork and host ports taken twice
(Kubernetes 1.37 pkg/apis/core/validation: validateContainerPorts, validatePodHostNetworkDeps,
checkHostPortConflicts, AccumulateUniqueHostPorts)."""

from __future__ import annotations

from collections.abc import Iterator

from mpigen.checks.pod import formats
from mpigen.checks.pod.field import Violation, duplicate, invalid, not_supported, required
from mpigen.checks.pod.view import Pod, mappings, number, text

PROTOCOLS = ("SCTP", "TCP", "UDP")


def container_ports(pod: Pod) -> Iterator[Violation]:
    """Each port's own fields, then host ports taken twice (checkHostPortConflicts: a host port with its
    protocol, defaulted to TCP, and host IP is taken once among the regular containers together, and
    once within each init container)."""
    taken: set[str] = set()
    for at, container in pod.containers():
        ports = container.get("ports")
        if not ports:
            continue
        if at[-2] == "initContainers":
            taken = set()
        names: set[str] = set()
        for index, port in enumerate(mappings(ports)):
            if port is None:
                continue
            host = number(port.get("hostPort"))
            if host:
                key = f"{text(port.get('protocol')) or 'TCP'}/{text(port.get('hostIP'))}/{host}"
                if key in taken:
                    yield duplicate((*at, "ports", index, "hostPort"), key)
                taken.add(key)
            where = (*at, "ports", index)
            name = text(port.get("name"))
            if name:
                problems = formats.port_name(name)
                yield from (invalid((*where, "name"), name, msg) for msg in problems)
                if not problems and name in names:
                    yield duplicate((*where, "name"), name)
                names.add(name)
            yield from _number(port, where, "containerPort", required_=True)
            yield from _number(port, where, "hostPort", required_=False)
            protocol = text(port.get("protocol"))
            if protocol and protocol not in PROTOCOLS:  # "" is defaulted to TCP
                yield not_supported((*where, "protocol"), protocol, PROTOCOLS)


def _number(
    port: dict[str, object], where: tuple[str | int, ...], field: str, required_: bool
) -> Iterator[Violation]:
    value = number(port.get(field))
    if not value:
        if required_:
            yield required((*where, field))
        return
    yield from (invalid((*where, field), value, msg) for msg in formats.port_number(value))


def host_network_ports(pod: Pod) -> Iterator[Violation]:
    """With hostNetwork a template's hostPort must be unset or equal to its containerPort."""
    if pod.spec.get("hostNetwork") is not True:
        return
    for index, container in enumerate(mappings(pod.spec.get("containers"))):
        for j, port in enumerate(mappings((container or {}).get("ports"))):
            host, own = (
                number((port or {}).get("hostPort")) or 0,
                number((port or {}).get("containerPort")) or 0,
            )
            if host and host != own:
                where = pod.path("containers", index, "ports", j, "hostPort")
                yield invalid(where, host, "must match `containerPort` when `hostNetwork` is true")
