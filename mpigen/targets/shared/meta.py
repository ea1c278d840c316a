"""What the operator target's builders share: an object's metadata, the kubectl-delivery image, a
RoleBinding subject, labels and annotations merged into a pod template."""

from __future__ import annotations

import json
from typing import Any, Protocol

from mpigen import names
from mpigen.errors import Issue
from mpigen.options import Options
from mpigen.plan import JobPlan


class Job(Protocol):
    """What an object's metadata reads of its job: a JobPlan, or the SSH key Job's record (shared/ssh.py)."""

    @property
    def name(self) -> str: ...

    @property
    def namespace(self) -> str | None: ...


def object_meta(plan: Job, name: str, component: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """metadata of an emitted object: its name, the job's namespace, the operator's labels (if any)
    and the standard `app.kubernetes.io/*` labels."""
    meta: dict[str, Any] = {"name": name}
    if plan.namespace is not None:
        meta["namespace"] = plan.namespace
    meta["labels"] = {**(labels or {}), **names.standard_labels(plan.name, component)}
    return meta


def kubectl_delivery_image(plan: JobPlan, options: Options) -> str:
    """The kubectl-delivery image (also the helper scripts' image): the option's, else the operator's default."""
    return options.kubectl_delivery_image or plan.kubectl_delivery.default_image


def service_account_subject(plan: Job, name: str) -> dict[str, str]:
    """A RoleBinding subject for the job's ServiceAccount `name`. With no namespace it names none:
    Kubernetes then reads it as the RoleBinding's own namespace (the API server requires a namespace
    only in ClusterRoleBindings), so the binding follows `kubectl apply -n` and kustomize `namespace:`."""
    subject = {"kind": "ServiceAccount", "name": name}
    if plan.namespace is not None:
        subject["namespace"] = plan.namespace
    return subject


def label_pod(template: dict[str, Any], operator_labels: dict[str, str], standard: dict[str, str]) -> None:
    """The operator's labels over the template's own, as the operator sets them; mpigen's standard
    `app.kubernetes.io/*` labels only where the template has none of its own (the operator sets none of
    those, so a pod keeps the user's: `template_warnings` says so). A template's `metadata.name` is
    dropped: the operator names each pod itself and never copies it."""
    meta = template.setdefault("metadata", {})
    meta.pop("name", None)
    own = meta.get("labels") or {}
    meta["labels"] = {
        **own,
        **operator_labels,
        **{key: value for key, value in standard.items() if key not in own},
    }


def indexes_pods(plan: JobPlan) -> bool:
    """The operator labels each pod with its own `training.kubeflow.org/replica-index` (v1, v2beta1)."""
    return names.JOB_NAME_LABEL in plan.labels.worker_pod


def template_warnings(plan: JobPlan) -> list[Issue]:
    """What a pod template says that the pods do not carry as written, or carry where mpigen's own
    value was expected."""
    warnings: list[Issue] = []
    for role, template, component in (
        (names.ROLE_LAUNCHER, plan.launcher_template, names.COMPONENT_LAUNCHER),
        (names.ROLE_WORKER, plan.worker_template, names.COMPONENT_WORKER),
    ):
        path = plan.template_paths.get(role, ("spec",)) + ("metadata", "labels")
        own = (template.get("metadata") or {}).get("labels") or {}
        for key, value in names.standard_labels(plan.name, component).items():
            if key in own and own[key] != value:
                message = f"kept on the {role} pods as written, as the operator keeps it; mpigen's \"{value}\" labels the job's other objects, so a selector on it does not find these pods"
                warnings.append(Issue((*path, key), message, "warning"))
        if role == names.ROLE_WORKER and names.REPLICA_INDEX_LABEL in own and indexes_pods(plan):
            message = "not copied to the workers: the operator sets each pod's own index there, and one StatefulSet template cannot (each worker's index is its pod name's suffix and its apps.kubernetes.io/pod-index label)"
            warnings.append(Issue((*path, names.REPLICA_INDEX_LABEL), message, "warning"))
    warnings += _replaced_fields(plan)
    own_hostname = plan.launcher_template.get("spec", {}).get("hostname")
    if (
        own_hostname
        and own_hostname != names.launcher(plan.name)
        and (plan.ssh is not None or plan.hostnames.launcher_first)
    ):
        message = f'"{own_hostname}" is replaced by "{names.launcher(plan.name)}", as the operator replaces it: the hostfile names the launcher so'
        warnings.append(
            Issue(
                plan.template_paths.get(names.ROLE_LAUNCHER, ("spec",)) + ("spec", "hostname"),
                message,
                "warning",
            )
        )
    return warnings


def _replaced_fields(plan: JobPlan) -> list[Issue]:
    """The kubectl-exec transport's replacements (mpi-operator v0.2.0 newWorker, newLauncher): the first
    worker container's command and args become `sleep 365d` (kept by the training-operator when the
    template gives a command), the launcher's serviceAccountName the job's own launcher account."""
    if plan.ssh is not None:
        return []
    warnings = []
    worker = plan.worker_template.get("spec", {})
    containers = worker.get("containers") or [{}]
    first = containers[0] if isinstance(containers[0], dict) else {}
    at = plan.template_paths.get(names.ROLE_WORKER, ("spec",)) + ("spec", "containers", 0)
    # v1alpha1's one template serves both roles: its command is the launcher's, by design.
    shared = plan.template_paths.get(names.ROLE_WORKER) == plan.template_paths.get(names.ROLE_LAUNCHER)
    if not shared and not (plan.worker_keeps_command and first.get("command")):
        for field, value in (("command", ["sleep"]), ("args", ["365d"])):
            if first.get(field) is not None and first[field] != value:
                message = f"replaced by {json.dumps(value)} on the worker pods, as the operator replaces it: ranks are started in them by kubectl exec"
                warnings.append(Issue((*at, field), message, "warning"))
    own = plan.launcher_template.get("spec", {}).get("serviceAccountName")
    account = plan.launcher_service_account or names.launcher(plan.name)
    if own and own != account:
        message = f'"{own}" is replaced by "{account}", as the operator replaces it: the launcher runs kubectl exec with the job\'s own Role'
        path = plan.template_paths.get(names.ROLE_LAUNCHER, ("spec",)) + ("spec", "serviceAccountName")
        warnings.append(Issue(path, message, "warning"))
    return warnings


def identity_warnings(plan: JobPlan) -> list[Issue]:
    """A template's own `hostname` or `subdomain` that the pods do not keep on the operator's shape: the
    StatefulSet controller gives each worker its pod name and the set's `serviceName` (Kubernetes 1.37
    pkg/controller/statefulset/stateful_set_utils.go: initIdentity); an SSH launcher's
    subdomain is the job's Service (the operator replaces both the same way, v0.8.2 newWorker and
    newLauncherPodTemplate). The launcher's `hostname` is template_warnings'."""
    warnings = []
    worker = plan.worker_template.get("spec", {})
    worker_at = plan.template_paths.get(names.ROLE_WORKER, ("spec",)) + ("spec",)
    given = {"hostname": "each worker's pod name", "subdomain": f'"{plan.service.name}"'}
    for field, value in given.items():
        if plan.template_paths.get(names.ROLE_WORKER) != plan.template_paths.get(
            names.ROLE_LAUNCHER
        ) and worker.get(field):
            message = f"replaced by {value} on the worker pods: the StatefulSet sets each pod's {field}"
            warnings.append(Issue((*worker_at, field), message, "warning"))
    own = plan.launcher_template.get("spec", {}).get("subdomain")
    if plan.ssh is not None and own and own != plan.service.name:
        message = f'{json.dumps(own)} is replaced by "{plan.service.name}", as the operator replaces it: the hostfile names the launcher in that domain'
        path = plan.template_paths.get(names.ROLE_LAUNCHER, ("spec",)) + ("spec", "subdomain")
        warnings.append(Issue(path, message, "warning"))
    return warnings


def merge_pod_labels(template: dict[str, Any], labels: dict[str, str]) -> None:
    """Add `labels` over the template's own (v0.2.0: "keep the labels which are set in PodTemplate")."""
    meta = template.setdefault("metadata", {})
    meta["labels"] = {**(meta.get("labels") or {}), **labels}


def merge_pod_annotations(template: dict[str, Any], annotations: dict[str, str]) -> None:
    meta = template.setdefault("metadata", {})
    meta["annotations"] = {**(meta.get("annotations") or {}), **annotations}
