"""The launcher Job `<job>-launcher`: the pod that runs mpirun.

mpi-operator v0.2.0 `newLauncher`: the launcher ServiceAccount, an init container that delivers
kubectl into `/opt/kube`, Open MPI pointed at kubexec.sh and the hostfile through `OMPI_MCA_*`
variables, and both volumes.
"""

from __future__ import annotations

import copy
from typing import Any

from mpigen import names
from mpigen.build import merge_pod_labels, object_meta
from mpigen.build.gang import join_gang
from mpigen.build.workers import config_mount, config_volume
from mpigen.options import Options
from mpigen.plan import JobPlan


def launcher_env() -> list[dict[str, str]]:
    """The variables that point Open MPI at kubexec.sh and the hostfile.

    `OMPI_MCA_plm_rsh_no_tree_spawn` is mpigen's addition: beyond 64 hosts (`routed_radix`) Open MPI
    lets daemons on workers start further daemons through the rsh agent, but only the launcher has
    kubectl, so those launches fail (exit 127). With it, mpirun starts every daemon itself; proven with
    70 workers in tests/e2e/test_e2e_large.py.
    """
    return [
        {"name": names.RSH_AGENT_ENV, "value": f"{names.CONFIG_MOUNT_PATH}/{names.KUBEXEC_SCRIPT}"},
        {"name": names.HOSTFILE_ENV, "value": f"{names.CONFIG_MOUNT_PATH}/{names.HOSTFILE}"},
        {"name": names.NO_TREE_SPAWN_ENV, "value": "1"},
    ]


def kubectl_mount() -> dict[str, str]:
    return {"name": names.KUBECTL_VOLUME, "mountPath": names.KUBECTL_MOUNT_PATH}


def build_kubectl_delivery(options: Options) -> dict[str, Any]:
    return {
        "name": names.KUBECTL_DELIVERY,
        "image": options.kubectl_delivery_image,
        "env": [{"name": names.KUBECTL_TARGET_DIR_ENV, "value": names.KUBECTL_MOUNT_PATH}],
        "volumeMounts": [kubectl_mount()],
    }


def build_wait_for_workers(options: Options) -> dict[str, Any]:
    """Init container that holds the launcher back until every worker pod is Ready.

    v0.2.0 creates the launcher Job only once the worker StatefulSet reports all replicas ready; here
    the Job exists from the start and this container, after `kubectl-delivery`, does the waiting with
    the delivered kubectl and the launcher Role's `get` on the worker pods. On timeout it fails, and
    the Job's backoffLimit applies.
    """
    return {
        "name": names.WAIT_FOR_WORKERS,
        "image": options.kubectl_delivery_image,
        "command": ["/bin/sh", f"{names.CONFIG_MOUNT_PATH}/{names.WAIT_SCRIPT}"],
        "volumeMounts": [kubectl_mount(), config_mount()],
    }


def build_launcher_pod_template(plan: JobPlan, options: Options) -> dict[str, Any]:
    template = copy.deepcopy(plan.launcher_template)
    labels = names.role_labels(plan.name, names.ROLE_LAUNCHER)
    merge_pod_labels(template, {**labels, **names.standard_labels(plan.name, names.COMPONENT_LAUNCHER)})
    pod = template["spec"]
    pod["serviceAccountName"] = names.launcher(plan.name)
    pod["initContainers"] = [
        *(pod.get("initContainers") or []),
        build_kubectl_delivery(options),
        build_wait_for_workers(options),
    ]
    container = pod["containers"][0]
    container["env"] = [*(container.get("env") or []), *launcher_env()]
    container["volumeMounts"] = [*(container.get("volumeMounts") or []), kubectl_mount(), config_mount()]
    items = [
        (names.KUBEXEC_SCRIPT, names.SCRIPT_MODE),
        (names.HOSTFILE, names.HOSTFILE_MODE),
        (names.WAIT_SCRIPT, names.SCRIPT_MODE),
    ]
    kubectl_volume = {"name": names.KUBECTL_VOLUME, "emptyDir": {}}
    pod["volumes"] = [*(pod.get("volumes") or []), kubectl_volume, config_volume(items, plan.name)]
    join_gang(template, plan, options)
    return template


def build_launcher_job(plan: JobPlan, options: Options) -> dict[str, Any]:
    labels = names.role_labels(plan.name, names.ROLE_LAUNCHER)
    spec: dict[str, Any] = {"backoffLimit": plan.backoff_limit}
    if plan.active_deadline_seconds is not None:
        spec["activeDeadlineSeconds"] = plan.active_deadline_seconds
    spec["template"] = build_launcher_pod_template(plan, options)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": object_meta(plan, names.launcher(plan.name), names.COMPONENT_LAUNCHER, labels),
        "spec": spec,
    }
