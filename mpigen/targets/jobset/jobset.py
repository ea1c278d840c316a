"""The JobSet `<job>` (jobset.x-k8s.io/v1alpha2, JobSet v0.12 `api/jobset/v1alpha2/jobset_types.go`).

Two replicated jobs, each one Indexed Job: `worker` (parallelism = completions = workers) and
`launcher` (one pod) that `dependsOn` the workers being Ready, so mpirun starts only when every worker
runs. Every default the JobSet webhook would fill is written out (the output does not depend on it,
and Kueue's admission of a suspended JobSet does not wait for it): DNS host names with not-ready
addresses published (the launcher resolves itself and the workers before they are Ready), success when
the launcher completes, both Jobs `backoffLimit: 0` so that any failed pod is one restart of the whole
gang (`failurePolicy.maxRestarts` = the run policy's backoffLimit, the Job default 6 when unset).

Disruptions are free (unless `--no-free-disruptions`, or a `--kube-version` before 1.26:
mpigen.targets.shared.disruption): each Job's `podFailurePolicy` fails the Job with reason
`PodFailurePolicy` when a pod failed with the `DisruptionTarget` condition (evicted, preempted, drained;
k8s v1.37.2 pkg/controller/job/pod_failure_policy.go: matchPodFailurePolicy). The API server takes a
podFailurePolicy only over `restartPolicy: Never` (pkg/apis/batch/validation/validation.go:
validateJobSpec), so the launcher is `Never` too, whatever its replica spec says (v2beta1's default is
OnFailure): under `backoffLimit: 0` an in-place restart would not be kept anyway, the Job controller fails
the Job at the first container restart (job_controller.go: pastBackoffLimitOnFailure), so a real failure
is one counted JobSet restart either way and only a disruption changes. A JobSet rule restarts the whole
JobSet on that reason without counting (jobset v0.12.0 pkg/controllers/failure_policy.go:
restartJobSetAndIgnoreMaxRestartsActionApplier bumps `restarts`, not `restartsCountTowardsMax`). JobSet
offers no bound on such restarts. `restartStrategy: BlockingRecreate`
(jobset_controller.go: createJobs) creates the next attempt's Jobs only once every Job of the previous
one is gone, so no new worker shares a host name with an old launcher or worker still terminating.
"""

from __future__ import annotations

from typing import Any

from mpigen import names
from mpigen.inputs.runpolicy import MULTIKUEUE
from mpigen.options import Options
from mpigen.plan import JobPlan
from mpigen.targets.jobset import names as jobset_names
from mpigen.targets.jobset.pods import build_launcher_template, build_worker_template
from mpigen.targets.shared import disruption
from mpigen.targets.shared.meta import object_meta

# batch/v1 Job's own backoffLimit default, which the operators' launcher Job inherits.
JOB_DEFAULT_BACKOFF_LIMIT = 6
# The Job condition reason of a Job failed by a podFailurePolicy FailJob rule (k8s v1.37.2
# pkg/apis/batch/types.go: JobReasonPodFailurePolicy); the name of mpigen's JobSet rule on it (jobset
# v0.12.0 pkg/webhooks/jobset_webhook.go: ruleNameFmt allows no "-").
POD_FAILURE_POLICY_REASON = "PodFailurePolicy"
DISRUPTION_RULE = "disruption"


def disruption_pod_failure_policy() -> dict[str, Any]:
    """A Job's podFailurePolicy that fails the Job (reason PodFailurePolicy) on a disrupted pod."""
    return disruption.pod_failure_policy("FailJob")


def disruption_failure_rule() -> dict[str, Any]:
    """The JobSet's rule that restarts it whole, without counting, on a Job the podFailurePolicy failed."""
    return {
        "name": DISRUPTION_RULE,
        "action": "RestartJobSetAndIgnoreMaxRestarts",
        "onJobFailureReasons": [POD_FAILURE_POLICY_REASON],
    }


def max_restarts(plan: JobPlan) -> int:
    return JOB_DEFAULT_BACKOFF_LIMIT if plan.backoff_limit is None else plan.backoff_limit


def _job_spec(plan: JobPlan, options: Options, pods: int, template: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "parallelism": pods,
        "completions": pods,
        "completionMode": "Indexed",
        "backoffLimit": 0,
    }
    if disruption.free(options):  # both templates are `restartPolicy: Never` then
        spec["podFailurePolicy"] = disruption_pod_failure_policy()
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
        spec = _job_spec(plan, options, plan.workers, build_worker_template(plan, options))
        jobs.append(
            _replicated_job(
                plan, jobset_names.WORKER_RJOB, names.COMPONENT_WORKER, plan.labels.worker_set, spec
            )
        )
    template = build_launcher_template(plan, options)
    if disruption.free(options):
        template["spec"]["restartPolicy"] = "Never"
    launcher = _replicated_job(
        plan,
        jobset_names.LAUNCHER_RJOB,
        names.COMPONENT_LAUNCHER,
        plan.labels.launcher_job,
        _job_spec(plan, options, 1, template),
    )
    if plan.workers > 0:
        launcher = {**launcher, "dependsOn": [{"name": jobset_names.WORKER_RJOB, "status": "Ready"}]}
    return [*jobs, launcher]


def _failure_policy(plan: JobPlan, options: Options) -> dict[str, Any]:
    policy: dict[str, Any] = {"maxRestarts": max_restarts(plan)}
    rules = []
    if disruption.free(options):
        policy["restartStrategy"] = "BlockingRecreate"
        rules.append(disruption_failure_rule())
    if plan.active_deadline_seconds is not None:
        # A Job past its deadline fails the JobSet rather than restarting it (the run's time is up).
        rules.append(
            {"name": "deadline", "action": "FailJobSet", "onJobFailureReasons": ["DeadlineExceeded"]}
        )
    if rules:
        policy["rules"] = rules
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
        "failurePolicy": _failure_policy(plan, options),
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
