"""The headless Service `<job>-worker` that gives worker pods DNS names.

The worker StatefulSet's `serviceName` names it, but mpi-operator v0.2.0 never created it; without it
`<job>-worker-<i>.<job>-worker` does not resolve. `publishNotReadyAddresses` publishes the names as soon
as the pods have addresses, before they are Ready.
"""

from __future__ import annotations

from typing import Any

from mpigen import names
from mpigen.build import object_meta
from mpigen.plan import JobPlan


def build_worker_service(plan: JobPlan) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": object_meta(plan, names.worker_set(plan.name), names.COMPONENT_WORKER),
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,
            "selector": names.role_labels(plan.name, names.ROLE_WORKER),
        },
    }
