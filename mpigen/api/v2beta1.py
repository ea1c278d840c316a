"""Front for `kubeflow.org/v2beta1` MPIJobs (mpi-operator v0.5 to v0.8): the input model and its checks.

Mirrors mpi-operator release-0.8 `pkg/apis/kubeflow/v2beta1/{types,default,constants}.go`, the CRD
(`manifests/base/kubeflow.org_mpijobs.yaml`) and `pkg/apis/kubeflow/validation/validation.go`. `load`
parses a document, applies the operator's defaults and returns a `V2Beta1Job`, or raises CompileError
with every problem. Where the operator accepts nonsense silently, mpigen refuses it or warns:

- an unknown `launcherCreationPolicy` (the CRD's enum marker is malformed, so the API server accepts
  any string, and the controller treats everything but AtStartup as WaitForWorkersReady): error;
- an unknown `managedBy` (the controller skips the job before validating it): error;
- `slotsPerWorker: 0` (validation only demands >= 0; the hostfile then offers no slots): error;
- `activeDeadlineSeconds: 0` (the launcher Job fails at once, DeadlineExceeded): error;
- a relative `sshAuthMountPath`: error;
- no Worker and `runLauncherAsWorker` false (an empty hostfile): warning;
- a template `restartPolicy` that the replica's replaces: warning.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from mpigen import names
from mpigen.api import runpolicy
from mpigen.api.common import (
    INT32_MAX,
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
)
from mpigen.api.fields import explain_unknown_fields
from mpigen.errors import CompileError, Issue
from mpigen.options import Options

API_VERSION = "kubeflow.org/v2beta1"
CONTROLLER = "kubeflow.org/mpi-operator"
INT32_MIN = -(2**31)
DEFAULT_SSH_AUTH_MOUNT_PATH = "/root/.ssh"
# constants.go: DefaultLauncherRestartPolicy and DefaultRestartPolicy.
DEFAULT_LAUNCHER_RESTART_POLICY = "OnFailure"
DEFAULT_WORKER_RESTART_POLICY = "Never"

MPIImplementation = Literal["OpenMPI", "Intel", "MPICH"]
LauncherCreationPolicy = Literal["AtStartup", "WaitForWorkersReady"]
RestartPolicy = Literal["Never", "OnFailure"]


class ReplicaSpec(Strict):
    replicas: int | None = Field(default=None, ge=INT32_MIN, le=INT32_MAX)
    template: PodTemplate | None = None
    restartPolicy: RestartPolicy | None = None


class MPIReplicaSpecs(Strict):
    Launcher: ReplicaSpec | None = None
    Worker: ReplicaSpec | None = None


class MPIJobSpec(Strict):
    slotsPerWorker: int | None = Field(default=None, ge=1, le=INT32_MAX)
    runLauncherAsWorker: bool | None = None
    runPolicy: runpolicy.RunPolicy | None = None
    mpiReplicaSpecs: MPIReplicaSpecs
    sshAuthMountPath: str | None = None
    launcherCreationPolicy: LauncherCreationPolicy | None = None
    mpiImplementation: MPIImplementation | None = None


class MPIJob(Strict):
    apiVersion: Literal["kubeflow.org/v2beta1"]
    kind: Literal["MPIJob"]
    metadata: ObjectMeta | None = None
    spec: MPIJobSpec
    status: Any = None


@dataclass(frozen=True)
class Replica:
    replicas: int
    restart_policy: str
    template: dict[str, Any]


@dataclass(frozen=True)
class V2Beta1Job:
    """A checked v2beta1 job with the operator's defaults applied (default.go SetDefaults_MPIJob)."""

    name: str
    namespace: str | None
    subject_namespace: str
    annotations: dict[str, str]
    slots_per_worker: int
    run_launcher_as_worker: bool
    ssh_auth_mount_path: str
    launcher_creation_policy: str
    mpi_implementation: str
    launcher: Replica
    worker: Replica | None
    run: runpolicy.Run
    warnings: tuple[Issue, ...] = ()

    @property
    def workers(self) -> int:
        return self.worker.replicas if self.worker is not None else 0


_SPECS = ("spec", "mpiReplicaSpecs")


def _check_replicas(specs: MPIReplicaSpecs, options: Options) -> list[Issue]:
    issues = []
    launcher, worker = specs.Launcher, specs.Worker
    if launcher is None:
        issues.append(Issue(_SPECS + ("Launcher",), "required: an MPIJob needs exactly one Launcher"))
    elif launcher.replicas not in (None, 1):
        issues.append(Issue(_SPECS + ("Launcher", "replicas"), f"must be 1, got {launcher.replicas}"))
    if worker is not None and worker.replicas is None:
        message = "required field is missing (the operator defaults it to 0 and then refuses the job)"
        issues.append(Issue(_SPECS + ("Worker", "replicas"), message))
    elif worker is not None and worker.replicas is not None and worker.replicas < 1:
        issues.append(Issue(_SPECS + ("Worker", "replicas"), f"must be >= 1, got {worker.replicas}"))
    for role, spec in (("Launcher", launcher), ("Worker", worker)):
        if spec is not None:
            path = _SPECS + (role, "template")
            shape = check_pod_template(spec.template, path)
            if options.validate and not shape:
                shape = check_pod_template_strictly(spec.template, path, options.kube_version)
            issues += shape
    return issues


def check_worker_hostname(job: str, workers: int) -> list[Issue]:
    """validation.go validateMPIJobName: the last worker's hostname must be a DNS-1035 label."""
    hostname = names.worker_pod(job, max(workers, 1) - 1)
    if len(hostname) > names.DNS1123_LABEL_MAX:
        reason = f"it has {len(hostname)} characters, at most {names.DNS1123_LABEL_MAX} are allowed"
    elif not names.is_dns1035_label(hostname):
        reason = "a DNS-1035 label starts with a lower-case letter"
    else:
        return []
    message = f'the last worker pod\'s hostname "{hostname}" is not a valid DNS-1035 label: {reason}'
    return [Issue(("metadata", "name"), message)]


def _check_spec(spec: MPIJobSpec) -> list[Issue]:
    issues = []
    path = spec.sshAuthMountPath
    if path and not path.startswith("/"):
        issues.append(Issue(("spec", "sshAuthMountPath"), f'must be an absolute path, got "{path}"'))
    if spec.mpiReplicaSpecs.Worker is None and not spec.runLauncherAsWorker:
        message = "no Worker and runLauncherAsWorker is false: the hostfile lists no hosts"
        issues.append(Issue(_SPECS, message, "warning"))
    return issues


def _template_warnings(specs: MPIReplicaSpecs) -> list[Issue]:
    warnings = []
    for role, spec, default in (
        ("Launcher", specs.Launcher, DEFAULT_LAUNCHER_RESTART_POLICY),
        ("Worker", specs.Worker, DEFAULT_WORKER_RESTART_POLICY),
    ):
        if spec is not None:
            path = _SPECS + (role, "template")
            policy = spec.restartPolicy or default
            warnings += runpolicy.template_restart_policy_warnings(spec.template, path, role, policy)
    return warnings


def _replica(spec: ReplicaSpec, replicas: int, default_policy: str) -> Replica:
    return Replica(replicas, spec.restartPolicy or default_policy, dict(spec.template or {}))


def load(document: dict[str, Any], options: Options) -> V2Beta1Job:
    """Parse, check and default one v2beta1 MPIJob; CompileError carries every problem found."""
    job, issues = parse_model(MPIJob, document)
    if job is None:
        issues = explain_unknown_fields(issues, API_VERSION)
        paths = [_SPECS + (role, "template") for role in ("Launcher", "Worker")]
        raise CompileError(issues + check_raw_templates(document, paths, options), name=name_of(document))
    meta = job.metadata or ObjectMeta()
    spec = job.spec
    specs = spec.mpiReplicaSpecs
    workers = (specs.Worker.replicas or 0) if specs.Worker is not None else 0
    name_issues = check_metadata(job.metadata)
    if meta.name and not name_issues:
        name_issues = check_worker_hostname(meta.name, workers)
    replica_issues = _check_replicas(specs, options)
    # A gang's minAvailable is checked against the pod count only when that count is known.
    pods = None if replica_issues else 1 + workers
    issues = name_issues + replica_issues + _check_spec(spec)
    issues += runpolicy.check_run_policy(spec.runPolicy, ("spec", "runPolicy"), CONTROLLER, pods)
    namespace, subject_ns, ns_issues = resolve_namespace(meta.namespace, options.namespace)
    issues += ns_issues
    errors = [issue for issue in issues if issue.severity == "error"]
    if errors:
        raise CompileError(errors, name=meta.name or "")
    assert specs.Launcher is not None and meta.name is not None
    worker = _replica(specs.Worker, workers, DEFAULT_WORKER_RESTART_POLICY) if specs.Worker else None
    return V2Beta1Job(
        name=meta.name,
        namespace=namespace,
        subject_namespace=subject_ns,
        annotations=dict(meta.annotations or {}),
        slots_per_worker=spec.slotsPerWorker if spec.slotsPerWorker is not None else 1,
        run_launcher_as_worker=bool(spec.runLauncherAsWorker),
        # default.go: an empty sshAuthMountPath becomes /root/.ssh as well.
        ssh_auth_mount_path=spec.sshAuthMountPath or DEFAULT_SSH_AUTH_MOUNT_PATH,
        launcher_creation_policy=spec.launcherCreationPolicy or "AtStartup",
        mpi_implementation=spec.mpiImplementation or "OpenMPI",
        launcher=_replica(specs.Launcher, 1, DEFAULT_LAUNCHER_RESTART_POLICY),
        worker=worker,
        run=runpolicy.resolve(spec.runPolicy),
        warnings=tuple(issues + _template_warnings(specs)),
    )
