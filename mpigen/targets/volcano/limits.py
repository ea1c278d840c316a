"""What the volcano target checks before it builds: the names it adds to the user's pods (its own
and those Volcano's plugins add), the options and run policy a Volcano Job can express, the pod names
Volcano derives, and the sizes of what grows with the worker count (the ConfigMap, the launcher Role),
computed without building them.
"""

from __future__ import annotations

from mpigen import names
from mpigen.checks.rules import Added
from mpigen.errors import Issue
from mpigen.options import SCHEDULER_PLUGINS, Options
from mpigen.plan import JobPlan
from mpigen.targets.shared import mpi_env
from mpigen.targets.shared.hardening import API_TOKEN_VOLUME, TMP_VOLUME
from mpigen.targets.shared.sizes import TargetSizes, host_lists_bytes
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
    env = (names.JOB_ROLE_ENV, *mpi_env.reserved(plan.implementation))
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
    """What a Volcano v1.14 Job cannot express, and the pod names Volcano derives (hostnames, at most 63)."""
    issues = []
    if plan.suspend:
        message = "a Volcano Job cannot be created suspended (Volcano v1.14 has no suspend field); remove it or use --target operator"
        issues.append(Issue(("spec", "runPolicy", "suspend"), message))
    wanted = plan.scheduling.min_available
    if wanted is not None and wanted < 1 and plan.scheduling.written_at is not None:
        message = f"must be at least 1 with --target volcano: the launcher is always a member of the gang (got {wanted})"
        issues.append(Issue((*plan.scheduling.written_at, "minAvailable"), message))
    issues += _check_scheduling_names(plan)
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


def _check_scheduling_names(plan: JobPlan) -> list[Issue]:
    """The queue and priority class as the Job's `queue` and `priorityClassName`: DNS-1123 subdomains, as
    Volcano v1.14's Job CRD requires (`config/crd/volcano/bases/batch.volcano.sh_jobs.yaml`)."""
    at = plan.scheduling.written_at
    found = []
    for key, value in (("queue", plan.scheduling.queue), ("priorityClass", plan.scheduling.priority_class)):
        if at is not None and value is not None and not names.is_dns1123_subdomain(value):
            message = f"must be a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', at most {names.DNS1123_SUBDOMAIN_MAX} characters) for a Volcano Job, got {value!r}"
            found.append(Issue((*at, key), message))
    return found


def check_options(plan: JobPlan, options: Options) -> list[Issue]:
    if options.gang_scheduler == SCHEDULER_PLUGINS:
        message = "--gang-scheduler scheduler-plugins cannot be used with --target volcano: Volcano schedules the job as one gang itself"
        return [Issue((), message)]
    return []


def _host_bytes(plan: JobPlan, workers: int) -> int:
    """The host lists for `workers`: the shared arithmetic, with the launcher's hostfile entry
    `<job>-launcher-0` two characters longer than the operator target's `<job>-launcher`."""
    size = host_lists_bytes(plan, workers)
    if plan.hostnames.launcher_first:
        size += len("-0") * (2 if plan.discover_hosts else 1)
    return size


# The volcano target's ConfigMap: its scripts and host lists.
SIZES = TargetSizes(config_scripts, _host_bytes)
