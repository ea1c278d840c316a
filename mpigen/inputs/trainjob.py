"""Front for Kubeflow Trainer `trainer.kubeflow.org/v1alpha1` TrainJobs with an MPI runtime (Trainer v2.0.0).

A TrainJob names a ClusterTrainingRuntime (cluster-wide) or a TrainingRuntime (in its namespace); both
come in the same input (stream or directory). `Runtimes` collects them once, checked against their
schema (tools/trainerschema.py) and Trainer's runtime webhook; `to_plan` checks a TrainJob the same way,
applies the CRDs' defaults to both as the API server would (mpigen.inputs.trainer_merge), runs the
checks of Trainer's TrainJob webhook (pkg/webhooks, the MPI and JobSet plugins' `Validate`) and merges
the `podSpecOverrides` into the runtime's JobSet template, as `newRuntimeInfo` does. The jobset target
turns the resulting TrainPlan into the objects (mpigen.targets.jobset.trainjob).

Beyond Trainer: `mlPolicy.mpi.mpiImplementation` may be `Intel` or `MPICH` (Trainer v2.0.0 takes
OpenMPI only). Refused: every other ML policy (torch, none), with a message saying so.
"""

from __future__ import annotations

from typing import Any

from mpigen import names, tree
from mpigen.checks.kube.validator import validate_object
from mpigen.errors import CompileError, Issue, Path, shown
from mpigen.inputs import trainer_names
from mpigen.inputs.shared import name_of, resolve_namespace
from mpigen.inputs.trainer_merge import apply_defaults, merge_pod_spec
from mpigen.options import Options
from mpigen.plan import TrainPlan

RuntimeKey = tuple[str, str, str]  # kind, namespace ("" for a ClusterTrainingRuntime), name
RJOBS: Path = ("spec", "template", "spec", "replicatedJobs")


def is_runtime(document: dict[str, Any]) -> bool:
    return (
        document.get("apiVersion") == trainer_names.TRAINER_API
        and document.get("kind") in trainer_names.RUNTIME_KINDS
    )


def is_trainjob(document: dict[str, Any]) -> bool:
    return (
        document.get("apiVersion") == trainer_names.TRAINER_API
        and document.get("kind") == trainer_names.TRAINJOB_KIND
    )


def _schema_issues(document: dict[str, Any], options: Options) -> list[Issue]:
    return validate_object(document, options.kube_version)


class Runtimes:
    """The runtimes of one input, by kind, namespace and name; a runtime with problems is kept as None
    (its problems are reported at its own document; a TrainJob naming it says so)."""

    __slots__ = ("found",)

    def __init__(self) -> None:
        self.found: dict[RuntimeKey, dict[str, Any] | None] = {}

    def add(self, document: dict[str, Any], options: Options) -> list[Issue]:
        """Check and keep one runtime document; its problems (a duplicate is one)."""
        issues = _schema_issues(document, options)
        key = runtime_key(document, options)
        if key in self.found:
            what = f'{key[0]} "{key[2]}"' + (f' in namespace "{key[1]}"' if key[1] else "")
            return [Issue(("metadata", "name"), f"{what} is given twice in the input; keep one")]
        issues += [] if issues else _runtime_webhook(document)
        self.found[key] = None if issues else apply_defaults(document["kind"], document["spec"])
        return issues


def runtime_key(document: dict[str, Any], options: Options) -> RuntimeKey:
    kind, meta = document.get("kind"), document.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    namespace = "" if kind == "ClusterTrainingRuntime" else (meta.get("namespace") or options.namespace or "")
    return (str(kind), str(namespace), name_of(document))


def _runtime_webhook(document: dict[str, Any]) -> list[Issue]:
    """Trainer's runtime webhook (pkg/webhooks/trainingruntime_webhook.go): the launcher job and the jobs
    of the trainer and initializer steps run one replica. (A runtime with another ML policy is refused
    only when a TrainJob names it: a folder may hold every runtime of a cluster.)"""
    spec, issues = document["spec"], []
    for index, job in enumerate(spec["template"]["spec"].get("replicatedJobs") or []):
        labels = ((job.get("template") or {}).get("metadata") or {}).get("labels") or {}
        ancestor = labels.get(trainer_names.ANCESTOR_LABEL)
        keyed = job.get("name") == trainer_names.LAUNCHER_RJOB or ancestor in (
            trainer_names.ANCESTOR_TRAINER,
            *trainer_names.ANCESTOR_INITIALIZERS,
        )
        if keyed and job.get("replicas", 1) != 1:
            issues.append(
                Issue(
                    (*RJOBS, index, "replicas"),
                    f"must be 1 for the {job.get('name')} job (Trainer's webhook)",
                )
            )
    return issues


def _policy_issues(kind: str, name: str, policy: dict[str, Any] | None) -> list[Issue]:
    """mpigen compiles MPI runtimes only: a torch runtime, or one with no ML policy, is refused at the
    TrainJob that names it."""
    path: Path = ("spec", "runtimeRef", "name")
    if not policy or "mpi" not in policy:
        other = sorted(k for k in (policy or {}) if k != "numNodes")
        what = f"has mlPolicy.{other[0]}" if other else "has no ML policy (plain)"
        message = f'{kind} "{name}" {what}: mpigen compiles MPI runtimes only (mlPolicy.mpi); run this TrainJob with Kubeflow Trainer\'s controller'
        return [Issue(path, message)]
    if "torch" in policy:
        return [
            Issue(
                path,
                f'{kind} "{name}" has both mlPolicy.mpi and mlPolicy.torch, which are exclusive (Trainer\'s CEL rule)',
            )
        ]
    return []


def to_plan(document: dict[str, Any], runtimes: Runtimes, options: Options) -> TrainPlan:
    """The TrainPlan of one TrainJob, or CompileError with every problem (each with its field path)."""
    issues = _schema_issues(document, options)
    if issues:
        raise CompileError(issues, kind=trainer_names.TRAINJOB_KIND, name=name_of(document))
    name, spec = document["metadata"]["name"], apply_defaults(trainer_names.TRAINJOB_KIND, document["spec"])
    namespace, ns_issues = resolve_namespace(document["metadata"].get("namespace"), options.namespace)
    issues += ns_issues
    if not names.is_dns1035_label(name):
        issues.append(
            Issue(("metadata", "name"), f"{shown(name)} must be a DNS-1035 label (Trainer's webhook)")
        )
    runtime, found = _runtime(spec["runtimeRef"], namespace, runtimes)
    issues += found
    if runtime is None or issues:
        raise CompileError(issues, kind=trainer_names.TRAINJOB_KIND, name=name)
    issues += _trainjob_webhook(spec, runtime)
    if issues:
        raise CompileError(issues, kind=trainer_names.TRAINJOB_KIND, name=name)
    return _plan(name, namespace, spec, runtime)


def _runtime(
    ref: dict[str, Any], namespace: str | None, runtimes: Runtimes
) -> tuple[dict[str, Any] | None, list[Issue]]:
    path: Path = ("spec", "runtimeRef")
    if ref["apiGroup"] != trainer_names.TRAINER_GROUP:
        return None, [
            Issue(
                (*path, "apiGroup"), f'must be "{trainer_names.TRAINER_GROUP}", got {shown(ref["apiGroup"])}'
            )
        ]
    kind = ref["kind"]
    key = (kind, "" if kind == "ClusterTrainingRuntime" else namespace or "", ref["name"])
    if key not in runtimes.found:
        where = f' in namespace "{key[1]}"' if key[1] else ""
        message = f'{kind} "{ref["name"]}"{where} is not in the input: give it in the same stream or directory as the TrainJob'
        return None, [Issue((*path, "name"), message)]
    runtime = runtimes.found[key]
    if runtime is None:
        return None, [Issue((*path, "name"), f'{kind} "{ref["name"]}" has errors (reported at its document)')]
    policy = _policy_issues(kind, ref["name"], runtime.get("mlPolicy"))
    return (None, policy) if policy else (runtime, [])


def _trainjob_webhook(spec: dict[str, Any], runtime: dict[str, Any]) -> list[Issue]:
    """Trainer v2.0.0's TrainJob checks: the MPI plugin's (numProcPerNode an int; numNodes >= 2 with
    runLauncherAsNode needs both jobs) and the JobSet plugin's (initializer jobs, podSpecOverrides)."""
    issues: list[Issue] = []
    trainer, mpi = spec.get("trainer") or {}, runtime["mlPolicy"]["mpi"]
    jobs = {job["name"]: job for job in runtime["template"]["spec"].get("replicatedJobs") or []}
    procs = trainer.get("numProcPerNode")
    if procs is not None and (not isinstance(procs, int) or isinstance(procs, bool)):
        issues.append(
            Issue(
                ("spec", "trainer", "numProcPerNode"),
                f"must have an int value for an MPI TrainJob, got {shown(str(procs))}",
            )
        )
    if (
        trainer.get("numNodes", 1) >= 2
        and mpi["runLauncherAsNode"]
        and not {trainer_names.LAUNCHER_RJOB, trainer_names.NODE_RJOB} <= set(jobs)
    ):
        message = "must be 1 when the MPI runtime runs its launcher as a node (runLauncherAsNode) and lacks a launcher or a node job"
        issues.append(Issue(("spec", "trainer", "numNodes"), message))
    for step in ("dataset", "model"):
        if (spec.get("initializer") or {}).get(step) is not None:
            message = f"the {step} initializer is not compiled by mpigen (the MPI runtimes have no initializer jobs)"
            issues.append(Issue(("spec", "initializer", step), message))
    return issues + _override_issues(spec.get("podSpecOverrides") or [], jobs)


def _containers(job: dict[str, Any]) -> set[str]:
    pod = job["template"]["spec"]["template"].get("spec") or {}
    return {c.get("name") for c in (pod.get("initContainers") or []) + (pod.get("containers") or [])}


def _override_issues(overrides: list[dict[str, Any]], jobs: dict[str, dict[str, Any]]) -> list[Issue]:
    issues, seen = [], set()
    reserved = (trainer_names.TRAINER_CONTAINER, *trainer_names.ANCESTOR_INITIALIZERS)
    for index, override in enumerate(overrides):
        path: Path = ("spec", "podSpecOverrides", index)
        for t, target in enumerate(override["targetJobs"]):
            job_name = target["name"]
            if job_name in seen:
                issues.append(
                    Issue(
                        (*path, "targetJobs", t, "name"),
                        f"{shown(job_name)} is targeted by an earlier override too",
                    )
                )
            seen.add(job_name)
            if job_name not in jobs:
                issues.append(
                    Issue(
                        (*path, "targetJobs", t, "name"),
                        f"no job {shown(job_name)} in the runtime; it has {', '.join(sorted(jobs)) or 'none'}",
                    )
                )
                continue
            issues += _volume_issues(path, override, jobs[job_name])
            for key in ("initContainers", "containers"):
                for c, container in enumerate(override.get(key) or []):
                    where = (*path, key, c, "name")
                    if container["name"] not in _containers(jobs[job_name]):
                        issues.append(
                            Issue(
                                where,
                                f"no container {shown(container['name'])} in the runtime's {job_name} job",
                            )
                        )
                    elif key == "containers" and container.get("env") and container["name"] in reserved:
                        issues.append(
                            Issue(
                                (*path, key, c, "env"),
                                f"must not set env of the {container['name']} container: use spec.trainer.env",
                            )
                        )
    return issues


def _volume_issues(path: Path, override: dict[str, Any], job: dict[str, Any]) -> list[Issue]:
    """A volume the override names again with another source: Trainer's strategic merge (no retainKeys
    directive) would keep both sources, a volume the API server refuses when the Job is created."""
    pod = job["template"]["spec"]["template"].get("spec") or {}
    runtime = {v.get("name"): v for v in pod.get("volumes") or []}
    issues = []
    for index, volume in enumerate(override.get("volumes") or []):
        old = runtime.get(volume["name"])
        ours, theirs = sorted(set(volume) - {"name"}), sorted(set(old or {}) - {"name"})
        if old is not None and ours != theirs:
            message = (
                f"replaces the source of the runtime's volume {shown(volume['name'])} ({', '.join(theirs)}) with "
                f"{', '.join(ours)}: Trainer v2.0.0 would merge the two into one volume of two sources, which "
                "Kubernetes refuses; give the volume another name"
            )
            issues.append(Issue((*path, "volumes", index), message))
    return issues


def _plan(name: str, namespace: str | None, spec: dict[str, Any], runtime: dict[str, Any]) -> TrainPlan:
    template = runtime["template"]
    jobset_spec = tree.copy(template["spec"])
    for override in spec.get("podSpecOverrides") or []:
        targets = {target["name"] for target in override["targetJobs"]}
        for job in jobset_spec.get("replicatedJobs") or []:
            if job["name"] in targets:
                pod = job["template"]["spec"]["template"]
                pod["spec"] = merge_pod_spec(pod.get("spec") or {}, override)
    meta = template.get("metadata") or {}
    mpi, trainer = runtime["mlPolicy"]["mpi"], spec.get("trainer") or {}
    coscheduling = (runtime.get("podGroupPolicy") or {}).get("coscheduling")
    return TrainPlan(
        name=name,
        namespace=namespace,
        runtime=(spec["runtimeRef"]["kind"], spec["runtimeRef"]["name"]),
        labels={**(meta.get("labels") or {}), **(spec.get("labels") or {})},
        annotations={**(meta.get("annotations") or {}), **(spec.get("annotations") or {})},
        jobset_spec=jobset_spec,
        num_nodes=trainer.get("numNodes"),
        runtime_num_nodes=runtime["mlPolicy"].get("numNodes", 1),
        slots=trainer.get("numProcPerNode", mpi["numProcPerNode"]),
        implementation=mpi["mpiImplementation"],
        ssh_mount_path=mpi["sshAuthMountPath"],
        run_launcher_as_node=mpi["runLauncherAsNode"],
        trainer=trainer,
        suspend=spec["suspend"],
        managed_by=spec["managedBy"],
        schedule_timeout_seconds=None if coscheduling is None else coscheduling["scheduleTimeoutSeconds"],
        warnings=tuple(_warnings(spec, runtime)),
    )


def _warnings(spec: dict[str, Any], runtime: dict[str, Any]) -> list[Issue]:
    """A runtime's mlPolicy.numNodes other than 1: Trainer v2.0.0 gives the trainer job (an MPI runtime's
    launcher) that many pods, whatever the TrainJob's numNodes; mpigen does the same and says so."""
    wanted = runtime["mlPolicy"].get("numNodes", 1)
    trainer_jobs = [
        job["name"]
        for job in runtime["template"]["spec"].get("replicatedJobs") or []
        if ((job["template"].get("metadata") or {}).get("labels") or {}).get(trainer_names.ANCESTOR_LABEL)
        == trainer_names.ANCESTOR_TRAINER
    ]
    if wanted == 1 or not trainer_jobs:
        return []
    ref = spec["runtimeRef"]
    message = (
        f'{ref["kind"]} "{ref["name"]}" has mlPolicy.numNodes {wanted}: its trainer job "{trainer_jobs[0]}" runs '
        f"{max(wanted, 1)} pods, as Trainer v2.0.0 runs them; an MPI runtime keeps it at 1"
    )
    return [Issue(("spec", "runtimeRef", "name"), message, "warning")]
