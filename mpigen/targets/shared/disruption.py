"""Free disruptions: whether a compile makes them free at all (the option, and a Kubernetes version that
serves what it takes), the Job `podFailurePolicy` rule every Job-based target uses, and the warning when
the option is on but the version cannot honour it.

What a disruption needs from Kubernetes: a Job's `podFailurePolicy` (the `JobPodFailurePolicy` gate) and
the pod condition `DisruptionTarget` that the API server's eviction, the scheduler's preemption and the
taint manager set (the `PodDisruptionConditions` gate). Both were alpha and off in 1.25, beta and on from
1.26, GA in 1.31 (Kubernetes' feature-gate reference: JobPodFailurePolicy, PodDisruptionConditions;
both gates are gone from v1.37.2 pkg/features, locked on). An API server with a gate off drops the field in silence (the 1.25 schema
still lists it), so with `--kube-version 1.25` mpigen renders neither the podFailurePolicy nor the JobSet
rule on its reason, and says so: every restart counts there, as with `--no-free-disruptions`.
"""

from __future__ import annotations

from typing import Any

from mpigen.errors import Issue
from mpigen.options import Options

FIRST_KUBE_VERSION = (1, 26)
# The pod condition an eviction, a preemption or a drain sets (k8s v1.37.2 pkg/apis/core/types.go:
# DisruptionTarget), as a podFailurePolicy's onPodConditions pattern matches it.
DISRUPTED = {"type": "DisruptionTarget", "status": "True"}


def _served(kube_version: str | None) -> bool:
    if kube_version is None:  # the newest shipped
        return True
    return tuple(int(part) for part in kube_version.split(".")[:2]) >= FIRST_KUBE_VERSION


def free(options: Options) -> bool:
    """Whether this compile renders what makes a disruption free."""
    return options.free_disruptions and _served(options.kube_version)


def pod_failure_policy(action: str) -> dict[str, Any]:
    """A Job's podFailurePolicy with the one rule `action` (`FailJob`, `Ignore`) on a disrupted pod."""
    return {"rules": [{"action": action, "onPodConditions": [dict(DISRUPTED)]}]}


def version_warnings(options: Options) -> list[Issue]:
    """The option on, a `--kube-version` that cannot honour it: what is dropped, by name."""
    if not options.free_disruptions or _served(options.kube_version):
        return []
    message = f"--kube-version {options.kube_version}: Kubernetes serves a Job's podFailurePolicy and the pods' DisruptionTarget condition from 1.26 (beta, on by default), so no podFailurePolicy and no failure-policy rule on its reason are rendered and every restart counts, disruptions too (--no-free-disruptions says so without this warning)"
    return [Issue((), message, "warning")]
