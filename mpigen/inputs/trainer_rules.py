"""What Kubeflow Trainer v2.3.0 refuses in a TrainJob and its runtime beyond their JSON schema: the CRDs'
CEL rules and list-map keys, and the checks of its webhooks (pkg/webhooks and the runtime plugins'
`Validate`), each an Issue naming the field.

- Runtime webhook (pkg/webhooks/trainingruntime_webhook.go `validateReplicatedJobs`): a job labelled as the
  trainer or an initializer step runs one replica and has its container (`node`, or the initializer's).
- TrainJob CRD: `managedBy` is Trainer's controller or MultiKueue (CEL); `runtimePatches` is a list map
  keyed by `manager`, its `replicatedJobs` by name, and so are the patched volumes, containers, env,
  mounts (the API server refuses a duplicate key).
- MPI plugin `Validate`: `numNodes` >= 2 with `runLauncherAsNode` needs both the launcher and the node
  job; `trainer.env` must not set the MPI variables the plugin sets (`MPIReservedEnvNames`).
- JobSet plugin `Validate`: each patch's `manager` a domain-prefixed path; a patch names only the
  runtime's replicated jobs and their containers, and sets no env of the `node` or initializer containers.
- mpigen's own: the launcher and node jobs of an MPI runtime run one replica; initializers are not compiled; a patched volume that changes a runtime volume's source
  (Trainer's merge would give one volume two sources); runtime volumes and mounts that reuse the names of
  the MPI plugin's volumes (Trainer would replace the runtime's silently; mpigen refuses, as for MPIJobs).
"""

from __future__ import annotations

import re
from typing import Any

from mpigen import names
from mpigen.errors import Issue, Path, shown
from mpigen.inputs import trainer_names

RJOBS: Path = ("spec", "template", "spec", "replicatedJobs")
PATCHES: Path = ("spec", "runtimePatches")
MANAGERS = (trainer_names.DEFAULT_MANAGED_BY, "kueue.x-k8s.io/multikueue")
# Trainer v2.3.0 pkg/constants: MPIReservedEnvNames (the Open MPI variables the MPI plugin sets).
MPI_RESERVED_ENV = frozenset(
    (
        "OMPI_MCA_orte_default_hostfile",
        "OMPI_MCA_orte_keep_fqdn_hostnames",
        "OMPI_MCA_orte_set_default_slots",
        "OMPI_MCA_plm_rsh_args",
    )
)
# Trainer v2.3.0 pkg/webhooks: the container each step's job must have.
STEP_CONTAINERS = {
    trainer_names.ANCESTOR_TRAINER: trainer_names.TRAINER_CONTAINER,
    **{step: step for step in trainer_names.ANCESTOR_INITIALIZERS},
}
_HTTP_PATH = re.compile(r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+")


def ancestor(job: dict[str, Any]) -> str | None:
    labels = ((job.get("template") or {}).get("metadata") or {}).get("labels") or {}
    found = labels.get(trainer_names.ANCESTOR_LABEL)
    return found if isinstance(found, str) else None


def _pod(job: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = (((job.get("template") or {}).get("spec") or {}).get("template") or {}).get(
        "spec"
    ) or {}
    return found


def runtime_webhook(spec: dict[str, Any]) -> list[Issue]:
    issues = []
    # A runtime without a template (the CRD does not require one) has no jobs to judge, as Trainer's
    # webhook reads the zero JobSetTemplateSpec.
    jobs = ((spec.get("template") or {}).get("spec") or {}).get("replicatedJobs") or []
    for index, job in enumerate(jobs):
        step = ancestor(job)
        if step not in STEP_CONTAINERS and job.get("name") in (
            trainer_names.LAUNCHER_RJOB,
            trainer_names.NODE_RJOB,
        ):
            if job.get("replicas", 1) != 1 and "mpi" in (spec.get("mlPolicy") or {}):
                message = f"must be 1 for the {job.get('name')} job of an MPI runtime: mpigen's hostfile holds one replica of each (Trainer leaves more replicas an open question, kubeflow/trainer#2318)"
                issues.append(Issue((*RJOBS, index, "replicas"), message))
            continue
        if step not in STEP_CONTAINERS:
            continue
        if job.get("replicas", 1) != 1:
            issues.append(Issue((*RJOBS, index, "replicas"), f"always must be 1 for the {step} step's job"))
        if STEP_CONTAINERS[step] not in {c.get("name") for c in _pod(job).get("containers") or []}:
            message = (
                f'must contain the required container for the ancestor {step}: "{STEP_CONTAINERS[step]}"'
            )
            issues.append(
                Issue((*RJOBS, index, "template", "spec", "template", "spec", "containers"), message)
            )
    return issues + _mpi_volume_issues(spec)


def _mpi_volume_issues(spec: dict[str, Any]) -> list[Issue]:
    """A launcher or node volume that the MPI plugin would replace (its names), or a `node` container
    mount at a path where the plugin mounts its own (the SSH keys; the hostfile on the launcher)."""
    mpi = (spec.get("mlPolicy") or {}).get("mpi")
    if mpi is None:
        return []
    issues = []
    # A runtime without a template (the CRD does not require one) has no jobs to judge, as Trainer's
    # webhook reads the zero JobSetTemplateSpec.
    jobs = ((spec.get("template") or {}).get("spec") or {}).get("replicatedJobs") or []
    for index, job in enumerate(jobs):
        if job.get("name") not in (trainer_names.LAUNCHER_RJOB, trainer_names.NODE_RJOB):
            continue
        launcher = job.get("name") == trainer_names.LAUNCHER_RJOB
        ours = {trainer_names.MPI_SSH_VOLUME} | ({trainer_names.MPI_HOSTFILE_VOLUME} if launcher else set())
        paths = {mpi.get("sshAuthMountPath")} | ({trainer_names.MPI_HOSTFILE_DIR} if launcher else set())
        pod, path = _pod(job), (*RJOBS, index, "template", "spec", "template", "spec")
        for v, volume in enumerate(pod.get("volumes") or []):
            if volume.get("name") in ours:
                message = f"{shown(volume['name'])} is the name of a volume the MPI runtime adds (Trainer would replace this one); give the volume another name"
                issues.append(Issue((*path, "volumes", v, "name"), message))
        for c, container in enumerate(pod.get("containers") or []):
            if container.get("name") != trainer_names.TRAINER_CONTAINER:
                continue
            for m, mount in enumerate(container.get("volumeMounts") or []):
                if mount.get("mountPath") in paths:
                    message = f"{shown(mount.get('mountPath'))} is where the MPI runtime mounts its own volume (Trainer would replace this mount); mount the volume elsewhere"
                    issues.append(Issue((*path, "containers", c, "volumeMounts", m, "mountPath"), message))
    return issues


def crd_rules(spec: dict[str, Any]) -> list[Issue]:
    """The TrainJob CRD's CEL rule on managedBy and the list-map keys of runtimePatches."""
    issues = []
    managed = spec.get("managedBy")
    if managed is not None and managed not in MANAGERS:
        message = f"ManagedBy must be {MANAGERS[0]} or {MANAGERS[1]} if set, got {shown(managed)}"
        issues.append(Issue(("spec", "managedBy"), message))
    patches = spec.get("runtimePatches") or []
    issues += _duplicates(PATCHES, patches, "manager")
    for index, patch in enumerate(patches):
        jobs = ((((patch.get("trainingRuntimeSpec") or {}).get("template") or {}).get("spec")) or {}).get(
            "replicatedJobs"
        ) or []
        at: Path = (*PATCHES, index, "trainingRuntimeSpec", "template", "spec", "replicatedJobs")
        issues += _duplicates(at, jobs, "name")
        for j, job in enumerate(jobs):
            pod = (((job.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
            where: Path = (*at, j, "template", "spec", "template", "spec")
            for key in ("volumes", "initContainers", "containers", "imagePullSecrets", "schedulingGates"):
                issues += _duplicates((*where, key), pod.get(key) or [], "name")
            for key in ("initContainers", "containers"):
                for c, container in enumerate(pod.get(key) or []):
                    issues += _duplicates((*where, key, c, "env"), container.get("env") or [], "name")
                    issues += _duplicates(
                        (*where, key, c, "volumeMounts"), container.get("volumeMounts") or [], "name"
                    )
    return issues


def _duplicates(path: Path, items: list[Any], key: str) -> list[Issue]:
    seen: set[Any] = set()
    issues = []
    for index, item in enumerate(items):
        value = item.get(key) if isinstance(item, dict) else None
        if value in seen:
            issues.append(
                Issue((*path, index, key), f"Duplicate value: {shown(str(value))} (a list keyed by {key})")
            )
        seen.add(value)
    return issues


def trainjob_webhook(spec: dict[str, Any], runtime: dict[str, Any]) -> list[Issue]:
    """The MPI and JobSet plugins' Validate, and what mpigen does not compile (initializers)."""
    issues: list[Issue] = []
    trainer, mpi = spec.get("trainer") or {}, runtime["mlPolicy"]["mpi"]
    jobs = {job["name"]: job for job in runtime["template"]["spec"].get("replicatedJobs") or []}
    if (
        trainer.get("numNodes", 1) >= 2
        and mpi["runLauncherAsNode"]
        and not {trainer_names.LAUNCHER_RJOB, trainer_names.NODE_RJOB} <= set(jobs)
    ):
        message = "must have 1 when MPI trainingRuntime with enabled runLauncherAsNode does not have either launcher and node"
        issues.append(Issue(("spec", "trainer", "numNodes"), message))
    reserved = sorted({var.get("name") for var in trainer.get("env") or []} & MPI_RESERVED_ENV)
    if reserved:
        message = f"must not have reserved envs, invalid envs configured: {', '.join(reserved)} (the MPI runtime sets them)"
        issues.append(Issue(("spec", "trainer", "env"), message))
    for step in ("dataset", "model"):
        if (spec.get("initializer") or {}).get(step) is not None:
            message = f"the {step} initializer is not compiled by mpigen (the MPI runtimes have no initializer jobs)"
            issues.append(Issue(("spec", "initializer", step), message))
    for index, patch in enumerate(spec.get("runtimePatches") or []):
        issues += _patch_issues((*PATCHES, index), patch, jobs)
    return issues


def _manager_issues(path: Path, manager: str) -> list[Issue]:
    """apimachinery `IsDomainPrefixedPath`."""
    host, _, rest = manager.partition("/")
    if not host or not rest:
        return [Issue(path, f'{shown(manager)} must be a domain-prefixed path (such as "acme.io/foo")')]
    if not names.is_dns1123_subdomain(host):
        return [Issue(path, f"{shown(host)} must be a DNS subdomain (the manager's domain)")]
    if not _HTTP_PATH.fullmatch(rest):
        return [Issue(path, f"{shown(rest)}: Invalid path: must match {_HTTP_PATH.pattern}")]
    return []


def _patch_issues(path: Path, patch: dict[str, Any], jobs: dict[str, dict[str, Any]]) -> list[Issue]:
    issues = _manager_issues((*path, "manager"), patch["manager"])
    spec = (((patch.get("trainingRuntimeSpec") or {}).get("template") or {}).get("spec")) or {}
    at: Path = (*path, "trainingRuntimeSpec", "template", "spec", "replicatedJobs")
    for index, job_patch in enumerate(spec.get("replicatedJobs") or []):
        name = job_patch["name"]
        if name not in jobs:
            message = f"must not have replicated job that doesn't exist in the runtime job template: {shown(name)} (it has {', '.join(sorted(jobs)) or 'none'})"
            issues.append(Issue((*at, index, "name"), message))
            continue
        pod = (((job_patch.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
        where: Path = (*at, index, "template", "spec", "template", "spec")
        issues += _container_issues(where, pod, name, jobs[name]) + _volume_issues(where, pod, jobs[name])
    return issues


def _container_issues(path: Path, pod: dict[str, Any], name: str, job: dict[str, Any]) -> list[Issue]:
    runtime_pod = _pod(job)
    have = {
        c.get("name")
        for c in (runtime_pod.get("initContainers") or []) + (runtime_pod.get("containers") or [])
    }
    issues = []
    for key in ("initContainers", "containers"):
        for index, container in enumerate(pod.get(key) or []):
            what = "initContainer" if key == "initContainers" else "container"
            if container["name"] not in have:
                message = f"must not have {what} that doesn't exist in the runtime job {name}: {shown(container['name'])}"
                issues.append(Issue((*path, key, index, "name"), message))
            elif (
                key == "containers" and container.get("env") and container["name"] in STEP_CONTAINERS.values()
            ):
                message = f"must not have envs for the {', '.join(STEP_CONTAINERS.values())} containers: use spec.trainer.env"
                issues.append(Issue((*path, key, index, "env"), message))
    return issues


def _volume_issues(path: Path, pod: dict[str, Any], job: dict[str, Any]) -> list[Issue]:
    """A volume the patch names again with another source: Trainer's strategic merge (no retainKeys
    directive) would keep both sources, a volume the API server refuses when the Job is created."""
    runtime = {v.get("name"): v for v in _pod(job).get("volumes") or []}
    issues = []
    for index, volume in enumerate(pod.get("volumes") or []):
        old = runtime.get(volume["name"])
        ours, theirs = sorted(set(volume) - {"name"}), sorted(set(old or {}) - {"name"})
        if old is not None and ours != theirs:
            message = (
                f"replaces the source of the runtime's volume {shown(volume['name'])} ({', '.join(theirs)}) with "
                f"{', '.join(ours)}: Trainer v2.3.0 would merge the two into one volume of two sources, which "
                "Kubernetes refuses; give the volume another name"
            )
            issues.append(Issue((*path, "volumes", index), message))
    return issues
