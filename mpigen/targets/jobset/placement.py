"""Placement on the jobset target (`--topology`, mpigen.placement): Kueue's topology-aware scheduling.

Kueue (v0.19.2) admits the JobSet as one Workload, one pod set per replicated job, and reads each pod
template's annotations (`pkg/controller/jobframework/tas.go`: `NewPodSetTopologyRequest`):
- `required:KEY` / `preferred:KEY`: `kueue.x-k8s.io/podset-required-topology` (or
  `-preferred-topology`) KEY on both templates and one `kueue.x-k8s.io/podset-group-name`, so that the
  launcher's pod set and the workers' are fitted into one domain together (a group is exactly two pod
  sets, one of them of one pod, both asking the same: `ValidatePodSetGroupingTopology`).
- `slice:KEY:SIZE`: `kueue.x-k8s.io/podset-slice-required-topology` KEY and `podset-slice-size` SIZE on the
  workers' template (a group may not hold slices); the launcher is placed on its own.

Rank order: Kueue's topology ungater hands out a pod set's domains in order, by rank = the pod's
index label (the JobSet's `batch.kubernetes.io/job-completion-index`, 0..N-1) minus an offset. In a
group it counts the smaller pod set (the launcher, rank 0) first and gives the workers offset 1
(`pkg/controller/tas/topology_ungater.go`: `rankOffsets`), which would make worker 0 rank -1 and let
Kueue place the workers in no order; `kueue.x-k8s.io/pod-index-offset: "-1"` on the workers' template
cancels it, so worker i (the hostfile's i-th worker line) gets the i-th slot of the workers'
assignment, and consecutive ranks share a domain. A slice needs no offset (no group).

Kueue's own webhook validation of these annotations (`tas_validation.go`: `ValidateTASPodSetRequest`,
`ValidateSliceSizeAnnotationUpperBound`, `ValidatePodSetGroupingTopology`) runs here over the
templates as they will be (the input's annotations and mpigen's), as render-time errors.

With `--gang-scheduler kubernetes` (mpigen.targets.shared.workload; no Kueue: it refuses `--queue`),
`required:KEY` needs no queue: the workers' PodGroup carries `schedulingConstraints.topology` KEY
(kube-scheduler's topologyaware plugin places the whole gang in one domain), and the launcher, outside the
gang and made only once the workers are Ready (dependsOn), gets a required pod affinity to the workers'
pods on KEY, so it joins their domain. `preferred:` and `slice:` have no word there (the PodGroup's
constraint is always required and whole) and no Kueue to say them: refused.
"""

from __future__ import annotations

import re
from typing import Any

from mpigen import names
from mpigen.errors import Issue
from mpigen.inputs import trainer_names
from mpigen.options import Options
from mpigen.placement import REQUIRED, SLICE, label_key_problem, placement
from mpigen.plan import JobPlan
from mpigen.targets.jobset import names as jobset_names
from mpigen.targets.shared.workload import used as native_gang_used

_KUEUE = "kueue.x-k8s.io/"
REQUIRED_TOPOLOGY = _KUEUE + "podset-required-topology"
PREFERRED_TOPOLOGY = _KUEUE + "podset-preferred-topology"
UNCONSTRAINED_TOPOLOGY = _KUEUE + "podset-unconstrained-topology"
SLICE_TOPOLOGY = _KUEUE + "podset-slice-required-topology"
SLICE_SIZE = _KUEUE + "podset-slice-size"
SLICE_CONSTRAINTS = _KUEUE + "podset-slice-required-topology-constraints"
GROUP_NAME = _KUEUE + "podset-group-name"
POD_INDEX_OFFSET = _KUEUE + "pod-index-offset"
# The group of the launcher's and the workers' pod sets (any name that is not a number).
GROUP = "mpi-job"
_INT32_MAX = 2**31 - 1
# Only Kueue reads the annotations on this target: without a queue they would be written for nobody.
_WITHOUT_QUEUE = Issue(
    (),
    "--topology (mpigen.dev/topology) on the jobset target needs --queue (mpigen.dev/queue): Kueue's topology-aware scheduling places a JobSet's pods, and only a queued JobSet is Kueue's",
)


def kueue_annotations(topology: str | None, role: str, grouped: bool) -> dict[str, str]:
    """What mpigen adds to the `role` ("launcher", "worker") template's annotations; `grouped`: the job
    has both pod sets."""
    wanted = placement(topology)
    if wanted is None:
        return {}
    if wanted.mode == SLICE:
        if role != names.ROLE_WORKER:
            return {}
        return {SLICE_TOPOLOGY: wanted.key, SLICE_SIZE: str(wanted.size)}
    found = {REQUIRED_TOPOLOGY if wanted.mode == REQUIRED else PREFERRED_TOPOLOGY: wanted.key}
    if grouped:
        found[GROUP_NAME] = GROUP
        if role == names.ROLE_WORKER:
            found[POD_INDEX_OFFSET] = "-1"
    return found


def placement_annotations(plan: JobPlan, options: Options, role: str) -> dict[str, str]:
    if options.queue is None:
        return {}
    return kueue_annotations(options.topology, role, plan.workers > 0)


def annotate(template: dict[str, Any], plan: JobPlan, options: Options, role: str) -> None:
    """Add the role's placement annotations to `template` (a fresh copy of the input's); under Kubernetes'
    gang, the launcher's affinity to the workers' domain."""
    _add(template, placement_annotations(plan, options, role))
    wanted = placement(options.topology)
    launcher = role == names.ROLE_LAUNCHER and plan.workers > 0
    if launcher and native_gang_used(options) and wanted and wanted.mode == REQUIRED:
        _follow_workers(template.setdefault("spec", {}), plan, wanted.key)


def _follow_workers(pod: dict[str, Any], plan: JobPlan, key: str) -> None:
    """A required pod affinity to the workers' pods on `key`, after the template's own terms."""
    term = {"labelSelector": {"matchLabels": dict(plan.labels.worker_pod)}, "topologyKey": key}
    affinity = dict(pod.get("affinity") or {})
    together = dict(affinity.get("podAffinity") or {})
    field = "requiredDuringSchedulingIgnoredDuringExecution"
    together[field] = [*(together.get(field) or []), term]
    affinity["podAffinity"] = together
    pod["affinity"] = affinity


def _add(template: dict[str, Any], added: dict[str, str]) -> None:
    if added:
        meta = template.setdefault("metadata", {})
        meta["annotations"] = {**(meta.get("annotations") or {}), **added}


# A TrainJob's MPI runtime: the replicated job `launcher` and the ranks' `node` (Trainer v2 pkg/constants).
_TRAINJOB_ROLES = {
    jobset_names.LAUNCHER_RJOB: names.ROLE_LAUNCHER,
    trainer_names.NODE_RJOB: names.ROLE_WORKER,
}


def _trainjob_sets(spec: dict[str, Any]) -> list[tuple[dict[str, Any], str, int]]:
    """(pod template, role, pods) of each replicated job of a TrainJob's JobSet spec that has a role."""
    found = []
    for job in spec.get("replicatedJobs") or []:
        role = _TRAINJOB_ROLES.get(job.get("name"))
        job_spec = job["template"]["spec"]
        if role is not None and job_spec.get("parallelism"):
            found.append(
                (job_spec["template"], role, int(job_spec["parallelism"]) * int(job.get("replicas", 1)))
            )
    return found


def place_trainjob(spec: dict[str, Any], options: Options) -> None:
    """A TrainJob's JobSet spec with the Kueue annotations (with `--queue`), as an MPIJob's."""
    if options.queue is None:
        return
    sets = _trainjob_sets(spec)
    for template, role, _ in sets:
        _add(template, kueue_annotations(options.topology, role, len(sets) == 2))


def check_trainjob(spec: dict[str, Any], options: Options) -> list[Issue]:
    """Kueue's refusals of a TrainJob's JobSet spec (already placed), when Kueue reads it; under Kubernetes'
    gang, what its PodGroup cannot hold."""
    gang_refusal = _native_gang_refusal(options)
    if gang_refusal is not None:
        return gang_refusal
    if options.queue is None:
        return [_WITHOUT_QUEUE] if options.topology is not None else []
    sets = {
        role: (dict((template.get("metadata") or {}).get("annotations") or {}), count)
        for template, role, count in _trainjob_sets(spec)
    }
    found = [
        (role, key, problem)
        for role, (asked, count) in sets.items()
        for key, problem in _request_problems(asked, count)
    ]
    found += [(role, GROUP_NAME, problem) for role, problem in _group_problems(sets)]
    return [
        Issue((), f"Kueue would refuse the {role}'s pod template: {key} {problem}")
        for role, key, problem in found
    ]


def _own_annotations(plan: JobPlan, role: str) -> dict[str, Any]:
    template = plan.worker_template if role == names.ROLE_WORKER else plan.launcher_template
    found = (template.get("metadata") or {}).get("annotations") or {}
    return found if isinstance(found, dict) else {}


def _request_problems(annotations: dict[str, Any], count: int) -> list[tuple[str, str]]:
    """(annotation, problem) as Kueue's ValidateTASPodSetRequest and ValidateSliceSizeAnnotationUpperBound
    find them in one pod set's template."""
    found: list[tuple[str, str]] = []
    exclusive = [
        key for key in (REQUIRED_TOPOLOGY, PREFERRED_TOPOLOGY, UNCONSTRAINED_TOPOLOGY) if key in annotations
    ]
    if len(exclusive) > 1:
        found.append(
            (exclusive[1], f"must not be set with {exclusive[0]}: a pod set takes one topology annotation")
        )
    for key in (REQUIRED_TOPOLOGY, PREFERRED_TOPOLOGY, SLICE_TOPOLOGY):
        if key in annotations and (problem := label_key_problem(str(annotations[key]))):
            found.append((key, f"must be a node-label key: {problem}"))
    grouped, sliced = GROUP_NAME in annotations, SLICE_TOPOLOGY in annotations or SLICE_SIZE in annotations
    if grouped and re.match(r"[0-9]+\Z", str(annotations[GROUP_NAME])):  # Go's strconv.ParseUint
        found.append((GROUP_NAME, "must not be a number"))
    if grouped and sliced:
        found.append((GROUP_NAME, f"may not be set with {SLICE_TOPOLOGY} or {SLICE_SIZE}"))
    if grouped and REQUIRED_TOPOLOGY not in annotations and PREFERRED_TOPOLOGY not in annotations:
        found.append((GROUP_NAME, f"may not be set without {PREFERRED_TOPOLOGY} or {REQUIRED_TOPOLOGY}"))
    if (SLICE_TOPOLOGY in annotations) != (SLICE_SIZE in annotations):
        found.append((SLICE_SIZE, f"{SLICE_TOPOLOGY} and {SLICE_SIZE} go together"))
    if SLICE_SIZE in annotations:
        size = str(annotations[SLICE_SIZE])
        if not re.match(r"[+-]?[0-9]+\Z", size) or not 1 <= int(size) <= _INT32_MAX:  # strconv.ParseInt
            found.append((SLICE_SIZE, f"must be a whole number from 1 to {_INT32_MAX}, got {size}"))
        elif int(size) > count:
            found.append((SLICE_SIZE, f"must not be greater than the pod set's count {count}, got {size}"))
    return found


def _group_problems(sets: dict[str, tuple[dict[str, Any], int]]) -> list[tuple[str, str]]:
    """(role, problem) of the podset groups, as Kueue's ValidatePodSetGroupingTopology finds them."""
    groups: dict[str, list[str]] = {}
    for role, (asked, _) in sets.items():
        if GROUP_NAME in asked and (REQUIRED_TOPOLOGY in asked or PREFERRED_TOPOLOGY in asked):
            groups.setdefault(str(asked[GROUP_NAME]), []).append(role)
    found = []
    for group, roles in groups.items():
        if len(roles) != 2:
            found += [
                (role, f"group {group} must hold exactly 2 pod sets, got {len(roles)}") for role in roles
            ]
            continue
        (first, one), (second, two) = sets[roles[0]], sets[roles[1]]
        if one != 1 and two != 1:
            found.append((roles[0], f"group {group} needs a pod set of 1 pod, got {one} and {two}"))
        requests = [(a.get(REQUIRED_TOPOLOGY), a.get(PREFERRED_TOPOLOGY)) for a in (first, second)]
        if requests[0] != requests[1]:
            found.append(
                (roles[0], f"group {group}: both pod sets must ask the same required or preferred topology")
            )
    return found


def _native_gang_refusal(options: Options) -> list[Issue] | None:
    """Under Kubernetes' gang (no Kueue reads the job): nothing to refuse for `required:`, a refusal for the
    rest; None without that gang or without `--topology`."""
    wanted = placement(options.topology)
    if wanted is None or not native_gang_used(options):
        return None
    if wanted.mode == REQUIRED:
        return []
    return [
        Issue(
            (),
            f"--topology (mpigen.dev/topology) {wanted} is refused on the {options.target} target with --gang-scheduler kubernetes: Kubernetes' PodGroup has only a required topology (schedulingConstraints.topology, the whole gang in one domain) and no Kueue reads the job; use required:",
        )
    ]


def check_placement(plan: JobPlan, options: Options) -> list[Issue]:
    """Kueue's refusals of the templates' topology annotations, when Kueue reads them (`--queue`)."""
    wanted = placement(options.topology)
    gang_refusal = _native_gang_refusal(options)
    if gang_refusal is not None:
        return gang_refusal
    if options.queue is None:
        return [_WITHOUT_QUEUE] if wanted is not None else []
    if wanted is not None and wanted.mode == SLICE and plan.workers == 0:
        return [Issue((), f"--topology (mpigen.dev/topology) {wanted}: the job has no workers to slice")]
    roles = [names.ROLE_WORKER, names.ROLE_LAUNCHER] if plan.workers else [names.ROLE_LAUNCHER]
    sets = {
        role: (
            {**_own_annotations(plan, role), **placement_annotations(plan, options, role)},
            plan.workers if role == names.ROLE_WORKER else 1,
        )
        for role in roles
    }
    issues = []
    for role, (found, count) in sets.items():
        for key, problem in _request_problems(found, count):
            issues.append(_issue(plan, role, key, problem, key in placement_annotations(plan, options, role)))
    for role, problem in _group_problems(sets):
        issues.append(_issue(plan, role, GROUP_NAME, problem, options.topology is not None))
    return issues


def _issue(plan: JobPlan, role: str, key: str, problem: str, ours: bool) -> Issue:
    """At the input template's annotation, or, when --topology put it there, at the option."""
    if ours:
        return Issue(
            (),
            f"--topology (mpigen.dev/topology): Kueue would refuse the {role}'s pod template: {key} {problem}",
        )
    where = plan.template_paths.get(role, ())
    return Issue((*where, "metadata", "annotations", key), f"Kueue would refuse this pod template: {problem}")
