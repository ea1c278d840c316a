"""The headless Service that gives the job's pods DNS names.

v0.2.0 and kubeflow.org/v1 jobs: `<job>-worker` over the workers (none when a v1 job has no workers). The worker StatefulSet's `serviceName` names it, but
mpi-operator v0.2.0 never created it; without it `<job>-worker-<i>.<job>-worker` does not resolve.
`publishNotReadyAddresses` publishes the names as soon as the pods have addresses, before they are Ready.

v2beta1 jobs: `<job>` over the launcher and the workers, as mpi-operator v0.8.2 `newJobService`
creates it, publishing not-ready pods only when the launcher is a worker too.
"""

from __future__ import annotations

from typing import Any

from mpigen import names
from mpigen.plan import JobPlan
from mpigen.targets.shared.meta import object_meta


def build_job_service(plan: JobPlan) -> list[dict[str, Any]]:
    if plan.kubexec and plan.workers == 0:
        # The kubectl-exec transport's Service covers the workers alone (a v1 job may have none).
        return []
    service = plan.service
    spec: dict[str, Any] = {"clusterIP": "None", "selector": dict(service.selector)}
    if service.publish_not_ready:
        spec["publishNotReadyAddresses"] = True
    return [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": object_meta(plan, service.name, names.COMPONENT_WORKER, service.labels),
            "spec": spec,
        }
    ]
