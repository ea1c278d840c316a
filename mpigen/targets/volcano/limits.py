"""What the volcano target checks before it builds: the names it adds to the user's pods (its own
and those Volcano's plugins add), the options and run policy a Volcano Job can express, the pod names
Volcano derives, and the sizes of what grows with the worker count (the ConfigMap, the launcher Role),
computed without building them.
"""

from __future__ import annotations

from collections.abc import Callable

from mpigen import names
from mpigen.checks.objectsize import OBJECT_MAX_BYTES
from mpigen.checks.rules import Added
from mpigen.errors import Issue
from mpigen.options import SCHEDULER_PLUGINS, Options
from mpigen.plan import JobPlan
from mpigen.targets.shared import mpi_env
from mpigen.targets.shared.hardening import API_TOKEN_VOLUME, TMP_VOLUME
from mpigen.targets.shared.sizes import CONFIG_MAP_MAX_BYTES, host_lists_bytes, largest_fitting, role_bytes
from mpigen.targets.volcano.job import (
    LAUNCHER_TASK,
    SSH_PLUGIN_SECRET_SUFFIX,
    SVC_PLUGIN_VOLUME_SUFFIX,
    VOLCANO_MOUNT_PATH,
    WORKER_TASK,
    config_scripts,
    ssh_plugin,
    task_pod,
)


def added(plan: JobPlan) -> Added:
    """What each role's pod gets from mpigen and from Volcano's svc and ssh plugins (the ConfigMap
    `<job>-svc` at /etc/volcano, the Secret `<job>-ssh` at the SSH path, in every container)."""
    svc = plan.name + SVC_PLUGIN_VOLUME_SUFFIX
    if plan.ssh is None:
        launcher_env = names.LAUNCHER_ENV + (names.NVIDIA_ENV if plan.blank_launcher_gpus else ())
        return {
            "launcher": (
                (names.CONFIG_VOLUME, names.KUBECTL_VOLUME, TMP_VOLUME, svc),
                (names.KUBECTL_DELIVERY, names.WAIT_FOR_WORKERS),
                launcher_env,
                (names.CONFIG_MOUNT_PATH, names.KUBECTL_MOUNT_PATH, VOLCANO_MOUNT_PATH),
            ),
            "worker": ((names.CONFIG_VOLUME, svc), (), (), (names.CONFIG_MOUNT_PATH, VOLCANO_MOUNT_PATH)),
        }
    ssh_path = plan.ssh.mount_path.rstrip("/")
    key_volume = plan.name + SSH_PLUGIN_SECRET_SUFFIX if ssh_plugin(plan) else names.SSH_VOLUME
    env = (names.JOB_ROLE_ENV, *(name for name, _ in mpi_env.table(False, plan.implementation)))
    env += names.NVIDIA_ENV if plan.blank_launcher_gpus else ()
    inits = (names.WAIT_FOR_WORKERS,) if plan.waits_for_workers else ()
    return {
        "launcher": (
            (key_volume, names.CONFIG_VOLUME, TMP_VOLUME, API_TOKEN_VOLUME, svc),
            inits,
            env,
            (ssh_path, names.CONFIG_MOUNT_PATH, VOLCANO_MOUNT_PATH),
        ),
        "worker": ((key_volume, svc), (), (names.JOB_ROLE_ENV,), (ssh_path, VOLCANO_MOUNT_PATH)),
    }


def check_plan_fits(plan: JobPlan) -> list[Issue]:
    """What a Volcano v1.10 Job cannot express, and the pod names Volcano derives (hostnames, at most 63)."""
    issues = []
    if plan.suspend:
        message = "a Volcano Job cannot be created suspended (Volcano v1.10 has no suspend field); remove it or use --target operator"
        issues.append(Issue(("spec", "runPolicy", "suspend"), message))
    wanted = plan.scheduling.min_available
    if wanted is not None and wanted < 1 and plan.scheduling.written_at is not None:
        message = f"must be at least 1 with --target volcano: the launcher is always a member of the gang (got {wanted})"
        issues.append(Issue((*plan.scheduling.written_at, "minAvailable"), message))
    longest = max(
        [
            task_pod(plan.name, LAUNCHER_TASK, 0),
            *([task_pod(plan.name, WORKER_TASK, plan.workers - 1)] if plan.workers else []),
        ],
        key=len,
    )
    if len(longest) > names.DNS1123_LABEL_MAX:
        shorter = len(plan.name) - (len(longest) - names.DNS1123_LABEL_MAX)
        message = (
            f'too long: the pod name "{longest}" (its hostname) has {len(longest)} characters, more than '
            f"{names.DNS1123_LABEL_MAX}; use a name of at most {shorter} characters"
        )
        issues.append(Issue(("metadata", "name"), message))
    return issues


def check_options(plan: JobPlan, options: Options) -> list[Issue]:
    if options.gang_scheduler == SCHEDULER_PLUGINS:
        message = "--gang-scheduler scheduler-plugins cannot be used with --target volcano: Volcano schedules the job as one gang itself"
        return [Issue((), message)]
    return []


def config_map_bytes(plan: JobPlan, options: Options, workers: int) -> int:
    """Data size of the ConfigMap for `workers`: the shared host-list arithmetic, with the launcher's
    hostfile entry `<job>-launcher-0` two characters longer than the operator target's `<job>-launcher`."""
    scripts = config_scripts(plan, options)
    size = sum(len(key) + len(value.encode()) for key, value in scripts.items())
    size += len(names.HOSTFILE) + (len(names.DISCOVER_HOSTS_SCRIPT) if plan.discover_hosts else 0)
    size += host_lists_bytes(plan, workers)
    if plan.hostnames.launcher_first:
        size += len("-0") * (2 if plan.discover_hosts else 1)
    return size


def check_sizes(plan: JobPlan, options: Options) -> list[Issue]:
    checks: list[tuple[str, str, Callable[[int], int], int, str]] = [
        (
            "ConfigMap",
            names.config_map(plan.name),
            lambda n: config_map_bytes(plan, options, n),
            CONFIG_MAP_MAX_BYTES,
            "1 MiB",
        ),
        ("Role", names.launcher(plan.name), lambda n: role_bytes(plan, n), OBJECT_MAX_BYTES, "1.5 MiB"),
    ]
    over = [(kind, name, size) for kind, name, size, limit, _ in checks if size(plan.workers) > limit]
    if not over:
        return []
    fits = min(largest_fitting(size, limit, plan.workers) for _, _, size, limit, _ in checks)
    kind, name, size = over[0]
    shown = next(text for k, _, _, _, text in checks if k == kind)
    message = (
        f"{plan.workers} workers do not fit: the {kind} {name} would be {size(plan.workers):,} bytes, over the "
        f"{shown} the API server accepts; the largest job that fits has {fits:,} workers "
        f"(with slotsPerWorker {plan.slots_per_worker} and this job name)"
    )
    return [Issue(plan.workers_path, message)]
