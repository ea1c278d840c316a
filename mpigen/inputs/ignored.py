"""Ignored fields: what an apiVersion's operator accepted and never read renders with a warning.

mpi-operator v0.2.0 served kubeflow.org/v1alpha1 and v1alpha2 through `apiextensions.k8s.io/v1beta1`
CRDs (`deploy/crd/crd-v1alpha1.yaml`, `crd-v1alpha2.yaml`; v0.3.0 `deploy/v1alpha2/mpi-operator.yaml`)
whose schemas describe a few fields only (`slotsPerWorker`, the replica counts, v1alpha1's sizing) and
keep every other field (`preserveUnknownFields` defaults to true in v1beta1). Its controller decodes the
job into its Go types, which drops any field they do not have: a pod-level `imagePullPolicy`, a
container's `securityContext.fsGroup`, a misspelt spec field. Such a job ran, so mpigen renders it,
leaving the field out as the operator did, with a warning that names the field (and the field it may
have meant). A field of the wrong type, or one the CRD's schema limits, stays an error: the API server or
the operator's decoder refused those.

kubeflow.org/v1 (training-operator 1.9) and v2beta1 (mpi-operator v0.8.2) have structural CRD schemas:
the API server prunes unknown fields and `kubectl apply` (strict field validation) refuses them, so an
unknown field stays an error there (docs/departures.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mpigen import tree
from mpigen.checks.kube.schemas import shipped_schema
from mpigen.checks.kube.versions import default_kube_version
from mpigen.errors import CompileError, Issue
from mpigen.options import Options
from mpigen.plan import JobPlan

ToPlan = Callable[[dict[str, Any], Options], JobPlan]
_UNKNOWN = "unknown field "


def _ignorable(issue: Issue) -> bool:
    """An unknown field inside the spec (metadata is the API server's own, and pruned there)."""
    return issue.severity == "error" and issue.path[:1] == ("spec",) and issue.message.startswith(_UNKNOWN)


def _without(document: dict[str, Any], paths: list[tuple[str | int, ...]]) -> dict[str, Any]:
    fixed = tree.copy(document)
    for path in paths:
        node: Any = fixed
        for key in path[:-1]:
            node = (
                node.get(key)
                if isinstance(node, dict)
                else (
                    node[key] if isinstance(node, list) and isinstance(key, int) and key < len(node) else None
                )
            )
        if isinstance(node, dict):
            node.pop(path[-1], None)
    return fixed


def tolerant(to_plan: ToPlan, operator: str) -> ToPlan:
    """`to_plan` that renders a job whose only fault is fields `operator` ignored, with a warning for each
    (on a valid job it costs nothing: the fields are looked for only once the front refused the job)."""

    def plan(document: dict[str, Any], options: Options) -> JobPlan:
        warnings: list[Issue] = []
        for _ in range(3):  # the fields of the job, then those of its pod templates, checked once it parses
            try:
                result = to_plan(document, options)
            except CompileError as exc:
                ignored = [issue for issue in exc.issues if _ignorable(issue)]
                if not ignored:
                    # shown beside the errors: a misspelt field may be why a field is missing
                    exc.warnings[:0] = warnings
                    raise
                document = _without(document, [issue.path for issue in ignored])
                warnings += [_warning(issue, operator) for issue in ignored]
                continue
            return result.replace(warnings=(*warnings, *result.warnings)) if warnings else result
        return to_plan(document, options)

    return plan


def _warning(issue: Issue, operator: str) -> Issue:
    hint = _neighbour_hint(issue)
    message = f"{issue.message}{hint}: left out, as {operator} ignored it (its CRD kept unknown fields)"
    return Issue(issue.path, message, "warning")


_CORE = "io.k8s.api.core.v1."
# A pod template object, and the neighbour a field is often written in instead: (its definition, the
# neighbour's definition, how to name the neighbour).
_NEIGHBOURS = {
    "pod": ("PodSpec", "Container", "a container field: containers[*].{}"),
    "container": ("Container", "PodSpec", "a pod field: spec.{}"),
    "securityContext": ("SecurityContext", "PodSecurityContext", "a pod field: spec.securityContext.{}"),
    "podSecurityContext": (
        "PodSecurityContext",
        "SecurityContext",
        "a container field: containers[*].securityContext.{}",
    ),
}


def _level(parents: tuple[str | int, ...]) -> str | None:
    """Which pod template object holds a field at `parents` (a path inside the job)."""
    if parents[-2:] == ("template", "spec"):
        return "pod"
    if len(parents) >= 2 and parents[-2] in ("containers", "initContainers") and isinstance(parents[-1], int):
        return "container"
    if parents[-1:] == ("securityContext",):
        return "podSecurityContext" if parents[-3:-1] == ("template", "spec") else "securityContext"
    return None


def _neighbour_hint(issue: Issue) -> str:
    """` (a pod field: spec.securityContext.fsGroup)` for a field that exists one object over (a pod-level
    `imagePullPolicy`, a container's `fsGroup`); "" when it does not, or the message has a hint already."""
    *parents, field = issue.path
    level = _level(tuple(parents)) if parents and isinstance(field, str) else None
    if level is None or "(" in issue.message:
        return ""

    shipped = shipped_schema(default_kube_version(), _CORE + "PodSpec")
    if shipped is None:
        return ""
    definitions = shipped[1]
    own, neighbour, where = _NEIGHBOURS[level]
    known = set(definitions.get(_CORE + own, {}).get("properties", {}))
    theirs = set(definitions.get(_CORE + neighbour, {}).get("properties", {}))
    return f" ({where.format(field)})" if field not in known and field in theirs else ""
