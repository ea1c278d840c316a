"""The objects of the volcano target, in order: the launcher's identity (when it needs the API), the
ConfigMap `<job>-config` (mpigen's hostfile over Volcano's pod names, the scripts), the opt-in
NetworkPolicy `<job>` (the svc plugin's own is disabled), the workers' PodDisruptionBudget and the
Volcano Job `<job>`.

Volcano v1.14 (`pkg/controllers/job`, its `svc` and `ssh` plugins, the admission webhooks) decides the
rest. Every field Volcano's mutating webhook would default is written (queue, schedulerName, maxRetry,
each task's name, minAvailable and maxRetry), so the Job runs the same with or without the webhook.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mpigen import names
from mpigen.errors import Issue
from mpigen.options import VOLCANO, Options
from mpigen.plan import JobPlan
from mpigen.targets.shared.gang import build_worker_pdb, gang_warnings, min_member
from mpigen.targets.shared.hostfile import (
    render_discover_hosts,
    render_hostfile,
    render_kubexec,
    render_wait,
)
from mpigen.targets.shared.launcher import build_launcher_pod_template
from mpigen.targets.shared.meta import object_meta, template_warnings
from mpigen.targets.shared.network import build_network_policy
from mpigen.targets.shared.policy import clean_pod_policy_none_warnings, multikueue_warnings
from mpigen.targets.shared.rbac import (
    build_launcher_role,
    build_launcher_role_binding,
    build_launcher_service_account,
    foreign_account_warnings,
)
from mpigen.targets.shared.workers import build_worker_pod_template
from mpigen.targets.volcano.placement import network_topology

JOB_API = "batch.volcano.sh/v1alpha1"
LAUNCHER_TASK = names.ROLE_LAUNCHER
WORKER_TASK = names.ROLE_WORKER
COMPONENT_JOB = "job"
DEFAULT_QUEUE = "default"
# The batch Job's backoffLimit default, which the operators' launcher Job gets when the job sets none.
DEFAULT_BACKOFF_LIMIT = 6
# A task's maxRetry where in-place restarts must not fail the job. Volcano v1.14's Job CRD refuses -1 (its
# "no limit", `jobCache.TaskFailed`; minimum 0) and 0 means 3, the mutating webhook's default: 3 it is. A
# launcher that does not restart in place never reaches it, and the worker task's TaskFailed has no policy
# (Volcano then only syncs the Job: `applyPolicies`).
TASK_MAX_RETRY = 3
SVC_PLUGIN_VOLUME_SUFFIX = "-svc"
SSH_PLUGIN_SECRET_SUFFIX = "-ssh"
VOLCANO_MOUNT_PATH = "/etc/volcano"

Builder = Callable[[JobPlan, Options], list[dict[str, Any]]]


def task_pod(job: str, task: str, index: int) -> str:
    """Volcano's pod name (`jobhelpers.MakePodName`, "%s-%s-%d")."""
    return f"{job}-{task}-{index}"


def ssh_plugin(plan: JobPlan) -> bool:
    """Volcano's ssh plugin makes the keys (v2beta1 without --ssh-secret)."""
    return plan.ssh is not None and plan.ssh.generate_keys


def hosts(plan: JobPlan) -> list[str]:
    """The hostfile's hosts: the launcher's pod `<job>-launcher-0` first when it runs ranks, then the
    workers, `<job>-worker-<i>` (v2beta1: in the Service `<job>` the svc plugin makes)."""
    pods = [task_pod(plan.name, LAUNCHER_TASK, 0)] if plan.hostnames.launcher_first else []
    pods += plan.worker_pod_names
    if not plan.hostnames.fqdn:
        return pods
    return [names.host(pod, plan.service.name, plan.namespace, plan.hostnames.cluster_domain) for pod in pods]


def config_data(plan: JobPlan, options: Options) -> dict[str, str]:
    data = {names.HOSTFILE: render_hostfile(plan, hosts(plan))}
    if plan.discover_hosts:
        data[names.DISCOVER_HOSTS_SCRIPT] = render_discover_hosts(plan, hosts(plan))
    return {**data, **config_scripts(plan, options)}


def config_scripts(plan: JobPlan, options: Options) -> dict[str, str]:
    """The ConfigMap's entries whose size does not grow with the worker count."""
    data = {}
    if plan.kubexec:
        data[names.KUBEXEC_SCRIPT] = render_kubexec(plan)
    if plan.waits_for_workers:
        data[names.WAIT_SCRIPT] = render_wait(plan, options)
    return data


def build_config_map(plan: JobPlan, options: Options) -> list[dict[str, Any]]:
    meta = object_meta(plan, names.config_map(plan.name), names.COMPONENT_CONFIG, plan.labels.other)
    return [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": config_data(plan, options)}]


def _gang(options: Options) -> Options:
    """The options as the shared gang helpers read them: Volcano's gang, whatever was asked."""
    return options.replace(gang_scheduler=VOLCANO)


def scheduler_name(options: Options) -> str:
    name = _gang(options).effective_scheduler_name
    assert name is not None
    return name


def _pod_template(template: dict[str, Any], plan: JobPlan, options: Options) -> dict[str, Any]:
    """Volcano's svc plugin names each pod (hostname = pod name, subdomain = job): a template's own
    would give every replica one name, so it goes (with a warning). A schedulerName is kept or
    overwritten as the input version's operator does with gang scheduling."""
    pod = template["spec"]
    pod.pop("hostname", None)
    pod.pop("subdomain", None)
    if plan.scheduling.overwrite_scheduler_name and pod.get("schedulerName"):
        pod["schedulerName"] = scheduler_name(options)
    return template


def max_retry(plan: JobPlan) -> tuple[int, int]:
    """(the Job's maxRetry, the launcher task's). Volcano's maxRetry counts runs: backoffLimit B gives
    B + 1 runs of the gang. A launcher that restarts in place (OnFailure) restarts B times in its pod
    (the task's maxRetry, at least 1: 0 means 3), then fails the one run."""
    backoff = DEFAULT_BACKOFF_LIMIT if plan.backoff_limit is None else plan.backoff_limit
    if plan.launcher_template.get("spec", {}).get("restartPolicy") == "OnFailure":
        return 1, max(backoff, 1)
    return backoff + 1, TASK_MAX_RETRY


def _launcher_task(plan: JobPlan, options: Options) -> dict[str, Any]:
    template = build_launcher_pod_template(
        plan, options, names_pod=False, mounts_keys=not ssh_plugin(plan), gang=False
    )
    if plan.active_deadline_seconds is not None:
        template["spec"]["activeDeadlineSeconds"] = plan.active_deadline_seconds
    return {
        "name": LAUNCHER_TASK,
        "replicas": 1,
        "minAvailable": 1,
        "maxRetry": max_retry(plan)[1],
        "policies": [
            {"event": "TaskCompleted", "action": "CompleteJob"},
            {"event": "PodFailed", "action": "RestartJob"},
            {"event": "TaskFailed", "action": "RestartJob"},
        ],
        "template": _pod_template(template, plan, options),
    }


def _worker_task(plan: JobPlan, options: Options) -> dict[str, Any]:
    template = build_worker_pod_template(plan, options, mounts_keys=not ssh_plugin(plan), gang=False)
    return {
        "name": WORKER_TASK,
        "replicas": plan.workers,
        "minAvailable": min(plan.workers, max(min_member(plan) - 1, 0)),
        "maxRetry": TASK_MAX_RETRY,
        "template": _pod_template(template, plan, options),
    }


def plugins(plan: JobPlan, options: Options) -> dict[str, list[str]]:
    """svc always (the pods' DNS names); ssh when Volcano makes the keys. The svc plugin's own per-job
    NetworkPolicy (ingress from the job's own pods only) stays unless `--network-policy` renders mpigen's."""
    svc = ["--disable-network-policy"] if options.network_policy is not None else []
    if plan.service.publish_not_ready:
        svc.append("--publish-not-ready-addresses")
    found = {"svc": svc}
    if ssh_plugin(plan):
        assert plan.ssh is not None
        path = plan.ssh.mount_path
        found["ssh"] = [] if path == names.ROOT_SSH_PATH else [f"--ssh-key-file-path={path}"]
    return found


def build_job(plan: JobPlan, options: Options) -> list[dict[str, Any]]:
    scheduling = plan.scheduling
    spec: dict[str, Any] = {
        "minAvailable": min_member(plan),
        "schedulerName": scheduler_name(options),
        "queue": scheduling.queue or DEFAULT_QUEUE,
        "maxRetry": max_retry(plan)[0],
        "plugins": plugins(plan, options),
        "policies": [
            {"event": "PodEvicted", "action": "RestartJob"},
            {"event": "PodFailed", "action": "RestartJob"},
        ],
        "tasks": [_launcher_task(plan, options), *([_worker_task(plan, options)] if plan.workers else [])],
    }
    if scheduling.priority_class:
        spec["priorityClassName"] = scheduling.priority_class
    if plan.ttl_seconds_after_finished is not None:
        spec["ttlSecondsAfterFinished"] = plan.ttl_seconds_after_finished
    if (placed := network_topology(options)) is not None:
        spec["networkTopology"] = placed
    meta = object_meta(plan, plan.name, COMPONENT_JOB, plan.labels.other)
    return [{"apiVersion": JOB_API, "kind": "Job", "metadata": meta, "spec": spec}]


def _some(build: Callable[[JobPlan], list[dict[str, Any]]]) -> Builder:
    return lambda plan, options: build(plan)


# The order of the documents of one job (API, as for every target): identities and RBAC before the pods
# that use them, the ConfigMap before the pods that mount it, the NetworkPolicy and the PodDisruptionBudget before its pods.
BUILDERS: tuple[Builder, ...] = (
    _some(build_launcher_service_account),
    _some(build_launcher_role),
    _some(build_launcher_role_binding),
    build_config_map,
    build_network_policy,
    lambda plan, options: build_worker_pdb(plan, _gang(options)),
    build_job,
)


def warnings(plan: JobPlan, options: Options) -> list[Issue]:
    found = multikueue_warnings(
        plan,
        "the operator would leave this job to Kueue's MultiKueue; a Volcano Job has no managedBy, "
        "so Volcano runs it on this cluster",
    )
    found += clean_pod_policy_none_warnings(
        plan,
        "on --target volcano the running workers are deleted when the launcher completes "
        "(Volcano's CompleteJob ends every running pod of the Job)",
    )
    found += [issue for issue in template_warnings(plan) if issue.path[-2:] != ("spec", "hostname")]
    found += gang_warnings(plan, _gang(options))
    found += foreign_account_warnings(plan)
    for role, template in (
        (names.ROLE_LAUNCHER, plan.launcher_template),
        (names.ROLE_WORKER, plan.worker_template),
    ):
        pod = template.get("spec") or {}
        for field in ("hostname", "subdomain"):
            if field in pod:
                path = plan.template_paths.get(role, ("spec",)) + ("spec", field)
                message = f"dropped: Volcano's svc plugin names each {role} pod itself (hostname = pod name, subdomain = the job's Service)"
                found.append(Issue(path, message, "warning"))
    where = plan.scheduling.written_at
    if where is not None:
        if plan.scheduling.min_resources is not None:
            message = "ignored: Volcano computes the PodGroup's minResources from the tasks' pod templates"
            found.append(Issue((*where, "minResources"), message, "warning"))
        if plan.scheduling.schedule_timeout_seconds:
            message = "ignored: Volcano's PodGroup has no schedule timeout (scheduler-plugins only)"
            found.append(Issue((*where, "scheduleTimeoutSeconds"), message, "warning"))
    return _unique(found)


def _unique(issues: list[Issue]) -> list[Issue]:
    seen: set[tuple[Any, ...]] = set()
    out = []
    for issue in issues:
        key = (issue.path, issue.message)
        if key not in seen:
            seen.add(key)
            out.append(issue)
    return out
