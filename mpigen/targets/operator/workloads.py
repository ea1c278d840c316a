"""The operator target's workloads around the pod templates every target shares: the worker
StatefulSet `<job>-worker` (mpi-operator v0.2.0 `newWorker`) and the launcher Job `<job>-launcher`
(v0.2.0 `newLauncher`, v0.8.2 `newLauncherJob`). The pods themselves: mpigen.targets.shared.workers and
mpigen.targets.shared.launcher.
"""

from __future__ import annotations

from typing import Any

from mpigen import names
from mpigen.options import Options
from mpigen.plan import JobPlan
from mpigen.targets.shared.launcher import build_launcher_pod_template
from mpigen.targets.shared.meta import object_meta
from mpigen.targets.shared.workers import build_worker_pod_template


def build_worker_stateful_set(plan: JobPlan, options: Options) -> list[dict[str, Any]]:
    if plan.workers == 0:
        return []
    return [
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": object_meta(
                plan, names.worker_set(plan.name), names.COMPONENT_WORKER, plan.labels.worker_set
            ),
            "spec": {
                "podManagementPolicy": "Parallel",
                # A suspended job runs no workers; resuming scales them up (docs/runtime.md).
                "replicas": 0 if plan.suspend else plan.workers,
                "selector": {"matchLabels": dict(plan.labels.worker_pod)},
                "serviceName": plan.service.name,
                "template": build_worker_pod_template(plan, options),
            },
        }
    ]


def build_launcher_job(plan: JobPlan, options: Options) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    for key, value in (
        ("backoffLimit", plan.backoff_limit),
        ("activeDeadlineSeconds", plan.active_deadline_seconds),
        ("ttlSecondsAfterFinished", plan.ttl_seconds_after_finished),
    ):
        if value is not None:
            spec[key] = value
    spec["template"] = build_launcher_pod_template(plan, options)
    if plan.pod_replacement_failed:
        # v0.8.2: a retry waits until the failed pod is gone (kubernetes#115844).
        spec["podReplacementPolicy"] = "Failed"
    if plan.suspend:
        spec["suspend"] = True
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": object_meta(
            plan, names.launcher(plan.name), names.COMPONENT_LAUNCHER, plan.labels.launcher_job
        ),
        "spec": spec,
    }
