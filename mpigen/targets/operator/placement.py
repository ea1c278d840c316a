"""Placement on the operator target (`--topology`, mpigen.placement): pod affinity among the job's own pods.

The default kube-scheduler honours it with no add-on (kubernetes v1.37.2
pkg/scheduler/framework/plugins/interpodaffinity/filtering.go: `satisfyPodAffinity`): `required:KEY`
gives the launcher's and the workers' pod templates a `requiredDuringSchedulingIgnoredDuringExecution`
term over the labels both carry (mpigen.targets.shared.network.job_pod_labels) on topology key KEY, so
every pod goes to the domain of the first one placed (the first pod is let through when no pod matches
the term yet and it matches its own term); `preferred:KEY` gives a weighted
`preferredDuringSchedulingIgnoredDuringExecution` term instead (weight 100, the most there is). The
template's own affinity terms are kept; the job's term is appended. kube-scheduler places pod by pod,
so a domain too small for the job is not known in advance: the pods that do not fit it stay pending
(with a gang scheduler, the gang waits whole). Pod affinity has no slice: `slice:` is refused here.
"""

from __future__ import annotations

from typing import Any

from mpigen.errors import Issue
from mpigen.options import Options
from mpigen.placement import PREFERRED, REQUIRED, SLICE, Placement, placement
from mpigen.plan import JobPlan
from mpigen.targets.shared.network import job_pod_labels

# v1 WeightedPodAffinityTerm: weight in the range 1-100.
PREFERRED_WEIGHT = 100


def check_placement(options: Options) -> list[Issue]:
    """A slice the operator target cannot express."""
    wanted = placement(options.topology)
    if wanted is None or wanted.mode != SLICE:
        return []
    return [
        Issue(
            (),
            f"--topology (mpigen.dev/topology) {wanted} is refused on the {options.target} target: kube-scheduler's pod affinity keeps pods together but cannot group ranks into slices; use required: or preferred:, or --target jobset with --queue (Kueue's podset-slice-required-topology)",
        )
    ]


def _term(plan: JobPlan, wanted: Placement) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": job_pod_labels(plan)}, "topologyKey": wanted.key}


def _add_affinity(pod: dict[str, Any], plan: JobPlan, wanted: Placement) -> None:
    """The job's term after the template's own (new dicts: the template's may be the input's)."""
    if wanted.mode == REQUIRED:
        field, term = "requiredDuringSchedulingIgnoredDuringExecution", _term(plan, wanted)
    else:
        assert wanted.mode == PREFERRED
        field = "preferredDuringSchedulingIgnoredDuringExecution"
        term = {"weight": PREFERRED_WEIGHT, "podAffinityTerm": _term(plan, wanted)}
    affinity = dict(pod.get("affinity") or {})
    together = dict(affinity.get("podAffinity") or {})
    together[field] = [*(together.get(field) or []), term]
    affinity["podAffinity"] = together
    pod["affinity"] = affinity


def place_pods(objects: list[dict[str, Any]], plan: JobPlan, options: Options) -> list[dict[str, Any]]:
    """`objects` with the job's term added to every pod template of the launcher and the workers (those
    carrying the labels both share: not the clean-up or SSH key Jobs' pods). Changes them in place."""
    wanted = placement(options.topology)
    if wanted is None:
        return objects
    labels = job_pod_labels(plan)
    for obj in objects:
        template = obj.get("spec", {}).get("template")
        if not isinstance(template, dict):
            continue
        own = template.get("metadata", {}).get("labels") or {}
        if all(own.get(key) == value for key, value in labels.items()):
            _add_affinity(template.setdefault("spec", {}), plan, wanted)
    return objects
