"""The sizes on the jobset target that grow with the worker count, computed without building them.

The ConfigMap holds the hostfile (and discover_hosts.sh) with one line per JobSet pod host
(mpigen.targets.jobset.hosts: `<job>-worker-0-<i>`, with SSH their DNS names under the Service `<job>`,
the launcher `<job>-launcher-0-0` first when it runs ranks). Its data, and the annotation client-side
`kubectl apply` adds, are checked against the API server's limits at every worker count, in time
independent of that count (mpigen.targets.shared.sizes). The JobSet and the Role do not grow: one pod
template per replicated job, and a Role without resourceNames.
"""

from __future__ import annotations

from mpigen import names
from mpigen.checks.objectsize import last_applied_bytes
from mpigen.errors import Issue
from mpigen.options import Options
from mpigen.plan import JobPlan
from mpigen.targets.jobset import names as jobset_names
from mpigen.targets.jobset.config import SEPARATORS, config_scripts
from mpigen.targets.jobset.hosts import launcher_host
from mpigen.targets.shared.sizes import (
    config_map_skeleton,
    digit_count_sum,
    host_lines,
    object_checks,
    size_issues,
)


def _suffix(plan: JobPlan) -> int:
    """What each host name adds to its pod's hostname: the DNS domain with SSH, nothing for kubectl exec."""
    if plan.kubexec:
        return 0
    return len(names.host("", plan.name, plan.namespace, plan.hostnames.cluster_domain))


def host_lists_bytes(plan: JobPlan, workers: int) -> int:
    """Bytes of the hostfile and discover_hosts.sh for `workers` (templates/hostfile.j2,
    templates/discover_hosts.sh.j2: host names need no shell quoting)."""
    prefix = len(jobset_names.jobset_pod_host(plan.name, jobset_names.WORKER_RJOB, 0)) - 1
    names_length = workers * (prefix + _suffix(plan)) + digit_count_sum(workers)
    hosts = workers
    if plan.hostnames.launcher_first:
        names_length += len(launcher_host(plan)) + _suffix(plan)
        hosts += 1
    size = names_length + hosts * len(f"{SEPARATORS[plan.hostnames.slot_syntax]}{plan.slots_per_worker}\n")
    if plan.discover_hosts:
        per_host = len("echo \n") + (
            len(f":{plan.slots_per_worker}") if plan.discover_hosts == "slots" else 0
        )
        size += len("#!/bin/sh\n") + names_length + hosts * per_host
    return size


def _scripts(plan: JobPlan) -> dict[str, str]:
    """The ConfigMap's entries that do not grow with the worker count."""
    return config_scripts(plan)


def config_map_bytes(plan: JobPlan, scripts: dict[str, str], workers: int) -> int:
    size = sum(len(key) + len(value.encode()) for key, value in scripts.items())
    size += len(names.HOSTFILE) + (len(names.DISCOVER_HOSTS_SCRIPT) if plan.discover_hosts else 0)
    return size + host_lists_bytes(plan, workers)


def config_map_applied_bytes(plan: JobPlan, scripts: dict[str, str], workers: int) -> int:
    skeleton = config_map_skeleton(plan, scripts)
    return last_applied_bytes(skeleton, host_lists_bytes(plan, workers) + host_lines(plan, workers))


def check_sizes(plan: JobPlan, options: Options) -> list[Issue]:
    scripts = _scripts(plan)
    checks = object_checks(
        plan,
        lambda n: config_map_bytes(plan, scripts, n),
        lambda n: config_map_applied_bytes(plan, scripts, n),
        None,
    )
    return size_issues(plan, checks)
