"""Run policy: `spec.runPolicy` of kubeflow.org/v2beta1 and kubeflow.org/v1 MPIJobs, parsed and resolved.

Both APIs share the type (mpi-operator release-0.8 `pkg/apis/kubeflow/v2beta1/types.go` RunPolicy and
SchedulingPolicy, training-operator release-1.9 `pkg/apis/kubeflow.org/v1/common_types.go`). The
operators validate little of it; mpigen refuses what would make the job fail or never start, and says
why: a `managedBy` the operator does not know makes it skip the job silently (its check runs before
validation), `activeDeadlineSeconds: 0` passes both its validation and the Job API's, and fails the launcher
Job at once (DeadlineExceeded).
"""

from __future__ import annotations

from typing import Any, Literal

from mpigen.errors import Issue, Path, shown
from mpigen.inputs.model import Field
from mpigen.inputs.shared import INT32_MAX, INT64_MAX, Strict
from mpigen.records import Record

CleanPodPolicy = Literal["None", "Running", "All"]
MULTIKUEUE = "kueue.x-k8s.io/multikueue"
RUN_POLICY: Path = ("spec", "runPolicy")


class SchedulingPolicy(Strict):
    minAvailable: int | None = Field(default=None, ge=0, le=INT32_MAX)
    queue: str | None = None
    minResources: dict[str, int | str] | None = None
    priorityClass: str | None = None
    scheduleTimeoutSeconds: int | None = Field(default=None, ge=0, le=INT32_MAX)


class RunPolicy(Strict):
    cleanPodPolicy: CleanPodPolicy | None = None
    ttlSecondsAfterFinished: int | None = Field(default=None, ge=0, le=INT32_MAX)
    activeDeadlineSeconds: int | None = Field(default=None, ge=0, le=INT64_MAX)
    backoffLimit: int | None = Field(default=None, ge=0, le=INT32_MAX)
    schedulingPolicy: SchedulingPolicy | None = None
    suspend: bool | None = None
    managedBy: str | None = None


class Scheduling(Record):
    """`schedulingPolicy` as written; the gang builders apply each scheduler's defaults."""

    min_available: int | None
    queue: str | None
    min_resources: dict[str, int | str] | None
    priority_class: str | None
    schedule_timeout_seconds: int | None


class Run(Record):
    """`runPolicy` with the operator's defaults applied (cleanPodPolicy None, suspend false)."""

    clean_pod_policy: CleanPodPolicy
    clean_pod_policy_at: Path | None  # where the job wrote it; None: the default
    ttl_seconds_after_finished: int | None
    active_deadline_seconds: int | None
    backoff_limit: int | None
    suspend: bool
    managed_by: str | None
    scheduling: Scheduling | None


def resolve(policy: RunPolicy | None, clean_pod_policy: CleanPodPolicy | None = None) -> Run:
    """The run policy with defaults; `clean_pod_policy` is a value found elsewhere (v1's deprecated field)."""
    policy = policy or RunPolicy()
    sp = policy.schedulingPolicy
    scheduling = None
    if sp is not None:
        scheduling = Scheduling(
            sp.minAvailable, sp.queue, sp.minResources, sp.priorityClass, sp.scheduleTimeoutSeconds
        )
    return Run(
        clean_pod_policy=policy.cleanPodPolicy or clean_pod_policy or "None",
        clean_pod_policy_at=(
            RUN_POLICY + ("cleanPodPolicy",)
            if policy.cleanPodPolicy
            else ("spec", "cleanPodPolicy")
            if clean_pod_policy
            else None
        ),
        ttl_seconds_after_finished=policy.ttlSecondsAfterFinished,
        active_deadline_seconds=policy.activeDeadlineSeconds,
        backoff_limit=policy.backoffLimit,
        suspend=bool(policy.suspend),
        managed_by=policy.managedBy,
        scheduling=scheduling,
    )


SCHEDULING_POLICY = ("spec", "runPolicy", "schedulingPolicy")


def check_run_policy(policy: RunPolicy | None, path: Path, controller: str, pods: int | None) -> list[Issue]:
    """Problems the operator lets through. `controller` is the operator's own managedBy value;
    `pods` the job's pod count (launcher and workers; None: unknown), which a gang's minAvailable
    cannot exceed."""
    if policy is None:
        return []
    issues = _check_managed_by(policy.managedBy, path + ("managedBy",), controller)
    if policy.activeDeadlineSeconds == 0:
        message = "must be >= 1, got 0 (a launcher Job with a deadline of 0 fails at once)"
        issues.append(Issue(path + ("activeDeadlineSeconds",), message))
    if policy.schedulingPolicy is not None:
        issues += _check_scheduling(policy.schedulingPolicy, path + ("schedulingPolicy",), pods)
    return issues


def _check_managed_by(value: str | None, path: Path, controller: str) -> list[Issue]:
    if value is None or value == controller:
        return []
    if value == MULTIKUEUE:
        return []  # each run target says what it does with it (mpigen.targets.shared.policy)
    known = [controller, MULTIKUEUE]
    # deferred: difflib only for the "did you mean" of a managedBy no controller takes
    import difflib

    close = difflib.get_close_matches(value, known, n=1)
    hint = f' (did you mean "{close[0]}"?)' if close else ""
    message = (
        f'must be "{controller}" or "{MULTIKUEUE}", got {shown(value)}{hint}; '
        "the operator would skip this job without a word"
    )
    return [Issue(path, message)]


def _check_scheduling(policy: SchedulingPolicy, path: Path, pods: int | None) -> list[Issue]:
    # deferred: mpigen.quantity (fractions, decimal) only for a schedulingPolicy with minResources
    from mpigen.quantity import parse_quantity

    issues = []
    for name, value in (policy.minResources or {}).items():
        if parse_quantity(value) is None:
            issues.append(
                Issue(
                    path + ("minResources", name),
                    f"expected a quantity such as 4, 500m or 2Gi, got {shown(str(value))}",
                )
            )
    minimum = policy.minAvailable
    if minimum is not None and pods is not None and minimum > pods:
        message = f"must be <= {pods}, the job's pod count (launcher and workers), got {minimum}: the gang could never start"
        issues.append(Issue(path + ("minAvailable",), message))
    elif minimum == 0:
        message = (
            "0 lets the gang scheduler start the job's pods one by one: gang scheduling is off for this job"
        )
        issues.append(Issue(path + ("minAvailable",), message, "warning"))
    return issues


# What each run target gives the worker pods, and why (mpigen.targets.shared.workers, jobset.pods).
_WORKER_RESTART = {
    "jobset": ("Never", "a worker Job's pods never restart in place; JobSet restarts the whole gang"),
    "volcano": ("Always", "the worker task's pods always restart"),
}
_STATEFULSET_RESTART = ("Always", "the workers run as a StatefulSet, whose pods always restart")


def worker_restart_warnings(worker: Any, path: Path, target: str) -> list[Issue]:
    """One warning for each restartPolicy a Worker writes (on the replica spec or in its template)
    that its pods do not get, saying the value they get on this run target (docs/departures.md).
    `worker` is the Worker replica spec as written."""
    given, why = _WORKER_RESTART.get(target, _STATEFULSET_RESTART)
    worker = worker if isinstance(worker, dict) else {}
    template = worker.get("template")
    pod = template.get("spec") if isinstance(template, dict) else None
    warnings = []
    for at, policy in (
        (path + ("restartPolicy",), worker.get("restartPolicy")),
        (
            path + ("template", "spec", "restartPolicy"),
            pod.get("restartPolicy") if isinstance(pod, dict) else None,
        ),
    ):
        if isinstance(policy, str) and policy and policy != given:
            message = f'{shown(policy)} is not applied: the worker pods get restartPolicy "{given}" ({why})'
            warnings.append(Issue(at, message, "warning"))
    return warnings


def template_restart_policy_warnings(template: Any, path: Path, role: str, policy: str) -> list[Issue]:
    """The operators replace a pod template's restartPolicy with the replica spec's (with a warning
    event for the launcher, silently for workers); mpigen warns for both."""
    spec = template.get("spec") if isinstance(template, dict) else None
    own = spec.get("restartPolicy") if isinstance(spec, dict) else None
    if not own or own == policy:
        return []
    message = f'{shown(str(own))} is replaced by the {role} restartPolicy "{policy}" (set it on the replica spec instead)'
    return [Issue(path + ("spec", "restartPolicy"), message, "warning")]
