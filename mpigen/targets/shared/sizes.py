"""Sizes that grow with the worker count, computed arithmetically without building anything: the
host lists of a ConfigMap and the launcher Role's `resourceNames`, and the largest worker count that
fits a limit, and every limit they must meet (`object_checks`, `size_issues`: the ConfigMap's 1 MiB,
etcd's 1.5 MiB and the 256 KiB of annotations client-side `kubectl apply` adds). Every target that
builds these objects measures them here: the operator and volcano targets each through a
`TargetSizes` of their own scripts and host lists (their `limits.SIZES`), the jobset target through
mpigen.targets.jobset.sizes.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from mpigen import names
from mpigen.checks.objectsize import (
    ANNOTATIONS_MAX_BYTES,
    EMPTY_ANNOTATIONS,
    LAST_APPLIED,
    OBJECT_MAX_BYTES,
    last_applied_bytes,
)
from mpigen.errors import Issue
from mpigen.options import Options
from mpigen.plan import JobPlan
from mpigen.records import Record
from mpigen.targets.shared.hostfile import SEPARATORS, host_list_keys
from mpigen.targets.shared.meta import object_meta
from mpigen.targets.shared.rbac import launcher_role

CONFIG_MAP_MAX_BYTES = 1024 * 1024  # apimachinery validation: ConfigMap data + binaryData

# One size limit that grows with the worker count: what is measured (for the message), the size as a
# function of the worker count, the limit and the limit as the message names it.
SizeCheck = tuple[str, Callable[[int], int], int, str]


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


def host_lines(plan: JobPlan, workers: int) -> int:
    """Newlines in the host lists for `workers` (each is `\\n`, two bytes, in JSON): one per host in
    the hostfile, and in discover_hosts.sh one per host after its `#!/bin/sh` line."""
    hosts = workers + (1 if plan.hostnames.launcher_first else 0)
    return hosts + (hosts + 1 if plan.discover_hosts else 0)


def config_map_skeleton(plan: JobPlan, scripts: dict[str, str]) -> dict[str, object]:
    """The job's ConfigMap with its host lists empty (every target's has this metadata)."""
    meta = object_meta(plan, names.config_map(plan.name), names.COMPONENT_CONFIG, plan.labels.other)
    data = {**dict.fromkeys(host_list_keys(plan), ""), **scripts}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def object_checks(
    plan: JobPlan,
    config_map: Callable[[int], int],
    config_map_applied: Callable[[int], int],
    role: Callable[[int], int] | None,
) -> list[SizeCheck]:
    """The limits of a target's ConfigMap (data, annotation) and launcher Role (etcd, annotation),
    from the target's own size functions. The annotation checks come last: a job over several limits
    is named by its data's."""
    config = f"the ConfigMap {names.config_map(plan.name)}"
    applied = " with the last-applied-configuration annotation client-side `kubectl apply` adds"
    annotation_limit = "256 KiB of annotations the API server accepts"
    checks: list[SizeCheck] = [(config, config_map, CONFIG_MAP_MAX_BYTES, "1 MiB the API server accepts")]
    role_name = f"the Role {names.launcher(plan.name)}"
    if role is not None:
        checks.append((role_name, role, OBJECT_MAX_BYTES, "1.5 MiB the API server accepts"))
    checks.append((config + applied, config_map_applied, ANNOTATIONS_MAX_BYTES, annotation_limit))
    if role is not None:
        role_applied = role
        checks.append(
            (
                role_name + applied,
                lambda n: len(LAST_APPLIED) + role_applied(n) + EMPTY_ANNOTATIONS + 1,
                ANNOTATIONS_MAX_BYTES,
                annotation_limit,
            )
        )
    return checks


def size_issues(plan: JobPlan, checks: list[SizeCheck]) -> list[Issue]:
    """One issue when any size passes its limit at this worker count, naming the first such and the
    largest job that fits every limit."""
    over = [(what, size, shown) for what, size, limit, shown in checks if size(plan.workers) > limit]
    if not over:
        return []
    # The largest job that fits must fit every limit, not only the one that is broken.
    fits = min(largest_fitting(size, limit, plan.workers) for _, size, limit, _ in checks)
    what, size, shown = over[0]
    message = (
        f"{plan.workers} workers do not fit: {what} would be {size(plan.workers):,} bytes, over the "
        f"{shown}; the largest job that fits has {fits:,} workers "
        f"(with slotsPerWorker {plan.slots_per_worker} and this job name)"
    )
    return [Issue(plan.workers_path, message)]


def config_map_bytes(plan: JobPlan, scripts: dict[str, str], host_bytes: int) -> int:
    """Data size of a job's ConfigMap (keys and values, as the API server counts it): its scripts and
    host lists of `host_bytes`."""
    size = sum(len(key) + len(value.encode()) for key, value in scripts.items())
    return size + sum(len(key) for key in host_list_keys(plan)) + host_bytes


def config_map_applied_bytes(plan: JobPlan, scripts: dict[str, str], host_bytes: int, workers: int) -> int:
    """The ConfigMap's annotations once client-side `kubectl apply` adds its own, for `workers`."""
    return last_applied_bytes(config_map_skeleton(plan, scripts), host_bytes + host_lines(plan, workers))


class TargetSizes(Record):
    """A target's ConfigMap as it grows with the worker count, from the target's own parts: `scripts`,
    the entries that do not grow (the builder's own), and `host_bytes`, its host lists' size for a
    worker count. The operator and volcano targets each hold one (their `limits.SIZES`)."""

    scripts: Callable[[JobPlan, Options], dict[str, str]]
    host_bytes: Callable[[JobPlan, int], int]

    def config_map_bytes(self, plan: JobPlan, options: Options, workers: int) -> int:
        """Data size of the job's ConfigMap for `workers`."""
        return config_map_bytes(plan, self.scripts(plan, options), self.host_bytes(plan, workers))

    def config_map_applied_bytes(self, plan: JobPlan, options: Options, workers: int) -> int:
        """The ConfigMap's annotations once client-side `kubectl apply` adds its own, for `workers`."""
        scripts = self.scripts(plan, options)
        return config_map_applied_bytes(plan, scripts, self.host_bytes(plan, workers), workers)

    def issues(self, plan: JobPlan, options: Options) -> list[Issue]:
        """The ConfigMap and the launcher Role against every limit (`object_checks`), for this worker
        count."""
        scripts = self.scripts(plan, options)
        return size_issues(
            plan,
            object_checks(
                plan,
                lambda n: config_map_bytes(plan, scripts, self.host_bytes(plan, n)),
                lambda n: config_map_applied_bytes(plan, scripts, self.host_bytes(plan, n), n),
                (lambda n: role_bytes(plan, n)) if plan.launcher_needs_api else None,
            ),
        )
