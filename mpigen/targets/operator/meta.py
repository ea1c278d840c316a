"""What the operator target's builders share: an object's metadata, the kubectl-delivery image, a
RoleBinding subject, labels and annotations merged into a pod template."""

from __future__ import annotations

from typing import Any

from mpigen import names
from mpigen.options import Options
from mpigen.plan import JobPlan


def object_meta(plan: JobPlan, name: str, component: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
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


def service_account_subject(plan: JobPlan, name: str) -> dict[str, str]:
    """A RoleBinding subject for the job's ServiceAccount `name`. With no namespace it names none:
    Kubernetes then reads it as the RoleBinding's own namespace (the API server requires a namespace
    only in ClusterRoleBindings), so the binding follows `kubectl apply -n` and kustomize `namespace:`."""
    subject = {"kind": "ServiceAccount", "name": name}
    if plan.namespace is not None:
        subject["namespace"] = plan.namespace
    return subject


def merge_pod_labels(template: dict[str, Any], labels: dict[str, str]) -> None:
    """Add `labels` over the template's own (v0.2.0: "keep the labels which are set in PodTemplate")."""
    meta = template.setdefault("metadata", {})
    meta["labels"] = {**(meta.get("labels") or {}), **labels}


def merge_pod_annotations(template: dict[str, Any], annotations: dict[str, str]) -> None:
    meta = template.setdefault("metadata", {})
    meta["annotations"] = {**(meta.get("annotations") or {}), **annotations}
