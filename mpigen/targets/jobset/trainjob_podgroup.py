"""The gang of a TrainJob (Kubeflow Trainer v2.3.0): the PodGroup its runtime's `podGroupPolicy` asks for, as
Trainer's plugins build it. `coscheduling` (pkg/runtime/framework/plugins/coscheduling): a scheduler-plugins
PodGroup of every pod of every job, their requests (after resourcesPerNode) and `scheduleTimeoutSeconds`;
`volcano` (plugins/volcano `Build`): a Volcano PodGroup of every pod and their requests, the queue of the
JobSet's `scheduling.volcano.sh/queue-name` annotation, the pods' priorityClassName and the runtime's
`networkTopology`. The pod label or annotation that joins each pod to its group is set with the JobSet
(mpigen.targets.jobset.trainjob).
"""

from __future__ import annotations

from typing import Any

from mpigen import names
from mpigen.plan import TrainPlan
from mpigen.quantity import QuantitySum, format_quantity


def _pod_requests(pod: dict[str, Any]) -> QuantitySum:
    """Kubernetes resourcehelpers.PodRequests: the containers' requests summed, each init container's
    (a restartable one, a sidecar, is added) at least."""
    total = QuantitySum()
    for container in pod.get("containers") or []:
        for name, value in ((container.get("resources") or {}).get("requests") or {}).items():
            total.add(name, value, 1)
    for container in pod.get("initContainers") or []:
        requests = (container.get("resources") or {}).get("requests") or {}
        for name, value in requests.items():
            if container.get("restartPolicy") == "Always":
                total.add(name, value, 1)
                continue
            single = QuantitySum()
            single.add(name, value, 1)
            if name not in total.totals or single.totals[name][0] > total.totals[name][0]:
                total.totals[name] = single.totals[name]
    return total


def build_pod_group(plan: TrainPlan, counts: list[int], meta: dict[str, Any]) -> list[dict[str, Any]]:
    """The PodGroup `meta` names for the runtime's podGroupPolicy (none without one); `counts` each
    replicated job's pods."""
    if plan.volcano is not None:
        return [build_volcano_pod_group(plan, counts, meta)]
    if plan.schedule_timeout_seconds is None:
        return []
    total = _requests(plan, counts)
    spec: dict[str, Any] = {"minMember": sum(counts), "scheduleTimeoutSeconds": plan.schedule_timeout_seconds}
    if total.totals:
        spec["minResources"] = total.result()
    return [
        {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": meta, "spec": spec}
    ]


def _requests(plan: TrainPlan, counts: list[int]) -> QuantitySum:
    """Every pod's requests times its job's pod count (the pod sets' SinglePodRequests)."""
    total = QuantitySum()
    for job, count in zip(plan.jobset_spec.get("replicatedJobs") or [], counts, strict=True):
        pod = job["template"]["spec"].get("template", {}).get("spec") or {}
        for name, (value, fmt) in _pod_requests(pod).totals.items():
            total.add(name, _as_quantity(value, fmt), count)
    return total


def build_volcano_pod_group(plan: TrainPlan, counts: list[int], meta: dict[str, Any]) -> dict[str, Any]:
    """Trainer v2.3.0's Volcano plugin Build: minMember every pod, minResources their requests, the queue
    from the JobSet's annotation, the last pod template's priorityClassName, the runtime's networkTopology."""
    assert plan.volcano is not None
    spec: dict[str, Any] = {"minMember": sum(counts)}
    total = _requests(plan, counts)
    if total.totals:
        spec["minResources"] = total.result()
    if names.VOLCANO_QUEUE_ANNOTATION in plan.annotations:
        spec["queue"] = plan.annotations[names.VOLCANO_QUEUE_ANNOTATION]
    for job in plan.jobset_spec.get("replicatedJobs") or []:
        priority = (job["template"]["spec"].get("template", {}).get("spec") or {}).get("priorityClassName")
        if priority is not None:
            spec["priorityClassName"] = priority
    topology = plan.volcano.get("networkTopology")
    if topology is not None:
        spec["networkTopology"] = {k: topology[k] for k in ("mode", "highestTierAllowed") if k in topology}
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": meta, "spec": spec}


def _as_quantity(value: Any, fmt: str) -> str:
    return format_quantity(value, fmt)
