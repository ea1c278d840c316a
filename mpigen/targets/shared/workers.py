"""The workers' pod template: the pods mpirun starts ranks in (the operator target wraps it in the
StatefulSet `<job>-worker`, mpigen.targets.operator.workloads; the volcano target in its worker task).

kubectl-exec transport, mpi-operator v0.2.0 `newWorker`: Parallel pod management, the role labels
merged over the template's labels, `restartPolicy: Always`, containers[0] replaced by `sleep 365d`
with the kubexec.sh mount (Open MPI checks the agent's path in every rank). training-operator
release-1.9 `newWorker` (v1, which creates bare pods; see docs/departures.md) replaces the command
only when the template gives none.

SSH transport, v0.8.2 `newWorker` (which creates bare pods; see docs/departures.md): containers[0]
runs `/usr/sbin/sshd -De` unless the template gives a command or args, gets `K_MPI_JOB_ROLE=worker`
and the SSH key volume; the pods' hostname and subdomain follow from the StatefulSet and its
`serviceName` `<job>`, and the DNS search list gains `<job>.<ns>.svc.<domain>` when the namespace is known.
"""

from __future__ import annotations

from typing import Any

from mpigen import names, tree
from mpigen.options import Options
from mpigen.plan import JobPlan, Ssh
from mpigen.targets.shared.gang import join_gang
from mpigen.targets.shared.meta import indexes_pods, label_pod
from mpigen.targets.shared.pods import add_ssh, config_mount, config_volume, host_network_dns


def _kubexec_worker(pod: dict[str, Any], plan: JobPlan) -> None:
    container = pod["containers"][0]
    # training-operator newWorker keeps a command the template gives (and its args); v0.2.0 never does.
    if not (plan.worker_keeps_command and container.get("command")):
        container["command"] = ["sleep"]
        container["args"] = ["365d"]
    container["volumeMounts"] = [*(container.get("volumeMounts") or []), config_mount()]
    volume = config_volume([(names.KUBEXEC_SCRIPT, names.SCRIPT_MODE)], plan.name)
    pod["volumes"] = [*(pod.get("volumes") or []), volume]


def _ssh_worker(pod: dict[str, Any], plan: JobPlan, ssh: Ssh, mounts_keys: bool) -> None:
    container = pod["containers"][0]
    if not container.get("command") and not container.get("args"):
        container["command"] = list(names.SSHD_COMMAND)
    add_ssh(pod, ssh, names.ROLE_WORKER, mount=mounts_keys)
    host_network_dns(pod)
    if plan.namespace is not None:
        search = names.dns_search(plan.service.name, plan.namespace, plan.hostnames.cluster_domain)
        dns = pod.setdefault("dnsConfig", {})
        dns["searches"] = [*(dns.get("searches") or []), search]


def build_worker_pod_template(
    plan: JobPlan, options: Options, *, mounts_keys: bool = True, gang: bool = True
) -> dict[str, Any]:
    """A worker's pod template; without the SSH key mount (`mounts_keys` False) or the gang scheduler's
    marks (`gang` False) when the run target's engine adds those itself."""
    template = tree.copy(plan.worker_template)
    if indexes_pods(plan):  # the operator's per-pod index: never one value for all
        template.get("metadata", {}).get("labels", {}).pop(names.REPLICA_INDEX_LABEL, None)
    label_pod(template, plan.labels.worker_pod, names.standard_labels(plan.name, names.COMPONENT_WORKER))
    pod = template["spec"]
    pod["restartPolicy"] = "Always"
    # Workers never call the API server: no token unless the template asks for one, or names its own
    # ServiceAccount (whose token it means to use).
    if not pod.get("serviceAccountName") and not pod.get("serviceAccount"):
        pod.setdefault("automountServiceAccountToken", False)
    if plan.ssh is None:
        _kubexec_worker(pod, plan)
    else:
        _ssh_worker(pod, plan, plan.ssh, mounts_keys)
    if gang:
        join_gang(template, plan, options, names.ROLE_WORKER)
    return template
