"""The API server's rules of `scheduling.k8s.io/v1beta1` Workload and PodGroup that the JSON schemas miss.

Kubernetes v1.37.2 checks these objects in two places: the declarative rules generated from the tags of
k8s.io/api scheduling/v1beta1 (pkg/apis/scheduling/v1beta1/zz_generated.validations.go: unions of
exactly one member, `minCount` >= 1, at most 8 pod group templates, name formats) and the hand-written
ones of pkg/apis/scheduling/validation (ValidateWorkload: unique template names, one priority for every
template; ValidatePodGroup; the object names, NameIsDNSSubdomain). The schemas only say "object",
"integer" or "string" there. Output checks: a violation is mpigen's bug (exit 3); the differential
test against the real kube-apiserver (tests/cluster/test_workload_gang.py) compares verdicts.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mpigen.checks.pod import formats
from mpigen.errors import Issue, Path

API = "scheduling.k8s.io/v1beta1"
MAX_TEMPLATES = 8  # WorkloadMaxPodGroupTemplates
MAX_TOPOLOGY = 1  # PodGroupSchedulingConstraints.topology: +k8s:maxItems=1
HIGHEST_USER_PRIORITY = 1_000_000_000  # HighestUserDefinablePriority
UNIONS = {
    "schedulingPolicy": ("basic", "gang"),
    "disruptionMode": ("single", "all"),
}


def scheduling_issues(obj: dict[str, Any]) -> Iterator[Issue]:
    """The rules of a Workload or a PodGroup of scheduling.k8s.io/v1beta1; nothing for any other object."""
    if obj.get("apiVersion") != API or obj.get("kind") not in ("Workload", "PodGroup"):
        return
    name = (obj.get("metadata") or {}).get("name")
    if isinstance(name, str):
        yield from _format(("metadata", "name"), name, formats.dns1123_subdomain)
    spec = obj.get("spec") or {}
    if obj["kind"] == "PodGroup":
        yield from _group(spec, ("spec",))
        ref = spec.get("workloadRef")
        if isinstance(ref, dict):
            yield from _format(
                ("spec", "workloadRef", "workloadName"), ref.get("workloadName"), formats.dns1123_subdomain
            )
            yield from _format(
                ("spec", "workloadRef", "templateName"), ref.get("templateName"), formats.dns1123_label
            )
        return
    yield from _workload(spec)


def _workload(spec: dict[str, Any]) -> Iterator[Issue]:
    templates = spec.get("podGroupTemplates")
    composite = spec.get("compositePodGroupTemplates")
    if (templates is None) == (composite is None):
        yield Issue(
            ("spec",), "must specify exactly one of: `podGroupTemplates`, `compositePodGroupTemplates`"
        )
    if not isinstance(templates, list):
        return
    if len(templates) > MAX_TEMPLATES:
        yield Issue(("spec", "podGroupTemplates"), f"must have at most {MAX_TEMPLATES} items")
    seen: set[object] = set()
    priorities = set()
    for index, template in enumerate(templates):
        path: Path = ("spec", "podGroupTemplates", index)
        if not isinstance(template, dict):
            continue
        yield from _format((*path, "name"), template.get("name"), formats.dns1123_label)
        if template.get("name") in seen:
            yield Issue((*path, "name"), f"Duplicate value: {template.get('name')!r}")
        seen.add(template.get("name"))
        priorities.add((template.get("priorityClassName") or "", template.get("priority")))
        yield from _group(template, path)
    if len(priorities) > 1:  # validateWorkloadPriority
        yield Issue(("spec",), "detected multiple priority configurations")


def _group(group: dict[str, Any], path: Path) -> Iterator[Issue]:
    """What a PodGroupTemplate and a PodGroupSpec share: the scheduling policy, the disruption mode, the
    priority."""
    for field, members in UNIONS.items():
        value = group.get(field)
        if field == "schedulingPolicy" and value is None:
            yield Issue((*path, field), "Required value")
        if isinstance(value, dict) and sum(value.get(member) is not None for member in members) != 1:
            wanted = ", ".join(f"`{member}`" for member in members)
            yield Issue((*path, field), f"must specify exactly one of: {wanted}")
    gang = (group.get("schedulingPolicy") or {}).get("gang")
    if isinstance(gang, dict):
        count = gang.get("minCount")
        if isinstance(count, int) and count < 1:
            yield Issue((*path, "schedulingPolicy", "gang", "minCount"), "must be greater than or equal to 1")
    yield from _format(
        (*path, "priorityClassName"), group.get("priorityClassName"), formats.dns1123_subdomain
    )
    yield from _constraints(group.get("schedulingConstraints"), (*path, "schedulingConstraints"))
    priority = group.get("priority")
    if isinstance(priority, int) and priority > HIGHEST_USER_PRIORITY:
        yield Issue((*path, "priority"), f"must be less than or equal to {HIGHEST_USER_PRIORITY}")


def _constraints(constraints: object, path: Path) -> Iterator[Issue]:
    """A PodGroup's topology constraints: the list short-circuits on its size, then each key."""
    topology = constraints.get("topology") if isinstance(constraints, dict) else None
    if not isinstance(topology, list):
        return
    if len(topology) > MAX_TOPOLOGY:
        yield Issue((*path, "topology"), f"must have at most {MAX_TOPOLOGY} item")
        return
    for index, constraint in enumerate(topology):
        key = constraint.get("key") if isinstance(constraint, dict) else None
        if not key:
            yield Issue((*path, "topology", index, "key"), "Required value")
        else:
            yield from _format((*path, "topology", index, "key"), key, formats.qualified_name)


def _format(path: Path, value: object, check: Any) -> Iterator[Issue]:
    if isinstance(value, str) and value:
        for message in check(value):
            yield Issue(path, f"Invalid value: {value!r}: {message}")
