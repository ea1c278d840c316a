"""Front for `kubeflow.org/v1alpha1` MPIJobs: one pod template, sized by gpus, processingUnits or replicas.

Mirrors mpi-operator v0.2.0 `pkg/apis/kubeflow/v1alpha1/types.go`, the limits of
`deploy/crd/crd-v1alpha1.yaml`, and `allocateProcessingUnits` / `newWorker` / `newLauncher` in
`pkg/controllers/v1alpha1/mpi_job_controller.go`. Departures (see docs/departures.md): sizing
conflicts and missing sizing are errors instead of guesses; limits are never written as zero or
truncated; backoffLimit is 6 whatever the worker count.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from mpigen import names, tree
from mpigen.errors import CompileError, Issue
from mpigen.inputs.fields import explain_unknown_fields
from mpigen.inputs.ignored import tolerant
from mpigen.inputs.model import Field
from mpigen.inputs.shared import (
    INT32_MAX,
    INT64_MAX,
    ObjectMeta,
    PodTemplate,
    Strict,
    check_metadata,
    check_pod_template,
    check_pod_template_strictly,
    check_raw_templates,
    dedupe,
    name_of,
    parse_model,
    parse_without_unknown_fields,
    resolve_namespace,
    v020_layout,
)
from mpigen.options import Options
from mpigen.plan import JobPlan
from mpigen.quantity import whole_units

API_VERSION = "kubeflow.org/v1alpha1"
DEFAULT_BACKOFF_LIMIT = 6


class MPIJobSpec(Strict):
    gpus: int | None = Field(default=None, ge=1, le=INT32_MAX)
    gpusPerNode: int | None = Field(default=None, ge=1, le=INT32_MAX)
    processingUnits: int | None = Field(default=None, ge=1, le=INT32_MAX)
    processingUnitsPerNode: int | None = Field(default=None, ge=1, le=INT32_MAX)
    processingResourceType: Literal["nvidia.com/gpu", "cpu"] | None = None
    slotsPerWorker: int | None = Field(default=None, ge=1, le=INT32_MAX)
    launcherOnMaster: bool = False
    backoffLimit: int | None = Field(default=None, ge=0, le=INT32_MAX)
    activeDeadlineSeconds: int | None = Field(default=None, ge=1, le=INT64_MAX)
    replicas: int | None = Field(default=None, ge=1, le=INT32_MAX)
    template: PodTemplate | None = None


class MPIJob(Strict):
    apiVersion: Literal["kubeflow.org/v1alpha1"]
    kind: Literal["MPIJob"]
    metadata: ObjectMeta | None = None
    spec: MPIJobSpec
    status: Any = None


CRD_SMALL_TOTALS = (1, 2, 4)  # deploy/crd/crd-v1alpha1.yaml: "Valid values are 1, 2, 4, or any multiple of 8"
CRD_TOTAL_STEP = 8


def _per_node(spec: MPIJobSpec, options: Options) -> tuple[str, str, int, int] | None:
    """(field, per-node field, total, units per node) of a gpus or processingUnits job, else None."""
    if spec.gpus is not None:
        return "gpus", "gpusPerNode", spec.gpus, spec.gpusPerNode or options.gpus_per_node
    if spec.processingUnits is not None:
        per_node = spec.processingUnitsPerNode or options.processing_units_per_node
        return "processingUnits", "processingUnitsPerNode", spec.processingUnits, per_node
    return None


def _fits(total: int, per_node: int) -> bool:
    """The CRD's rule and v0.2.0 allocateProcessingUnits' rule (fewer than per node, or a multiple)."""
    crd = total in CRD_SMALL_TOTALS or total % CRD_TOTAL_STEP == 0
    return crd and (total < per_node or total % per_node == 0)


def _total_rule(field: str, per_field: str, total: int, per_node: int) -> list[Issue]:
    """Both rules a total must meet, said in one message with the values that meet them, so that the
    value the message suggests is never refused by the other rule."""
    if _fits(total, per_node):
        return []
    step = math.lcm(CRD_TOTAL_STEP, per_node)
    one_worker = [str(t) for t in CRD_SMALL_TOTALS if t < per_node]
    if per_node > CRD_TOTAL_STEP:
        one_worker.append(f"a multiple of {CRD_TOTAL_STEP} below {per_node}")
    allowed = ", ".join(one_worker) + (" (one worker) or " if one_worker else "") + f"a multiple of {step}"
    below, above = _nearest_fits(total, per_node, step)
    nearest = f"{below} or {above}" if below else str(above)
    message = (
        f"{total} does not fit: a total must be 1, 2, 4 or a multiple of 8 (the v1alpha1 CRD), and fewer "
        f"than or a multiple of {per_field} ({per_node}); with {per_node} per node use {allowed} "
        f"(nearest: {nearest})"
    )
    return [Issue(("spec", field), message)]


def _nearest_fits(total: int, per_node: int, step: int) -> tuple[int, int]:
    """The largest total below `total` that fits (0 if none) and the smallest above it."""
    one_worker = [
        t for t in (*CRD_SMALL_TOTALS, *range(CRD_TOTAL_STEP, per_node, CRD_TOTAL_STEP)) if t < per_node
    ]
    below = max([t for t in one_worker if t < total] + [total // step * step], default=0)
    above = min([t for t in one_worker if t > total] + [(total // step + 1) * step])
    return below, above


def _check_sizing(spec: MPIJobSpec, options: Options) -> list[Issue]:
    chosen = [f for f in ("gpus", "processingUnits", "replicas") if getattr(spec, f) is not None]
    if not chosen:
        return [Issue(("spec",), "one of gpus, processingUnits or replicas is required")]
    issues = [
        Issue(("spec", later), f"cannot be set together with {chosen[0]}: choose one way to size the job")
        for later in chosen[1:]
    ]
    sizing = _per_node(spec, options)
    return issues + (_total_rule(*sizing) if sizing and not issues else [])


def _allocate(spec: MPIJobSpec, options: Options, resource: str) -> tuple[int, int, list[Issue]]:
    """(workers, units per worker, issues): v0.2.0 `allocateProcessingUnits`."""
    sizing = _per_node(spec, options)
    if sizing is not None:
        field, per_field, total, per_node = sizing
        issues = _total_rule(field, per_field, total, per_node)  # checked before; kept for the API's callers
        if issues:
            return 0, 0, issues
        return (1, total, []) if total < per_node else (total // per_node, per_node, [])
    container = _first_container(spec.template or {})
    limit = (container.get("resources") or {}).get("limits") or {}
    units = whole_units(limit.get(resource)) if resource in limit else None
    return spec.replicas or 0, max(units or 0, 0), []


def _first_container(template: dict[str, Any]) -> dict[str, Any]:
    containers: list[dict[str, Any]] = template["spec"]["containers"]
    return containers[0]


def _worker_template(
    template: dict[str, Any], spec: MPIJobSpec, resource: str, units: int
) -> tuple[dict[str, Any], list[Issue]]:
    worker = tree.copy(template)
    if spec.replicas is not None:
        # Sized by replicas: the limit is where the units came from; leave it exactly as written
        # (v0.2.0 rewrites it, as "0" when absent or fractional).
        return worker, []
    container = _first_container(worker)
    limits = container.setdefault("resources", {}).setdefault("limits", {})
    warnings = []
    if resource in limits and whole_units(limits[resource]) != units:
        path = ("spec", "template", "spec", "containers", 0, "resources", "limits", resource)
        warnings.append(
            Issue(path, f"{limits[resource]} is replaced by {units} from the job's sizing", "warning")
        )
    limits[resource] = str(units)
    return worker, warnings


def _launcher_template(template: dict[str, Any], spec: MPIJobSpec) -> tuple[dict[str, Any], list[Issue]]:
    launcher = tree.copy(template)
    pod = launcher["spec"]
    container = _first_container(launcher)
    resources = container.get("resources")
    if isinstance(resources, dict):
        # The launcher only runs mpirun: v0.2.0 drops its limits and requests.
        resources.pop("limits", None)
        resources.pop("requests", None)
        if not resources:
            del container["resources"]
    if pod.get("restartPolicy") != "Never":
        pod["restartPolicy"] = "OnFailure"
    warnings: list[Issue] = []
    if spec.launcherOnMaster:
        for key in ("tolerations", "affinity"):
            if pod.get(key):
                path = ("spec", "template", "spec", key)
                warnings.append(Issue(path, "replaced on the launcher by launcherOnMaster", "warning"))
        # mpi-operator v0.2.0 (newLauncher) uses node-role.kubernetes.io/master; Kubernetes 1.24 removed
        # that label and taint from control-plane nodes, so mpigen selects and tolerates control-plane
        # (and still tolerates the old taint). docs/departures.md.
        pod["tolerations"] = [
            {"key": names.MASTER_ROLE_LABEL, "effect": "NoSchedule"},
            {"key": names.CONTROL_PLANE_ROLE_LABEL, "effect": "NoSchedule"},
        ]
        expression = {"key": names.CONTROL_PLANE_ROLE_LABEL, "operator": "Exists"}
        terms = [{"matchExpressions": [expression]}]
        pod["affinity"] = {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
        }
    return launcher, warnings


def _to_plan(document: dict[str, Any], options: Options) -> JobPlan:
    job, issues = parse_model(MPIJob, document)
    if job is None:
        issues = explain_unknown_fields(issues, API_VERSION)
        issues += check_raw_templates(document, [("spec", "template")], options)
        pruned = parse_without_unknown_fields(MPIJob, document)
        if pruned is not None:
            issues += check_metadata(pruned.metadata) + _check_sizing(pruned.spec, options)
        raise CompileError(dedupe(issues), name=name_of(document))
    template_path = ("spec", "template")
    issues = check_metadata(job.metadata) + _check_sizing(job.spec, options)
    issues += check_pod_template(job.spec.template, template_path)
    if options.validate and not issues:
        issues += check_pod_template_strictly(job.spec.template, template_path, options.kube_version)
    meta = job.metadata or ObjectMeta()
    namespace, ns_issues = resolve_namespace(meta.namespace, options.namespace)
    issues += ns_issues
    if any(issue.severity == "error" for issue in issues):
        raise CompileError([i for i in issues if i.severity == "error"], name=meta.name or "")
    spec = job.spec
    resource = spec.processingResourceType or options.processing_resource_type
    workers, units, sizing_issues = _allocate(spec, options, resource)
    if sizing_issues:
        raise CompileError(sizing_issues, name=meta.name or "")
    assert spec.template is not None
    worker, worker_warnings = _worker_template(spec.template, spec, resource, units)
    launcher, launcher_warnings = _launcher_template(spec.template, spec)
    slots = spec.slotsPerWorker if spec.slotsPerWorker is not None else (units if units > 0 else 1)
    return JobPlan(
        api_version=API_VERSION,
        name=meta.name or "",
        namespace=namespace,
        workers=workers,
        slots_per_worker=slots,
        launcher_template=launcher,
        worker_template=worker,
        backoff_limit=spec.backoffLimit if spec.backoffLimit is not None else DEFAULT_BACKOFF_LIMIT,
        active_deadline_seconds=spec.activeDeadlineSeconds,
        # v0.2.0 scales the v1alpha1 worker StatefulSet to 0 once the launcher has finished.
        clean_pod_policy="All",
        template_paths={"launcher": ("spec", "template"), "worker": ("spec", "template")},
        workers_path=(
            "spec",
            next(
                (k for k in ("gpus", "processingUnits", "replicas") if getattr(spec, k) is not None),
                "replicas",
            ),
        ),
        **v020_layout(meta.name or ""),
        warnings=tuple(issues + worker_warnings + launcher_warnings),
    )


# Fields the operator ignored render with a warning (mpigen.inputs.ignored).
to_plan = tolerant(_to_plan, "mpi-operator v0.2.0")
