"""Front for `kubeflow.org/v1alpha2` MPIJobs: `mpiReplicaSpecs` with one Launcher and N Workers.

Mirrors mpi-operator v0.2.0 `pkg/apis/kubeflow/v1alpha2/{types,common_types,default}.go`, the limits of
`deploy/crd/crd-v1alpha2.yaml` and `newWorker` / `newLauncher` in
`pkg/controllers/v1alpha2/mpi_job_controller.go`, with the fields v0.3.0 added (`runPolicy`,
`mainContainer`, `mpiDistribution`: mpigen.inputs.v030). A missing Worker or zero workers is an error
here; the v0.2.0 controller panics on it.
"""

from __future__ import annotations

from typing import Any, Literal, cast

from mpigen import tree
from mpigen.errors import CompileError, Issue
from mpigen.inputs import v030
from mpigen.inputs.fields import explain_unknown_fields
from mpigen.inputs.ignored import tolerant
from mpigen.inputs.model import Field
from mpigen.inputs.runpolicy import RunPolicy, template_restart_policy_warnings, worker_restart_warnings
from mpigen.inputs.shared import (
    INT32_MAX,
    INT64_MAX,
    ObjectMeta,
    PodTemplate,
    Strict,
    WorkerRule,
    check_metadata,
    check_raw_templates,
    check_replicas,
    dedupe,
    name_of,
    parse_model,
    parse_without_unknown_fields,
    resolve_namespace,
    v020_layout,
)
from mpigen.inputs.v030 import MPIDistribution
from mpigen.inputs.v1 import check_main_container
from mpigen.options import Options
from mpigen.plan import JobPlan

API_VERSION = "kubeflow.org/v1alpha2"
DEFAULT_BACKOFF_LIMIT = 6

RestartPolicy = Literal["Always", "OnFailure", "Never", "ExitCode"]


class ReplicaSpec(Strict):
    replicas: int | None = Field(default=None, ge=0, le=INT32_MAX)
    template: PodTemplate | None = None
    restartPolicy: RestartPolicy | None = None


class MPIReplicaSpecs(Strict):
    Launcher: ReplicaSpec | None = None
    Worker: ReplicaSpec | None = None


class MPIJobSpec(Strict):
    slotsPerWorker: int | None = Field(default=None, ge=1, le=INT32_MAX)
    backoffLimit: int | None = Field(default=None, ge=0, le=INT32_MAX)
    activeDeadlineSeconds: int | None = Field(default=None, ge=1, le=INT64_MAX)
    cleanPodPolicy: Literal["None", "Running", "All"] | None = None
    mpiReplicaSpecs: MPIReplicaSpecs
    # mpi-operator v0.2.3 and v0.3.0 (mpigen.inputs.v030)
    mainContainer: str | None = None
    runPolicy: RunPolicy | None = None
    mpiDistribution: MPIDistribution | None = None


class MPIJob(Strict):
    apiVersion: Literal["kubeflow.org/v1alpha2"]
    kind: Literal["MPIJob"]
    metadata: ObjectMeta | None = None
    spec: MPIJobSpec
    status: Any = None


_SPECS = ("spec", "mpiReplicaSpecs")


_WORKER = WorkerRule(required=True, least=1, missing="required field is missing")


def _check_replicas(specs: MPIReplicaSpecs, options: Options) -> list[Issue]:
    return check_replicas(specs.Launcher, specs.Worker, options, _WORKER)


def _launcher_template(spec: ReplicaSpec) -> tuple[dict[str, Any], list[Issue]]:
    template = tree.copy(spec.template or {})
    pod = template["spec"]
    # default.go setDefaults_TypeLauncher: anything but Never becomes OnFailure.
    given = "Never" if spec.restartPolicy == "Never" else "OnFailure"
    # v0.2.0 newLauncher: the replica spec's restartPolicy always wins, with a warning event.
    path = _SPECS + ("Launcher", "template")
    warnings = template_restart_policy_warnings(template, path, "Launcher", given)
    pod["restartPolicy"] = given
    return template, warnings


def _worker_template(spec: ReplicaSpec, target: str) -> tuple[dict[str, Any], list[Issue]]:
    written = {"restartPolicy": spec.restartPolicy, "template": spec.template}
    warnings = worker_restart_warnings(written, _SPECS + ("Worker",), target)
    return tree.copy(spec.template or {}), warnings


def _to_plan(document: dict[str, Any], options: Options) -> JobPlan:
    job, issues = parse_model(MPIJob, document)
    if job is None:
        issues = explain_unknown_fields(issues, API_VERSION)
        paths = [_SPECS + (role, "template") for role in ("Launcher", "Worker")]
        issues += check_raw_templates(document, paths, options)
        pruned = parse_without_unknown_fields(MPIJob, document)
        if pruned is not None:
            issues += check_metadata(pruned.metadata) + _check_replicas(pruned.spec.mpiReplicaSpecs, options)
        raise CompileError(dedupe(issues), name=name_of(document))
    meta = job.metadata or ObjectMeta()
    issues = check_metadata(job.metadata) + _check_replicas(job.spec.mpiReplicaSpecs, options)
    issues += v030.run_policy_issues(job.spec.runPolicy)
    issues += v030.distribution_issues(job.spec.mpiDistribution, options.target)
    if options.target == "operator":
        issues += v030.hydra_iface_warning(job.spec.mpiDistribution, document)
    issues += check_main_container(cast(Any, job.spec))
    namespace, ns_issues = resolve_namespace(meta.namespace, options.namespace)
    issues += ns_issues
    errors = [issue for issue in issues if issue.severity == "error"]
    if errors:
        raise CompileError(errors, name=meta.name or "")
    spec = job.spec
    launcher_spec, worker_spec = spec.mpiReplicaSpecs.Launcher, spec.mpiReplicaSpecs.Worker
    assert launcher_spec is not None and worker_spec is not None and worker_spec.replicas
    launcher, launcher_warnings = _launcher_template(launcher_spec)
    worker, worker_warnings = _worker_template(worker_spec, options.target)
    backoff_limit, deadline, run_warnings = v030.run_values(spec)
    return JobPlan(
        api_version=API_VERSION,
        name=meta.name or "",
        namespace=namespace,
        workers=worker_spec.replicas,
        slots_per_worker=spec.slotsPerWorker if spec.slotsPerWorker is not None else 1,
        launcher_template=launcher,
        worker_template=worker,
        backoff_limit=backoff_limit if backoff_limit is not None else DEFAULT_BACKOFF_LIMIT,
        active_deadline_seconds=deadline,
        exec_container=spec.mainContainer,
        clean_pod_policy=spec.cleanPodPolicy or "None",
        clean_pod_policy_at=("spec", "cleanPodPolicy") if spec.cleanPodPolicy else None,
        template_paths={
            "launcher": _SPECS + ("Launcher", "template"),
            "worker": _SPECS + ("Worker", "template"),
        },
        workers_path=_SPECS + ("Worker", "replicas"),
        **v020_layout(meta.name or ""),
        **v030.layout(spec.mpiDistribution, launcher, worker),
        warnings=tuple(issues + run_warnings + launcher_warnings + worker_warnings),
    )


# Fields the operator ignored render with a warning (mpigen.inputs.ignored).
to_plan = tolerant(_to_plan, "mpi-operator v0.2.0 to v0.3.0")
