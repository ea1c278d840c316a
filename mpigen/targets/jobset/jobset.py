"""The JobSet `<job>` (jobset.x-k8s.io/v1alpha2, JobSet v0.12 `api/jobset/v1alpha2/jobset_types.go`).

Two replicated jobs, each one Indexed Job: `worker` (parallelism = completions = workers) and
`launcher` (one pod) that `dependsOn` the workers being Ready, so mpirun starts only when every worker
runs. Every default the JobSet webhook would fill is written out (the output does not depend on it,
and Kueue's admission of a suspended JobSet does not wait for it): DNS host names with not-ready
addresses published (the launcher resolves itself and the workers before they are Ready), success when
the launcher completes, both Jobs `backoffLimit: 0` so that any failed pod is one restart of the whole
gang (`failurePolicy.maxRestarts` = the run policy's backoffLimit, the Job default 6 when unset).
"""

from __future__ import annotations

from typing import Any

from mpigen import names
from mpigen.inputs.runpolicy import MULTIKUEUE
from mpigen.options import Options
from mpigen.plan import JobPlan
from mpigen.targets.jobset import names as jobset_names
from mpigen.targets.jobset.pods import build_launcher_template, build_worker_template
from mpigen.targets.shared.meta import object_meta

# batch/v1 Job's own backoffLimit default, which the operators' launcher Job inherits.
JOB_DEFAULT_BACKOFF_LIMIT = 6


def max_restarts(plan: JobPlan) -> int:
    return JOB_DEFAULT_BACKOFF_LIMIT if plan.backoff_limit is None else plan.backoff_limit


def _job_spec(plan: JobPlan, pods: int, template: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "parallelism": pods,
        "completions": pods,
        "completionMode": "Indexed",
        "backoffLimit": 0,
    }
    if plan.active_deadline_seconds is not None:
        spec["activeDeadlineSeconds"] = plan.active_deadline_seconds
    if plan.pod_replacement_failed:
        spec["podReplacementPolicy"] = "Failed"
    spec["template"] = template
    return spec


def _replicated_job(
    plan: JobPlan, name: str, component: str, labels: dict[str, str], spec: dict[str, Any]
) -> dict[str, Any]:
    metadata = {"labels": {**labels, **names.standard_labels(plan.name, component)}}
    return {"name": name, "replicas": 1, "template": {"metadata": metadata, "spec": spec}}


def replicated_jobs(plan: JobPlan, options: Options) -> list[dict[str, Any]]:
    jobs = []
    if plan.workers > 0:
        spec = _job_spec(plan, plan.workers, build_worker_template(plan, options))
        jobs.append(
            _replicated_job(
                plan, jobset_names.WORKER_RJOB, names.COMPONENT_WORKER, plan.labels.worker_set, spec
            )
        )
    launcher = _replicated_job(
        plan,
        jobset_names.LAUNCHER_RJOB,
        names.COMPONENT_LAUNCHER,
        plan.labels.launcher_job,
        _job_spec(plan, 1, build_launcher_template(plan, options)),
    )
    if plan.workers > 0:
        launcher = {**launcher, "dependsOn": [{"name": jobset_names.WORKER_RJOB, "status": "Ready"}]}
    return [*jobs, launcher]


def _failure_policy(plan: JobPlan) -> dict[str, Any]:
    policy: dict[str, Any] = {"maxRestarts": max_restarts(plan)}
    if plan.active_deadline_seconds is not None:
        # A Job past its deadline fails the JobSet rather than restarting it (the run's time is up).
        policy["rules"] = [
            {"name": "deadline", "action": "FailJobSet", "onJobFailureReasons": ["DeadlineExceeded"]}
        ]
    return policy


def jobset_labels(plan: JobPlan, options: Options) -> dict[str, str]:
    labels = {}
    if options.queue is not None:
        labels[names.QUEUE_LABEL] = options.queue
    if options.priority_class is not None:
        labels[names.PRIORITY_CLASS_LABEL] = options.priority_class
    return labels


def build_jobset(plan: JobPlan, options: Options) -> list[dict[str, Any]]:
    spec: dict[str, Any] = {
        "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
        "successPolicy": {"operator": "All", "targetReplicatedJobs": [jobset_names.LAUNCHER_RJOB]},
        "failurePolicy": _failure_policy(plan),
    }
    if plan.suspend or options.queue is not None:
        spec["suspend"] = True
    if plan.ttl_seconds_after_finished is not None:
        spec["ttlSecondsAfterFinished"] = plan.ttl_seconds_after_finished
    if plan.managed_by == MULTIKUEUE:
        spec["managedBy"] = MULTIKUEUE
    spec["replicatedJobs"] = replicated_jobs(plan, options)
    meta = object_meta(plan, plan.name, names.COMPONENT_JOB, jobset_labels(plan, options))
    return [{"apiVersion": jobset_names.JOBSET_API, "kind": "JobSet", "metadata": meta, "spec": spec}]
