"""What a workload asks of its pod template beyond pod validation: the restart policies it runs and
activeDeadlineSeconds, which only a Job's pods may have (Kubernetes 1.37 pkg/apis/apps/validation:
ValidateStatefulSetSpec, ValidateDaemonSetSpec, ValidatePodTemplateSpecForReplicaSet;
pkg/apis/batch/validation: validateJobSpec). An empty restartPolicy is defaulted to Always first."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from mpigen.checks.pod.field import Violation, forbidden, not_supported, required
from mpigen.checks.pod.view import Pod, text


def _always(kind: str) -> Callable[[Pod], Iterator[Violation]]:
    def check(pod: Pod) -> Iterator[Violation]:
        policy = text(pod.spec.get("restartPolicy")) or "Always"
        if policy != "Always":
            yield not_supported(pod.path("restartPolicy"), policy, ("Always",))
        if pod.spec.get("activeDeadlineSeconds") is not None:
            yield forbidden(
                pod.path("activeDeadlineSeconds"), f"activeDeadlineSeconds in {kind} is not Supported"
            )

    return check


def job(pod: Pod) -> Iterator[Violation]:
    policy = text(pod.spec.get("restartPolicy"))
    if policy in ("", "Always"):
        yield required(pod.path("restartPolicy"), 'valid values: "OnFailure", "Never"')
    elif policy not in ("OnFailure", "Never"):
        yield not_supported(pod.path("restartPolicy"), policy, ("OnFailure", "Never"))


# By API group and kind, as mpigen.checks.pod.TEMPLATE_PATHS.
WORKLOAD_RULES: dict[tuple[str, str], Callable[[Pod], Iterator[Violation]]] = {
    ("apps", "StatefulSet"): _always("StatefulSet"),
    ("apps", "DaemonSet"): _always("DaemonSet"),
    ("apps", "ReplicaSet"): _always("ReplicaSet"),
    ("apps", "Deployment"): _always("ReplicaSet"),
    ("batch", "Job"): job,
    ("batch", "CronJob"): job,
}
