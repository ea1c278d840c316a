"""Front for `kubeflow.org/v1alpha1` MPIJobs: one pod template, sized by gpus, processingUnits or replicas.

Mirrors mpi-operator v0.2.0 `pkg/apis/kubeflow/v1alpha1/types.go`, the limits of
`deploy/crd/crd-v1alpha1.yaml`, and `allocateProcessingUnits` / `newWorker` / `newLauncher` in
`pkg/controllers/v1alpha1/mpi_job_controller.go`. Departures (see docs/departures.md): sizing
conflicts and missing sizing are errors instead of guesses; limits are never written as zero or
truncated; backoffLimit is 6 whatever the worker count.
"""

from __future__ import annotations

import copy
from typing import Any, Literal

from pydantic import Field

from mpigen import names
from mpigen.api.common import (
    INT32_MAX,
    INT64_MAX,
    ObjectMeta,
    PodTemplate,
    Strict,
    check_metadata,
    check_pod_template,
    check_pod_template_strictly,
    check_raw_templates,
    name_of,
    parse_model,
    resolve_namespace,
    v020_layout,
)
from mpigen.api.fields import explain_unknown_fields
from mpigen.errors import CompileError, Issue
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


def _crd_total_rule(field: str, value: int | None) -> list[Issue]:
    # deploy/crd/crd-v1alpha1.yaml: "Valid values are 1, 2, 4, or any multiple of 8".
    if value is None or value in (1, 2, 4) or value % 8 == 0:
        return []
    return [Issue(("spec", field), f"must be 1, 2, 4 or a multiple of 8, got {value}")]


def _check_sizing(spec: MPIJobSpec) -> list[Issue]:
    chosen = [f for f in ("gpus", "processingUnits", "replicas") if getattr(spec, f) is not None]
    if not chosen:
        return [Issue(("spec",), "one of gpus, processingUnits or replicas is required")]
    issues = [
        Issue(("spec", later), f"cannot be set together with {chosen[0]}: choose one way to size the job")
        for later in chosen[1:]
    ]
    return issues + _crd_total_rule("gpus", spec.gpus) + _crd_total_rule("processingUnits", spec.processingUnits)


def _allocate(spec: MPIJobSpec, options: Options, resource: str) -> tuple[int, int, list[Issue]]:
    """(workers, units per worker, issues): v0.2.0 `allocateProcessingUnits`."""
    if spec.gpus is not None or spec.processingUnits is not None:
        if spec.gpus is not None:
            field, total = "gpus", spec.gpus
            per_field, per_node = "gpusPerNode", spec.gpusPerNode or options.gpus_per_node
        else:
            field, total = "processingUnits", spec.processingUnits or 0
            per_field, per_node = "processingUnitsPerNode", (
                spec.processingUnitsPerNode or options.processing_units_per_node
            )
        if total < per_node:
            return 1, total, []
        if total % per_node == 0:
            return total // per_node, per_node, []
        message = (
            f"{total} is not a multiple of {per_field} ({per_node}): ask for fewer than {per_node} "
            f"or a multiple of {per_node}"
        )
        return 0, 0, [Issue(("spec", field), message)]
    container = _first_container(spec.template or {})
    limit = (container.get("resources") or {}).get("limits") or {}
    units = whole_units(limit.get(resource)) if resource in limit else None
    return spec.replicas or 0, max(units or 0, 0), []


def _first_container(template: dict[str, Any]) -> dict[str, Any]:
    containers: list[dict[str, Any]] = template["spec"]["containers"]
    return containers[0]


def _worker_template(template: dict[str, Any], spec: MPIJobSpec, resource: str, units: int) -> tuple[
    dict[str, Any], list[Issue]
]:
    worker = copy.deepcopy(template)
    if spec.replicas is not None:
        # Sized by replicas: the limit is where the units came from; leave it exactly as written
        # (v0.2.0 rewrites it, as "0" when absent or fractional).
        return worker, []
    container = _first_container(worker)
    limits = container.setdefault("resources", {}).setdefault("limits", {})
    warnings = []
    if resource in limits and whole_units(limits[resource]) != units:
        path = ("spec", "template", "spec", "containers", 0, "resources", "limits", resource)
        warnings.append(Issue(path, f"{limits[resource]} is replaced by {units} from the job's sizing", "warning"))
    limits[resource] = str(units)
    return worker, warnings


def _launcher_template(template: dict[str, Any], spec: MPIJobSpec) -> tuple[dict[str, Any], list[Issue]]:
    launcher = copy.deepcopy(template)
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
        pod["tolerations"] = [{"key": names.MASTER_ROLE_LABEL, "effect": "NoSchedule"}]
        pod["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": names.MASTER_ROLE_LABEL, "operator": "Exists"}]}
                    ]
                }
            }
        }
    return launcher, warnings


def to_plan(document: dict[str, Any], options: Options) -> JobPlan:
    job, issues = parse_model(MPIJob, document)
    if job is None:
        issues = explain_unknown_fields(issues, API_VERSION)
        raise CompileError(issues + check_raw_templates(document, [("spec", "template")], options), name=name_of(document))
    template_path = ("spec", "template")
    issues = check_metadata(job.metadata) + _check_sizing(job.spec)
    issues += check_pod_template(job.spec.template, template_path)
    if options.validate and not issues:
        issues += check_pod_template_strictly(job.spec.template, template_path, options.kube_version)
    meta = job.metadata or ObjectMeta()
    namespace, subject_ns, ns_issues = resolve_namespace(meta.namespace, options.namespace)
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
        subject_namespace=subject_ns,
        workers=workers,
        slots_per_worker=slots,
        launcher_template=launcher,
        worker_template=worker,
        backoff_limit=spec.backoffLimit if spec.backoffLimit is not None else DEFAULT_BACKOFF_LIMIT,
        active_deadline_seconds=spec.activeDeadlineSeconds,
        # v0.2.0 scales the v1alpha1 worker StatefulSet to 0 once the launcher has finished.
        clean_pod_policy="All",
        template_paths={"launcher": ("spec", "template"), "worker": ("spec", "template")},
        workers_path=("spec", next((k for k in ("gpus", "processingUnits", "replicas") if getattr(spec, k) is not None), "replicas")),
        **v020_layout(meta.name or ""),
        warnings=tuple(issues + worker_warnings + launcher_warnings),
    )
