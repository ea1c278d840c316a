"""Front for `kubeflow.org/v2beta1` MPIJobs (mpi-operator v0.5 to v0.8): the input model and its checks.

Mirrors mpi-operator release-0.8 `pkg/apis/kubeflow/v2beta1/{types,default,constants}.go`, the CRD
(`manifests/base/kubeflow.org_mpijobs.yaml`) and `pkg/apis/kubeflow/validation/validation.go`. `load`
parses a document, applies the operator's defaults and returns a `V2Beta1Job`, or raises CompileError
with every problem; `to_plan` turns it into the `JobPlan` the builders compile. Where the operator
accepts nonsense silently, mpigen refuses it or warns:

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

from typing import Any, Literal

from mpigen import names, tree
from mpigen.checks.kube.versions import default_kube_version
from mpigen.errors import CompileError, Issue
from mpigen.inputs import runpolicy
from mpigen.inputs.fields import explain_unknown_fields
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
from mpigen.plan import Hostnames, JobPlan, JobService, Labels, Scheduling, Ssh
from mpigen.records import Record

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


class Replica(Record):
    replicas: int
    restart_policy: str
    template: dict[str, Any]


class V2Beta1Job(Record):
    """A checked v2beta1 job with the operator's defaults applied (default.go SetDefaults_MPIJob)."""

    name: str
    namespace: str | None
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


_WORKER = WorkerRule(
    required=False,
    least=1,
    missing="required field is missing (the operator defaults it to 0 and then refuses the job)",
)


def _check_replicas(specs: MPIReplicaSpecs, options: Options) -> list[Issue]:
    return check_replicas(specs.Launcher, specs.Worker, options, _WORKER)


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
    # The Worker's restartPolicy is not applied at all: _worker_warnings says what the pods get.
    for role, spec, default in (("Launcher", specs.Launcher, DEFAULT_LAUNCHER_RESTART_POLICY),):
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
    namespace, ns_issues = resolve_namespace(meta.namespace, options.namespace)
    issues += ns_issues
    errors = [issue for issue in issues if issue.severity == "error"]
    if errors:
        raise CompileError(errors, name=meta.name or "")
    assert specs.Launcher is not None and meta.name is not None
    worker = _replica(specs.Worker, workers, DEFAULT_WORKER_RESTART_POLICY) if specs.Worker else None
    return V2Beta1Job(
        name=meta.name,
        namespace=namespace,
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


# --- the plan ----------------------------------------------------------------------------------------

# Job.spec.podReplacementPolicy is on by default from Kubernetes 1.29 (beta); the 1.25-1.28 schemas refuse it.
POD_REPLACEMENT_SINCE = (1, 29)


def _pod_replacement(options: Options) -> bool:
    major, minor = (options.kube_version or default_kube_version()).split(".")[:2]
    return (int(major), int(minor)) >= POD_REPLACEMENT_SINCE


def _labels(job: V2Beta1Job) -> Labels:
    launcher = names.training_labels(job.name, names.ROLE_LAUNCHER)
    if job.run_launcher_as_worker:
        # v0.8.2: the launcher is replica 0 of the hosts (workers are not labelled: docs/departures.md).
        launcher[names.REPLICA_INDEX_LABEL] = "0"
    app = names.app_labels(job.name)
    return Labels(launcher, names.training_labels(job.name, names.ROLE_WORKER), app, app, app)


def _scheduling(job: V2Beta1Job) -> Scheduling:
    """v0.8.2 podgroup.go: the queue falls back to Volcano's queue-name annotation on the MPIJob, the
    priority class to the launcher's, then the worker's template."""
    policy = job.run.scheduling
    templates = [job.launcher.template] + ([job.worker.template] if job.worker else [])
    own = [t.get("spec", {}).get("priorityClassName") for t in templates]
    priority = (policy.priority_class if policy else None) or next((p for p in own if p), None)
    queue = (policy.queue if policy else None) or job.annotations.get(names.VOLCANO_QUEUE_ANNOTATION)
    return Scheduling(
        min_available=policy.min_available if policy else None,
        queue=queue or None,
        min_resources=policy.min_resources if policy else None,
        priority_class=priority,
        # v0.8.2 podgroup.go: scheduler-plugins' timeout defaults to 0.
        schedule_timeout_seconds=(policy.schedule_timeout_seconds if policy else None) or 0,
        overwrite_scheduler_name=True,
        operator_fields=True,
        written_at=runpolicy.SCHEDULING_POLICY if policy else None,
    )


def _launcher_template(job: V2Beta1Job) -> dict[str, Any]:
    template = tree.copy(job.launcher.template)
    template.setdefault("spec", {})["restartPolicy"] = job.launcher.restart_policy
    return template


def _worker_warnings(document: dict[str, Any], target: str) -> list[Issue]:
    worker = document["spec"]["mpiReplicaSpecs"].get("Worker")
    return runpolicy.worker_restart_warnings(worker, _SPECS + ("Worker",), target)


def _namespace_warning(job: V2Beta1Job, waits: bool, options: Options) -> list[Issue]:
    """Without a namespace the hostfile names hosts `<pod>.<job>`; say that, and which bindings guess."""
    out = []
    for issue in job.warnings:
        if issue.path == ("metadata", "namespace") and issue.severity == "warning":
            bindings = [
                name for name, on in (("launcher", waits), ("ssh-keygen", options.ssh_secret is None)) if on
            ]
            message = (
                f'no namespace set: the hostfile names hosts "<pod>.{job.name}" (the pods\' DNS search path '
                "completes them)"
            )
            if bindings:
                which = " and ".join(f"{name} RoleBinding" for name in bindings)
                message += f'; the {which} name{"s" if len(bindings) == 1 else ""} its ServiceAccount in namespace "default"'
            issue = Issue(
                issue.path,
                message + ": set metadata.namespace or --namespace if you apply elsewhere",
                "warning",
            )
        out.append(issue)
    return out


def to_plan(document: dict[str, Any], options: Options) -> JobPlan:
    job = load(document, options)
    run = job.run
    waits = job.launcher_creation_policy == "WaitForWorkersReady" and job.workers > 0
    own_account = job.launcher.template.get("spec", {}).get("serviceAccountName")
    secret = options.ssh_secret or names.ssh_secret(job.name)
    return JobPlan(
        api_version=API_VERSION,
        name=job.name,
        namespace=job.namespace,
        workers=job.workers,
        slots_per_worker=job.slots_per_worker,
        launcher_template=_launcher_template(job),
        worker_template=tree.copy(job.worker.template) if job.worker else {},
        backoff_limit=run.backoff_limit,
        active_deadline_seconds=run.active_deadline_seconds,
        clean_pod_policy=run.clean_pod_policy,
        labels=_labels(job),
        service=JobService(
            names.job_service(job.name),
            names.app_labels(job.name),
            names.training_labels(job.name),
            job.run_launcher_as_worker,
        ),
        warnings=tuple(_namespace_warning(job, waits, options) + _worker_warnings(document, options.target)),
        template_paths={
            "launcher": _SPECS + ("Launcher", "template"),
            "worker": _SPECS + ("Worker", "template"),
        },
        workers_path=_SPECS + ("Worker", "replicas"),
        implementation=job.mpi_implementation,  # type: ignore[arg-type]
        ssh=Ssh(job.ssh_auth_mount_path, secret, options.ssh_secret is None),
        hostnames=Hostnames(
            fqdn=True,
            cluster_domain=options.cluster_domain,
            slot_syntax="slots=" if job.mpi_implementation == "OpenMPI" else ":",
            launcher_first=job.run_launcher_as_worker,
        ),
        launcher_creation=job.launcher_creation_policy,  # type: ignore[arg-type]
        blank_launcher_gpus=not job.run_launcher_as_worker,
        launcher_service_account=own_account if (waits and own_account) else None,
        ttl_seconds_after_finished=run.ttl_seconds_after_finished,
        managed_by=run.managed_by,
        clean_pod_policy_at=run.clean_pod_policy_at,
        suspend=run.suspend,
        pod_replacement_failed=_pod_replacement(options),
        scheduling=_scheduling(job),
        discover_hosts="hosts",
    )
