"""The launcher's pod template: the pod that runs mpirun (the operator target wraps it in the Job
`<job>-launcher`, mpigen.targets.operator.workloads; the volcano target in its launcher task).

kubectl-exec transport, mpi-operator v0.2.0 `newLauncher`: the launcher ServiceAccount, an init
container that delivers kubectl into `/opt/kube`, Open MPI pointed at kubexec.sh and the hostfile
through `OMPI_MCA_*` variables, and both volumes. training-operator release-1.9 `newLauncher` (v1)
adds to the kubectl-delivery init container (NAMESPACE, the ConfigMap mount, IfNotPresent, fixed
resources), blanks the launcher's GPUs unless it asks for one, points Intel MPI's Hydra at kubexec.sh
and mounts discover_hosts.sh; a launcher that is a host of the hostfile gets its pod name as hostname,
so that Open MPI starts its ranks locally rather than through kubexec.sh.

SSH transport, v0.8.2 `newLauncherJob` / `newLauncherPodTemplate`: hostname `<job>-launcher` and
subdomain `<job>`, `K_MPI_JOB_ROLE=launcher` and the implementation's variables (mpigen/targets/shared/mpi_env.py),
GPUs blanked unless the launcher is a worker too, the SSH key and the ConfigMap mounted, and the run
policy's ttl, deadline, backoff limit and suspend on the Job.
"""

from __future__ import annotations

from typing import Any

from mpigen import names, tree
from mpigen.options import Options
from mpigen.plan import JobPlan
from mpigen.targets.shared import mpi_env
from mpigen.targets.shared.gang import join_gang
from mpigen.targets.shared.hardening import (
    api_token_mount,
    api_token_volume,
    harden,
    home_env,
    tmp_mount,
    tmp_volume,
)
from mpigen.targets.shared.meta import kubectl_delivery_image, label_pod
from mpigen.targets.shared.pods import (
    add_ssh,
    build_kubectl_delivery,
    config_mount,
    config_volume,
    host_network_dns,
    kubectl_mount,
)
from mpigen.targets.shared.rbac import launcher_service_account


def build_wait_for_workers(plan: JobPlan, options: Options) -> dict[str, Any]:
    """Init container that holds the launcher back until every worker pod is Ready.

    v0.2.0 creates the launcher Job only once the worker StatefulSet reports all replicas ready
    (v0.8.2 with WaitForWorkersReady: once every worker pod is Ready); here the Job exists from the
    start and this container does the waiting with the launcher Role's `get` on the worker pods:
    after `kubectl-delivery` with the delivered kubectl, or (SSH transport) with the kubectl of the
    kubectl-delivery image. On timeout it fails, and the Job's backoffLimit applies.
    """
    mounts = [kubectl_mount(), config_mount()] if plan.kubexec else [config_mount()]
    if projects_token(plan):
        mounts.append(api_token_mount())
    container = {
        "name": names.WAIT_FOR_WORKERS,
        "image": kubectl_delivery_image(plan, options),
        "command": ["/bin/sh", f"{names.CONFIG_MOUNT_PATH}/{names.WAIT_SCRIPT}"],
        "env": [home_env()],
        "volumeMounts": [*mounts, tmp_mount()],
    }
    return harden(container)


def _keeps_token_as_written(plan: JobPlan) -> bool:
    """A template that names its own ServiceAccount or says whether to mount its token decides; so
    does the kubectl-exec transport, whose launcher container itself calls the API (kubexec.sh), as may
    the kubectl-delivery image."""
    spec = plan.launcher_template.get("spec") or {}
    return plan.kubexec or any(key in spec for key in ("serviceAccountName", "automountServiceAccountToken"))


def projects_token(plan: JobPlan) -> bool:
    """The launcher pod mounts no token, but into `wait-for-workers`, the one container that calls the
    API (SSH transport, WaitForWorkersReady)."""
    return plan.waits_for_workers and not _keeps_token_as_written(plan)


def _limit_token(plan: JobPlan, pod: dict[str, Any]) -> list[dict[str, Any]]:
    """No token in the launcher pod's containers that do not call the API; the volumes it then needs."""
    if _keeps_token_as_written(plan):
        return []
    pod["automountServiceAccountToken"] = False
    return [api_token_volume()] if projects_token(plan) else []


def _config_items(plan: JobPlan) -> list[tuple[str, int]]:
    items = [(names.KUBEXEC_SCRIPT, names.SCRIPT_MODE)] if plan.kubexec else []
    items.append((names.HOSTFILE, names.HOSTFILE_MODE))
    if plan.discover_hosts:
        items.append((names.DISCOVER_HOSTS_SCRIPT, names.SCRIPT_MODE))
    return items + ([(names.WAIT_SCRIPT, names.SCRIPT_MODE)] if plan.waits_for_workers else [])


def _env(plan: JobPlan, own: list[dict[str, Any]]) -> list[dict[str, str]]:
    env = mpi_env.launcher_env(plan.kubexec, plan.implementation, plan.slots_per_worker, _names(own))
    if plan.blank_launcher_gpus:
        # A launcher that is not a host of the hostfile must not grab the node's GPUs (value left empty).
        env += [{"name": name} for name in names.NVIDIA_ENV]
    if plan.hydra_bootstrap:
        env += mpi_env.hydra_bootstrap_env(set(_names(own)))
    return env


def build_launcher_pod_template(
    plan: JobPlan, options: Options, *, names_pod: bool = True, mounts_keys: bool = True, gang: bool = True
) -> dict[str, Any]:
    """The launcher's pod template. A target whose engine names the pod and its DNS domain itself
    (`names_pod` False), mounts the SSH keys itself (`mounts_keys` False) or gang-schedules it itself
    (`gang` False) leaves those out."""
    template = tree.copy(plan.launcher_template)
    label_pod(template, plan.labels.launcher_pod, names.standard_labels(plan.name, names.COMPONENT_LAUNCHER))
    pod = template["spec"]
    if plan.launcher_needs_api:
        pod["serviceAccountName"] = launcher_service_account(plan)
    inits = [build_kubectl_delivery(plan, options)] if plan.kubexec else []
    inits += [build_wait_for_workers(plan, options)] if plan.waits_for_workers else []
    if inits:
        pod["initContainers"] = [*(pod.get("initContainers") or []), *inits]
    container = pod["containers"][0]
    if names_pod and (plan.ssh is not None or plan.hostnames.launcher_first):
        pod["hostname"] = names.launcher(plan.name)
    if plan.ssh is not None:
        if names_pod:
            pod["subdomain"] = plan.service.name
        host_network_dns(pod)
        add_ssh(pod, plan.ssh, names.ROLE_LAUNCHER, mount=mounts_keys)
    own_env = container.get("env") or []
    container["env"] = [*own_env, *_env(plan, own_env)]
    mounts = [kubectl_mount(), config_mount()] if plan.kubexec else [config_mount()]
    container["volumeMounts"] = [*(container.get("volumeMounts") or []), *mounts]
    volumes = [{"name": names.KUBECTL_VOLUME, "emptyDir": {}}] if plan.kubexec else []
    volumes += _limit_token(plan, pod)
    volumes += [tmp_volume()] if plan.waits_for_workers else []
    pod["volumes"] = [*(pod.get("volumes") or []), *volumes, config_volume(_config_items(plan), plan.name)]
    if gang:
        join_gang(template, plan, options, names.ROLE_LAUNCHER)
    return template


def _names(env: list[dict[str, Any]]) -> frozenset[str]:
    return frozenset(str(var.get("name")) for var in env if isinstance(var, dict))
