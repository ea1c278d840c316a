"""The ConfigMap `<job>-config` and the launcher's identity on the jobset target.

The ConfigMap holds the hostfile (the JobSet pods' host names, in the implementation's syntax),
discover_hosts.sh when the job's version has one, kubexec.sh (kubectl-exec transport) and the SSH key
script (v2beta1 without --ssh-secret). No wait-for-workers script: the launcher's `dependsOn` waits.

The launcher needs the API only for kubectl exec (v1alpha1, v1alpha2, v1). JobSet's pods have random
name suffixes, so the Role cannot list them by `resourceNames`: `get` and `list` on pods and `create` on
`pods/exec` in the whole namespace (mpigen says so on stderr at every render; docs/departures.md). The
cluster-wide admission policy of mpigen.targets.jobset.exec_policy narrows the exec to the job's own pods.
"""

from __future__ import annotations

from typing import Any

from mpigen import names
from mpigen.plan import JobPlan
from mpigen.targets.jobset import names as jobset_names
from mpigen.targets.jobset.hosts import hosts, launcher_host
from mpigen.targets.shared.meta import object_meta, service_account_subject
from mpigen.targets.shared.ssh import generates_keys, render_keygen
from mpigen.targets.shared.templating import render

SEPARATORS = {"slots=": " slots=", ":": ":"}


def render_hostfile(plan: JobPlan) -> str:
    separator = SEPARATORS[plan.hostnames.slot_syntax]
    return render("hostfile.j2", hosts=hosts(plan), separator=separator, slots=plan.slots_per_worker)


def render_discover_hosts(plan: JobPlan) -> str:
    listed = hosts(plan)
    if plan.discover_hosts == "slots":
        listed = [f"{host}:{plan.slots_per_worker}" for host in listed]
    return render("discover_hosts.sh.j2", hosts=listed)


def render_kubexec(plan: JobPlan) -> str:
    """kubexec.sh: a host name to the Running pod of the launcher's restart attempt, then kubectl exec."""
    return render(
        "kubexec-jobset.sh.j2",
        kubectl=names.KUBECTL_PATH,
        container=plan.exec_container,
        launcher_host_prefix=launcher_host(plan)[: -len("0")],
        launcher_job=jobset_names.LAUNCHER_RJOB,
        worker_job=jobset_names.WORKER_RJOB,
        selector=f"{jobset_names.JOBSET_NAME_LABEL}={plan.name}",
        job_label=jobset_names.RJOB_LABEL,
        index_label=jobset_names.COMPLETION_INDEX_LABEL,
        attempt_label=jobset_names.RESTART_ATTEMPT_LABEL,
    )


def config_scripts(plan: JobPlan) -> dict[str, str]:
    """The ConfigMap's entries that do not grow with the worker count."""
    data = {}
    if plan.kubexec:
        data[names.KUBEXEC_SCRIPT] = render_kubexec(plan)
    if generates_keys(plan):
        data[names.KEYGEN_SCRIPT] = render_keygen(plan)
    return data


def config_data(plan: JobPlan) -> dict[str, str]:
    data = {names.HOSTFILE: render_hostfile(plan)}
    if plan.discover_hosts:
        data[names.DISCOVER_HOSTS_SCRIPT] = render_discover_hosts(plan)
    return {**data, **config_scripts(plan)}


def build_config_map(plan: JobPlan) -> list[dict[str, Any]]:
    meta = object_meta(plan, names.config_map(plan.name), names.COMPONENT_CONFIG, plan.labels.other)
    return [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": config_data(plan)}]


def launcher_service_account(plan: JobPlan) -> str:
    return plan.launcher_service_account or names.launcher(plan.name)


def _meta(plan: JobPlan) -> dict[str, Any]:
    return object_meta(plan, names.launcher(plan.name), names.COMPONENT_RBAC, plan.labels.other)


def build_launcher_service_account(plan: JobPlan) -> list[dict[str, Any]]:
    if not plan.kubexec or plan.launcher_service_account is not None:
        return []
    return [{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(plan)}]


def launcher_role(plan: JobPlan) -> dict[str, Any] | None:
    """kubectl exec: find a pod by its labels (list), read it (get; `kubectl exec` reads the pod
    first) and exec into it. Namespace-wide: JobSet's pod names are not known in advance."""
    if not plan.kubexec or plan.workers == 0:
        return None
    rules = [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]},
        {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create"]},
    ]
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": _meta(plan),
        "rules": rules,
    }


def build_launcher_role(plan: JobPlan) -> list[dict[str, Any]]:
    role = launcher_role(plan)
    return [] if role is None else [role]


def build_launcher_role_binding(plan: JobPlan) -> list[dict[str, Any]]:
    if launcher_role(plan) is None:
        return []
    subject = service_account_subject(plan, launcher_service_account(plan))
    roleref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": names.launcher(plan.name)}
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": _meta(plan),
            "subjects": [subject],
            "roleRef": roleref,
        }
    ]
