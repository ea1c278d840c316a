"""The pod templates of the JobSet's two replicated jobs.

Workers: the operator target's worker container (kubexec: `sleep 365d` unless the version keeps the
template's command, with kubexec.sh mounted; SSH: `sshd -De` unless the template gives a command, the
key mounted), `restartPolicy: Never` (a Job allows no `Always`; a failed worker fails its Job and JobSet
restarts the whole gang). With SSH and a namespace, the DNS search list gains
`<job>.<ns>.svc.<domain>` as on the operator target: the launcher finds the workers by the hostfile's
full names, but MPICH's and Intel MPI's proxies on the workers call the launcher back by its bare
hostname `<job>-launcher-0-0`, which only that entry completes (tests/e2e/test_e2e_jobset.py).

Launcher: the template with the implementation's variables, the ConfigMap, and for kubectl exec the
kubectl-delivery init container, the launcher ServiceAccount and its restart attempt (downward API,
for kubexec.sh). No wait-for-workers container: the replicated job `dependsOn` the workers Ready.

Hostnames and subdomain are JobSet's and the Job controller's (mpigen.targets.jobset.hosts); a
template's own are dropped, with a warning (mpigen.targets.jobset.checks).
"""

from __future__ import annotations

from typing import Any

from mpigen import names, tree
from mpigen.options import Options
from mpigen.plan import JobPlan
from mpigen.targets.jobset import names as jobset_names
from mpigen.targets.jobset.config import launcher_service_account
from mpigen.targets.jobset.placement import annotate
from mpigen.targets.shared import mpi_env
from mpigen.targets.shared.gang import join_gang
from mpigen.targets.shared.meta import indexes_pods, label_pod
from mpigen.targets.shared.pods import (
    add_ssh,
    build_kubectl_delivery,
    config_mount,
    config_volume,
    host_network_dns,
    kubectl_mount,
)

OWN_NAMING = ("hostname", "subdomain")


def _without_naming(template: dict[str, Any]) -> dict[str, Any]:
    # A template's `null`s left out: a built-in object reads one as unset, a JobSet (a custom resource
    # with a structural schema) refuses it (`command: null`, as in mpi-operator's pi-intel example).
    copied: dict[str, Any] = tree.without_nulls(template)
    for key in OWN_NAMING:
        copied.setdefault("spec", {}).pop(key, None)
    return copied


def build_worker_template(plan: JobPlan, options: Options) -> dict[str, Any]:
    template = _without_naming(plan.worker_template)
    if indexes_pods(plan):
        template.get("metadata", {}).get("labels", {}).pop(names.REPLICA_INDEX_LABEL, None)
    label_pod(template, plan.labels.worker_pod, names.standard_labels(plan.name, names.COMPONENT_WORKER))
    pod = template["spec"]
    pod["restartPolicy"] = "Never"
    if not pod.get("serviceAccountName") and not pod.get("serviceAccount"):
        pod.setdefault("automountServiceAccountToken", False)
    container = pod["containers"][0]
    if plan.ssh is None:
        if not (plan.worker_keeps_command and container.get("command")):
            container["command"], container["args"] = ["sleep"], ["365d"]
        container["volumeMounts"] = [*(container.get("volumeMounts") or []), config_mount()]
        pod["volumes"] = [
            *(pod.get("volumes") or []),
            config_volume([(names.KUBEXEC_SCRIPT, names.SCRIPT_MODE)], plan.name),
        ]
    else:
        if not container.get("command") and not container.get("args"):
            container["command"] = list(names.SSHD_COMMAND)
        add_ssh(pod, plan.ssh, names.ROLE_WORKER)
        host_network_dns(pod)
        if plan.namespace is not None:  # the JobSet's subdomain is the job's name
            search = names.dns_search(plan.name, plan.namespace, plan.hostnames.cluster_domain)
            dns = pod.setdefault("dnsConfig", {})
            dns["searches"] = [*(dns.get("searches") or []), search]
    join_gang(template, plan, options, names.ROLE_WORKER)
    annotate(template, plan, options, names.ROLE_WORKER)
    return template


def _config_items(plan: JobPlan) -> list[tuple[str, int]]:
    items = [(names.KUBEXEC_SCRIPT, names.SCRIPT_MODE)] if plan.kubexec else []
    items.append((names.HOSTFILE, names.HOSTFILE_MODE))
    return items + ([(names.DISCOVER_HOSTS_SCRIPT, names.SCRIPT_MODE)] if plan.discover_hosts else [])


def _env(plan: JobPlan, own: list[dict[str, Any]]) -> list[dict[str, Any]]:
    env: list[dict[str, Any]] = mpi_env.launcher_env(
        plan.kubexec, plan.implementation, plan.slots_per_worker, _names(own)
    )
    if plan.blank_launcher_gpus:
        env += [{"name": name} for name in names.NVIDIA_ENV]
    if plan.hydra_bootstrap:
        env += mpi_env.hydra_bootstrap_env(set(_names(own)))
    if plan.kubexec:
        field = f"metadata.labels['{jobset_names.RESTART_ATTEMPT_LABEL}']"
        env.append(
            {"name": jobset_names.RESTART_ATTEMPT_ENV, "valueFrom": {"fieldRef": {"fieldPath": field}}}
        )
    return env


def build_launcher_template(plan: JobPlan, options: Options) -> dict[str, Any]:
    template = _without_naming(plan.launcher_template)
    label_pod(template, plan.labels.launcher_pod, names.standard_labels(plan.name, names.COMPONENT_LAUNCHER))
    pod = template["spec"]
    container = pod["containers"][0]
    if plan.kubexec:
        pod["serviceAccountName"] = launcher_service_account(plan)
        pod["initContainers"] = [*(pod.get("initContainers") or []), build_kubectl_delivery(plan, options)]
    else:
        assert plan.ssh is not None
        # SSH: the launcher calls no API (JobSet's dependsOn waits for the workers), so no token, unless
        # the template names a ServiceAccount or says itself.
        if not pod.get("serviceAccountName") and not pod.get("serviceAccount"):
            pod.setdefault("automountServiceAccountToken", False)
        host_network_dns(pod)
        add_ssh(pod, plan.ssh, names.ROLE_LAUNCHER)
    own_env = container.get("env") or []
    container["env"] = [*own_env, *_env(plan, own_env)]
    mounts = [kubectl_mount(), config_mount()] if plan.kubexec else [config_mount()]
    container["volumeMounts"] = [*(container.get("volumeMounts") or []), *mounts]
    volumes = [{"name": names.KUBECTL_VOLUME, "emptyDir": {}}] if plan.kubexec else []
    pod["volumes"] = [*(pod.get("volumes") or []), *volumes, config_volume(_config_items(plan), plan.name)]
    join_gang(template, plan, options, names.ROLE_LAUNCHER)
    annotate(template, plan, options, names.ROLE_LAUNCHER)
    return template


def _names(env: list[dict[str, Any]]) -> frozenset[str]:
    return frozenset(str(var.get("name")) for var in env if isinstance(var, dict))
