"""Front for `kubeflow.org/v1` MPIJobs (the Kubeflow training-operator 1.9): the input model and its checks.

Mirrors training-operator release-1.9 `pkg/apis/kubeflow.org/v1/{mpi_types,mpi_defaults,
mpi_validation,common_types}.go` and the CRD `manifests/base/crds/kubeflow.org_mpijobs.yaml`. `load`
parses a document, applies the operator's defaults and returns a `V1Job`, or raises CompileError
with every problem; `to_plan` turns it into the `JobPlan` the builders compile (mpigen.inputs.v1_plan). The operator's own checks (ValidateV1MpiJobSpec): a Launcher is required and has
at most one replica; every replica has containers, each with a name and an image; no replica types
other than Launcher and Worker. Beyond them mpigen refuses what the operator accepts silently:

- `slotsPerWorker` below 1 (no validation at all; the hostfile then offers no slots): error;
- a Launcher `restartPolicy: Always` (a launcher that always restarts never finishes): error;
- a `mainContainer` that names no Worker container (kubexec.sh would exec into nothing): error;
- an unknown `managedBy` (the operator skips the job silently): error;
- `spec.cleanPodPolicy` and `spec.runPolicy.cleanPodPolicy` disagreeing (runPolicy's wins): warning;
- no workers (the hostfile lists at most a GPU launcher): warning.
"""

from __future__ import annotations

from typing import Any, Literal

from mpigen import names
from mpigen.errors import CompileError, Issue, Path, shown
from mpigen.inputs import runpolicy
from mpigen.inputs.fields import V1, explain_unknown_fields
from mpigen.inputs.model import Field
from mpigen.inputs.shared import (
    INT32_MAX,
    ObjectMeta,
    PodTemplate,
    Strict,
    WorkerRule,
    check_metadata,
    check_raw_templates,
    check_replicas,
    name_of,
    parse_model,
    resolve_namespace,
)
from mpigen.options import Options
from mpigen.plan import JobPlan
from mpigen.records import Record

API_VERSION = V1
CONTROLLER = "kubeflow.org/training-operator"
INT32_MIN = -(2**31)
# mpi_types.go MPIJobDefaultRestartPolicy, for the Launcher and the Worker alike.
DEFAULT_RESTART_POLICY = "Never"

RestartPolicy = Literal["Always", "OnFailure", "Never", "ExitCode"]


class ReplicaSpec(Strict):
    replicas: int | None = Field(default=None, ge=INT32_MIN, le=INT32_MAX)
    template: PodTemplate | None = None
    restartPolicy: RestartPolicy | None = None


class MPIReplicaSpecs(Strict):
    Launcher: ReplicaSpec | None = None
    Worker: ReplicaSpec | None = None


class MPIJobSpec(Strict):
    slotsPerWorker: int | None = Field(default=None, ge=1, le=INT32_MAX)
    # Deprecated in favour of runPolicy.cleanPodPolicy, still read by the operator.
    cleanPodPolicy: runpolicy.CleanPodPolicy | None = None
    mpiReplicaSpecs: MPIReplicaSpecs
    mainContainer: str | None = None
    runPolicy: runpolicy.RunPolicy | None = None


class MPIJob(Strict):
    apiVersion: Literal["kubeflow.org/v1"]
    kind: Literal["MPIJob"]
    metadata: ObjectMeta | None = None
    spec: MPIJobSpec
    status: Any = None


class Replica(Record):
    replicas: int
    restart_policy: str
    template: dict[str, Any]


class V1Job(Record):
    """A checked v1 job with the operator's defaults applied (mpi_defaults.go SetDefaults_MPIJob)."""

    name: str
    namespace: str | None
    annotations: dict[str, str]
    slots_per_worker: int
    main_container: str | None
    launcher: Replica
    worker: Replica | None
    run: runpolicy.Run
    warnings: tuple[Issue, ...] = ()

    @property
    def workers(self) -> int:
        return self.worker.replicas if self.worker is not None else 0


_SPECS = ("spec", "mpiReplicaSpecs")


def _check_containers(template: Any, path: Path, role: str) -> list[Issue]:
    """mpi_validation.go: every container of every replica needs an image and a name."""
    containers = (template.get("spec") or {}).get("containers") if isinstance(template, dict) else None
    issues = []
    for index, container in enumerate(containers if isinstance(containers, list) else []):
        for key in ("name", "image"):
            if isinstance(container, dict) and not container.get(key):
                message = f"required: the operator refuses a {role} container without {key}"
                issues.append(Issue(path + ("spec", "containers", index, key), message))
    return issues


# kubeflow.org/v1 (ValidateV1MpiJobSpec): a Worker may be left out or have 0 replicas.
_WORKER = WorkerRule(required=False, least=0, missing=None)


def _check_replicas(specs: MPIReplicaSpecs, options: Options) -> list[Issue]:
    return check_replicas(
        specs.Launcher, specs.Worker, options, _WORKER, always_restarts=True, containers=_check_containers
    )


def check_main_container(spec: MPIJobSpec) -> list[Issue]:
    """kubexec.sh runs `kubectl exec <pod> --container <mainContainer>` in the worker pods."""
    main, worker = spec.mainContainer, spec.mpiReplicaSpecs.Worker
    if not main or worker is None or not isinstance(worker.template, dict):
        return []
    pod = worker.template.get("spec")
    containers = pod.get("containers") if isinstance(pod, dict) else None
    # a template that is no pod template is reported by the template checks; only a list is read here
    container_names = (
        [c.get("name") for c in containers if isinstance(c, dict)] if isinstance(containers, list) else []
    )
    if main not in container_names or not names.is_dns1123_label(main):
        listed = ", ".join(shown(str(n)) for n in container_names)
        return [
            Issue(
                ("spec", "mainContainer"),
                f"{shown(main)} names no container of the Worker template ({listed})",
            )
        ]
    if main != container_names[0]:
        message = (
            f"{shown(main)} is not the Worker's first container: the operator mounts /etc/mpi and sets the "
            "command only on the first, so ranks exec'd into this one do not find kubexec.sh"
        )
        return [Issue(("spec", "mainContainer"), message, "warning")]
    return []


def _warnings(spec: MPIJobSpec, workers: int) -> list[Issue]:
    warnings = []
    run_policy = spec.runPolicy.cleanPodPolicy if spec.runPolicy else None
    if spec.cleanPodPolicy and run_policy and spec.cleanPodPolicy != run_policy:
        message = f'"{spec.cleanPodPolicy}" is ignored: spec.runPolicy.cleanPodPolicy "{run_policy}" wins'
        warnings.append(Issue(("spec", "cleanPodPolicy"), message, "warning"))
    if workers == 0:
        message = "no workers: the hostfile lists only the launcher, and only when it asks for a GPU"
        warnings.append(Issue(_SPECS, message, "warning"))
    # The workers' restartPolicy is not applied at all (mpigen.inputs.v1_plan); the launcher's replaces
    # the template's.
    launcher = spec.mpiReplicaSpecs.Launcher
    if launcher is not None:
        path = _SPECS + ("Launcher", "template")
        policy = launcher.restartPolicy or DEFAULT_RESTART_POLICY
        pod_policy = "Never" if policy == "ExitCode" else policy
        warnings += runpolicy.template_restart_policy_warnings(
            launcher.template, path, "Launcher", pod_policy
        )
    return warnings


def _replica(spec: ReplicaSpec, replicas: int) -> Replica:
    return Replica(replicas, spec.restartPolicy or DEFAULT_RESTART_POLICY, dict(spec.template or {}))


def load(document: dict[str, Any], options: Options) -> V1Job:
    """Parse, check and default one v1 MPIJob; CompileError carries every problem found."""
    job, issues = parse_model(MPIJob, document)
    if job is None:
        issues = explain_unknown_fields(issues, API_VERSION)
        paths = [_SPECS + (role, "template") for role in ("Launcher", "Worker")]
        raise CompileError(issues + check_raw_templates(document, paths, options), name=name_of(document))
    meta = job.metadata or ObjectMeta()
    spec = job.spec
    specs = spec.mpiReplicaSpecs
    # mpi_defaults.go: a Worker without replicas has 0.
    workers = (specs.Worker.replicas or 0) if specs.Worker is not None else 0
    replica_issues = _check_replicas(specs, options)
    pods = None if replica_issues else 1 + workers
    issues = check_metadata(job.metadata) + replica_issues + check_main_container(spec)
    issues += runpolicy.check_run_policy(spec.runPolicy, ("spec", "runPolicy"), CONTROLLER, pods)
    namespace, ns_issues = resolve_namespace(meta.namespace, options.namespace)
    issues += ns_issues
    errors = [issue for issue in issues if issue.severity == "error"]
    if errors:
        raise CompileError(errors, name=meta.name or "")
    assert specs.Launcher is not None and meta.name is not None
    return V1Job(
        name=meta.name,
        namespace=namespace,
        annotations=dict(meta.annotations or {}),
        slots_per_worker=spec.slotsPerWorker if spec.slotsPerWorker is not None else 1,
        main_container=spec.mainContainer,
        launcher=_replica(specs.Launcher, 1),
        worker=_replica(specs.Worker, workers) if specs.Worker is not None else None,
        run=runpolicy.resolve(spec.runPolicy, spec.cleanPodPolicy),
        warnings=tuple(issues + _warnings(spec, workers)),
    )


def to_plan(document: dict[str, Any], options: Options) -> JobPlan:
    # deferred: a v1alpha2 job loads this module for its container checks, without the v1 planner
    from mpigen.inputs.v1_plan import plan_job

    return plan_job(load(document, options), document, options.target)
