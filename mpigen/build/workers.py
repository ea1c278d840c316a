"""The worker StatefulSet `<job>-worker`: pods that sleep until mpirun execs ranks into them.

mpi-operator v0.2.0 `newWorker`: Parallel pod management, the role labels merged over the template's
labels, `restartPolicy: Always`, containers[0] replaced by `sleep 365d` with the kubexec.sh mount
(Open MPI checks the agent's path in every rank).
"""

from __future__ import annotations

import copy
from typing import Any

from mpigen import names
from mpigen.build import merge_pod_labels, object_meta
from mpigen.build.gang import join_gang
from mpigen.options import Options
from mpigen.plan import JobPlan


def config_volume(items: list[tuple[str, int]], job: str) -> dict[str, Any]:
    """The ConfigMap volume `mpi-job-config` with the given (key, mode) items."""
    return {
        "name": names.CONFIG_VOLUME,
        "configMap": {
            "name": names.config_map(job),
            "items": [{"key": key, "path": key, "mode": mode} for key, mode in items],
        },
    }


def config_mount() -> dict[str, Any]:
    return {"name": names.CONFIG_VOLUME, "mountPath": names.CONFIG_MOUNT_PATH}


def build_worker_pod_template(plan: JobPlan, options: Options) -> dict[str, Any]:
    template = copy.deepcopy(plan.worker_template)
    labels = names.role_labels(plan.name, names.ROLE_WORKER)
    merge_pod_labels(template, {**labels, **names.standard_labels(plan.name, names.COMPONENT_WORKER)})
    pod = template["spec"]
    pod["restartPolicy"] = "Always"
    # Workers never call the API server: no token unless the template asks for one.
    pod.setdefault("automountServiceAccountToken", False)
    container = pod["containers"][0]
    container["command"] = ["sleep"]
    container["args"] = ["365d"]
    container["volumeMounts"] = [*(container.get("volumeMounts") or []), config_mount()]
    volume = config_volume([(names.KUBEXEC_SCRIPT, names.SCRIPT_MODE)], plan.name)
    pod["volumes"] = [*(pod.get("volumes") or []), volume]
    join_gang(template, plan, options)
    return template


def build_worker_stateful_set(plan: JobPlan, options: Options) -> dict[str, Any]:
    labels = names.role_labels(plan.name, names.ROLE_WORKER)
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": object_meta(plan, names.worker_set(plan.name), names.COMPONENT_WORKER, labels),
        "spec": {
            "podManagementPolicy": "Parallel",
            "replicas": plan.workers,
            "selector": {"matchLabels": dict(labels)},
            "serviceName": names.worker_set(plan.name),
            "template": build_worker_pod_template(plan, options),
        },
    }
