"""Builders: one small function per Kubernetes object, each turning a `JobPlan` into a plain dict.

`canonical` gives every generated object the same key order, so output is stable whatever order the
input used: `apiVersion, kind, metadata` at the top, `name` (and in metadata `namespace`) first in
every mapping, everything else sorted as `kubectl get -o yaml` sorts it. List order is never changed:
containers, env and command order mean something.
"""

from __future__ import annotations

from typing import Any

from mpigen import names
from mpigen.options import Options
from mpigen.plan import JobPlan

_TOP = {"apiVersion": 0, "kind": 1, "metadata": 2}
_INNER = {"name": 0, "namespace": 1}


def _ordered(value: dict[str, Any], rank: dict[str, int]) -> list[str]:
    return sorted(value, key=lambda key: (rank.get(key, len(rank)), key))


def _inner_order(value: dict[str, Any]) -> list[str]:
    """`_ordered(value, _INNER)`, without a key function for every key (most mappings have neither)."""
    keys = sorted(value)
    if "name" not in value and "namespace" not in value:
        return keys
    return [key for key in _INNER if key in value] + [key for key in keys if key not in _INNER]


def _canonical(value: Any) -> Any:
    if isinstance(value, dict):
        return _mapping(value, _inner_order(value))
    if isinstance(value, list):
        return _sequence(value)
    return value


# The two below look at an item's type before recursing: most items are strings and numbers, and a
# call for each of them was most of the time spent building many jobs.
def _mapping(value: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    out = {}
    for key in keys:
        item = value[key]
        if isinstance(item, dict):
            item = _mapping(item, _inner_order(item))
        elif isinstance(item, list):
            item = _sequence(item)
        out[key] = item
    return out


def _sequence(value: list[Any]) -> list[Any]:
    return [_canonical(item) if isinstance(item, dict | list) else item for item in value]


def canonical(obj: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of a Kubernetes object in mpigen's fixed key order."""
    return _mapping(obj, _ordered(obj, _TOP))


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
