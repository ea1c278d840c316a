"""Disruptions on the operator target: the launcher Job's `podFailurePolicy`.

A launcher pod evicted, preempted or drained (the pod's `DisruptionTarget` condition) is replaced without
counting against the Job's backoffLimit: an `Ignore` rule (k8s v1.37.2
pkg/controller/job/pod_failure_policy.go: matchPodFailurePolicy; job_controller.go counts ignored pods in
neither `status.failed` nor the backoff). The API server takes a podFailurePolicy only with the template's
`restartPolicy: Never` (pkg/apis/batch/validation/validation.go: validateJobSpec), so a launcher that
restarts in place (`OnFailure`, the operators' default) keeps counting every failure, disruptions too.

What no policy can tell apart: a worker is a StatefulSet pod, which the StatefulSet recreates under its
own name (evicted or not, no retry budget is involved), but mpirun on the launcher loses the rank and
exits non-zero; that launcher failure carries no DisruptionTarget condition and its exit code is
mpirun's, the same as for a rank that crashed, so it counts against backoffLimit (docs/departures.md,
"Disruptions"). Before Kubernetes 1.26 (`--kube-version`) there is no podFailurePolicy to render
(mpigen.targets.shared.disruption).
"""

from __future__ import annotations

from typing import Any

from mpigen.errors import Issue
from mpigen.options import Options
from mpigen.plan import JobPlan
from mpigen.targets.operator.workloads import build_launcher_job
from mpigen.targets.shared import disruption


def launcher_pod_failure_policy() -> dict[str, Any]:
    return disruption.pod_failure_policy("Ignore")


def never_restarts(plan: JobPlan) -> bool:
    return (plan.launcher_template.get("spec") or {}).get("restartPolicy") == "Never"


def build_launcher(plan: JobPlan, options: Options) -> dict[str, Any]:
    """The launcher Job, with the podFailurePolicy that makes its disruptions free where it can."""
    job = build_launcher_job(plan, options)
    spec = job["spec"]
    if disruption.free(options) and spec["template"]["spec"].get("restartPolicy") == "Never":
        spec["podFailurePolicy"] = launcher_pod_failure_policy()
    return job


def disruption_warnings(plan: JobPlan, options: Options) -> list[Issue]:
    """A `--kube-version` without podFailurePolicy, where the launcher would have carried one."""
    return disruption.version_warnings(options) if never_restarts(plan) else []
