"""Sizes that grow with the worker count, computed arithmetically without building anything: the
host lists of a ConfigMap and the launcher Role's `resourceNames`, and the largest worker count that
fits a limit. Every target that builds these objects measures them here (the operator target's
mpigen.targets.operator.limits, the volcano target's limits).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from mpigen import names
from mpigen.plan import JobPlan
from mpigen.targets.shared.hostfile import SEPARATORS
from mpigen.targets.shared.rbac import launcher_role

CONFIG_MAP_MAX_BYTES = 1024 * 1024  # apimachinery validation: ConfigMap data + binaryData


def digit_count_sum(n: int) -> int:
    """Total number of decimal digits in 0, 1, ..., n-1."""
    total, low, width = 0, 0, 1
    while low < n:
        high = min(n, 10**width)
        total += (high - low) * width
        low, width = 10**width, width + 1
    return total


def worker_names_length(job: str, workers: int) -> int:
    """Total characters of the names `<job>-worker-0` .. `<job>-worker-<workers-1>`, without building them."""
    return workers * (len(names.worker_set(job)) + 1) + digit_count_sum(workers)


def host_lists_bytes(plan: JobPlan, workers: int) -> int:
    """Bytes of the hostfile and (if any) discover_hosts.sh for `workers`: one line per host in
    each, a worker's host its pod name plus a suffix the same for all (templates/hostfile.j2,
    templates/discover_hosts.sh.j2), plus the launcher's line when it is a host too."""
    suffix = (
        len(names.host("", plan.service.name, plan.namespace, plan.hostnames.cluster_domain))
        if plan.hostnames.fqdn
        else 0
    )
    names_length = worker_names_length(plan.name, workers) + workers * suffix
    hosts = workers
    if plan.hostnames.launcher_first:
        names_length += len(names.launcher(plan.name)) + suffix
        hosts += 1
    size = names_length + hosts * len(f"{SEPARATORS[plan.hostnames.slot_syntax]}{plan.slots_per_worker}\n")
    if plan.discover_hosts:
        per_host = len("echo \n") + (
            len(f":{plan.slots_per_worker}") if plan.discover_hosts == "slots" else 0
        )
        size += len("#!/bin/sh\n") + names_length + hosts * per_host
    return size


def role_bytes(plan: JobPlan, workers: int) -> int:
    """Size of the launcher Role as compact JSON (an upper bound of what etcd stores) for `workers`:
    two `resourceNames` lists of every worker pod."""
    if not plan.launcher_needs_api:
        return 0
    empty = launcher_role(plan, [])
    base = len(json.dumps(empty, separators=(",", ":")).encode())
    # Each name adds its characters, two quotes and a comma (one fewer comma per list).
    per_list = worker_names_length(plan.name, workers) + 3 * workers - (1 if workers else 0)
    return base + len(empty["rules"]) * per_list


def largest_fitting(size: Callable[[int], int], limit: int, upper: int) -> int:
    """The largest worker count in 1..upper whose size(count) <= limit (0 when none): a binary search,
    since sizes grow with the count."""
    low, high = 0, upper
    while low < high:
        middle = (low + high + 1) // 2
        if size(middle) <= limit:
            low = middle
        else:
            high = middle - 1
    return low
