"""Front for Kubeflow Trainer `trainer.kubeflow.org/v1alpha1` TrainJobs with an MPI runtime (Trainer v2.3.0).

A TrainJob names a ClusterTrainingRuntime (cluster-wide) or a TrainingRuntime (in its namespace); both
come in the same input (stream or directory). `Runtimes` collects them once, checked against their
schema (tools/trainerschema.py) and Trainer's runtime webhook; `to_plan` checks a TrainJob the same way,
applies the CRDs' defaults to both as the API server would (mpigen.inputs.trainer_merge), runs the CRD's
CEL rules and the checks of Trainer's TrainJob webhook (mpigen.inputs.trainer_rules) and builds the
runtime's JobSet template as `newRuntimeInfo` does: the `runtimePatches` merged in, their template labels
and annotations over the runtime template's, `resourcesPerNode` merged into the trainer's resources, and
the MPI plugin's slots (numProcPerNode, else the GPU count of a node). The jobset target turns the
resulting TrainPlan into the objects (mpigen.targets.jobset.trainjob).

Fields of earlier Trainer versions (`podSpecOverrides` of v2.0, `podTemplateOverrides` of v2.1, `labels`
and `annotations` removed in v2.2) are refused as a v2.3 API server refuses them (unknown fields), with a
message naming what replaced them. Beyond Trainer: `mlPolicy.mpi.mpiImplementation` may be `Intel` or
`MPICH` (Trainer v2.3.0 runs OpenMPI only). Refused: every other ML policy, with a message saying so.
"""

from __future__ import annotations

from typing import Any

from mpigen import names, tree
from mpigen.checks.kube.validator import validate_object
from mpigen.errors import CompileError, Issue, Path, shown
from mpigen.inputs import trainer_names
from mpigen.inputs.annotations import PREFIX
from mpigen.inputs.shared import name_of, resolve_namespace
from mpigen.inputs.trainer_merge import apply_defaults, merge_resources, merge_runtime_patch
from mpigen.inputs.trainer_rules import ancestor, crd_rules, runtime_webhook, trainjob_webhook
from mpigen.options import KUBERNETES as GANG_KUBERNETES
from mpigen.options import Options
from mpigen.plan import TrainPlan
from mpigen.quantity import parse_quantity

RuntimeKey = tuple[str, str, str]  # kind, namespace ("" for a ClusterTrainingRuntime), name
# Fields of earlier Trainer versions, and what replaced them (kubeflow/trainer PRs #2785, #3309).
LEGACY_FIELDS = {
    "podSpecOverrides": "Trainer v2.0's podSpecOverrides became spec.runtimePatches in v2.2 (one entry per manager, "
    "its pod spec changes under trainingRuntimeSpec.template.spec.replicatedJobs[].template.spec.template.spec)",
    "podTemplateOverrides": "Trainer v2.1's podTemplateOverrides became spec.runtimePatches in v2.2 (one entry per "
    "manager, under trainingRuntimeSpec.template.spec.replicatedJobs[].template.spec.template)",
    "labels": "removed in Trainer v2.2: give the JobSet's labels in spec.runtimePatches[].trainingRuntimeSpec.template.metadata.labels",
    "annotations": "removed in Trainer v2.2: give the JobSet's annotations in "
    "spec.runtimePatches[].trainingRuntimeSpec.template.metadata.annotations",
}


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
        # The API server prunes a CR's nulls, then defaults (structural schemas); Trainer reads typed objects.
        defaulted = None if issues else apply_defaults(document["kind"], tree.without_nulls(document["spec"]))
        issues += [] if defaulted is None else runtime_webhook(defaulted)
        self.found[key] = None if issues else defaulted
        return issues


def runtime_key(document: dict[str, Any], options: Options) -> RuntimeKey:
    kind, meta = document.get("kind"), document.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    namespace = "" if kind == "ClusterTrainingRuntime" else (meta.get("namespace") or options.namespace or "")
    return (str(kind), str(namespace), name_of(document))


def _policy_issues(kind: str, name: str, policy: dict[str, Any] | None) -> list[Issue]:
    """mpigen compiles MPI runtimes only: a torch runtime, or one with no ML policy, is refused at the
    TrainJob that names it."""
    path: Path = ("spec", "runtimeRef", "name")
    if not policy or "mpi" not in policy:
        other = sorted(k for k in (policy or {}) if k != "numNodes")
        what = f"has mlPolicy.{other[0]}" if other else "has no ML policy (plain)"
        message = f'{kind} "{name}" {what}: mpigen compiles MPI runtimes only (mlPolicy.mpi); run this TrainJob with Kubeflow Trainer\'s controller'
        return [Issue(path, message)]
    others = sorted(k for k in policy if k not in ("numNodes", "mpi"))
    if others:
        message = f'{kind} "{name}" has mlPolicy.mpi and mlPolicy.{others[0]}: Only one of the policy can be configured (Trainer\'s CEL rule)'
        return [Issue(path, message)]
    return []


def _legacy_issues(document: dict[str, Any]) -> list[Issue]:
    spec = document.get("spec")
    found = [key for key in LEGACY_FIELDS if isinstance(spec, dict) and key in spec]
    return [
        Issue(("spec", key), f'unknown field "{key}" in Trainer v2.3: {LEGACY_FIELDS[key]}') for key in found
    ]


def to_plan(document: dict[str, Any], runtimes: Runtimes, options: Options) -> TrainPlan:
    """The TrainPlan of one TrainJob, or CompileError with every problem (each with its field path)."""
    legacy = _legacy_issues(document)
    issues = legacy + [
        issue
        for issue in _schema_issues(document, options)
        if not any(issue.path[: len(old.path)] == old.path for old in legacy)
    ]
    if issues:
        raise CompileError(issues, kind=trainer_names.TRAINJOB_KIND, name=name_of(document))
    name = document["metadata"]["name"]
    spec = apply_defaults(trainer_names.TRAINJOB_KIND, tree.without_nulls(document["spec"]))
    namespace, ns_issues = resolve_namespace(document["metadata"].get("namespace"), options.namespace)
    issues += ns_issues + crd_rules(spec)
    if not names.is_dns1035_label(name):
        issues.append(Issue(("metadata", "name"), f"{shown(name)} must match RFC 1035 DNS label format"))
    runtime, found = _runtime(spec["runtimeRef"], namespace, runtimes)
    issues += found
    if runtime is None or issues:
        raise CompileError(issues, kind=trainer_names.TRAINJOB_KIND, name=name)
    issues += trainjob_webhook(spec, runtime) + _volcano_issues(spec, runtime)
    issues += refused_options(options) + _target_issues(document)
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
        return None, [Issue((*path, "name"), _missing(key, runtimes))]
    runtime = runtimes.found[key]
    if runtime is None:
        return None, [Issue((*path, "name"), f'{kind} "{ref["name"]}" has errors (reported at its document)')]
    policy = _policy_issues(kind, ref["name"], runtime.get("mlPolicy"))
    return (None, policy) if policy else (runtime, [])


def _missing(key: RuntimeKey, runtimes: Runtimes) -> str:
    """Why the runtime a TrainJob names is not found: a TrainingRuntime of that name in another namespace
    of the input (a TrainJob reads the one of its own namespace, pkg/runtime/core `NewObjects`), else
    none at all."""
    kind, namespace, name = key
    elsewhere = sorted(ns for k, ns, n in runtimes.found if k == kind and n == name and ns != namespace)
    if not elsewhere:
        where = f' in namespace "{namespace}"' if namespace else ""
        return f'{kind} "{name}"{where} is not in the input: give it in the same stream or directory as the TrainJob'
    given = f'namespace "{elsewhere[0]}"' if elsewhere[0] else "no namespace (kubectl's current one)"
    if not namespace:
        return (
            f'{kind} "{name}" is given in {given}, but this TrainJob has no namespace: Trainer looks the '
            f"runtime up in the TrainJob's own namespace; set metadata.namespace: {elsewhere[0]} (or --namespace {elsewhere[0]})"
        )
    fix = f"set the runtime's metadata.namespace: {namespace}" if not elsewhere[0] else "move one of them"
    return (
        f'{kind} "{name}" is given in {given}, not in this TrainJob\'s namespace "{namespace}": Trainer looks '
        f"the runtime up in the TrainJob's own namespace; {fix}"
    )


def _plan(name: str, namespace: str | None, spec: dict[str, Any], runtime: dict[str, Any]) -> TrainPlan:
    template = runtime["template"]
    jobset_spec = tree.copy(template["spec"])
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    annotations = dict((template.get("metadata") or {}).get("annotations") or {})
    for patch in spec.get("runtimePatches") or []:
        patched = (patch.get("trainingRuntimeSpec") or {}).get("template") or {}
        labels.update((patched.get("metadata") or {}).get("labels") or {})
        annotations.update((patched.get("metadata") or {}).get("annotations") or {})
    for patch in spec.get("runtimePatches") or []:
        patched = ((patch.get("trainingRuntimeSpec") or {}).get("template") or {}).get("spec")
        if patched is not None:
            jobset_spec = merge_runtime_patch(jobset_spec, patched)
    mpi, trainer = runtime["mlPolicy"]["mpi"], spec.get("trainer") or {}
    _merge_resources(jobset_spec, trainer, mpi["runLauncherAsNode"])
    coscheduling = (runtime.get("podGroupPolicy") or {}).get("coscheduling")
    volcano = (runtime.get("podGroupPolicy") or {}).get("volcano")
    return TrainPlan(
        name=name,
        namespace=namespace,
        runtime=(spec["runtimeRef"]["kind"], spec["runtimeRef"]["name"]),
        labels=labels,
        annotations=annotations,
        jobset_spec=jobset_spec,
        num_nodes=trainer.get("numNodes"),
        runtime_num_nodes=runtime["mlPolicy"].get("numNodes", 1),
        slots=_slots(jobset_spec, trainer, mpi["numProcPerNode"]),
        implementation=mpi["mpiImplementation"],
        ssh_mount_path=mpi["sshAuthMountPath"],
        run_launcher_as_node=mpi["runLauncherAsNode"],
        trainer=trainer,
        suspend=spec["suspend"],
        managed_by=spec["managedBy"],
        schedule_timeout_seconds=None if coscheduling is None else coscheduling["scheduleTimeoutSeconds"],
        warnings=tuple(_warnings(spec, runtime)),
        active_deadline_seconds=spec.get("activeDeadlineSeconds"),
        volcano=None if volcano is None else tree.copy(volcano),
    )


def _volcano_issues(spec: dict[str, Any], runtime: dict[str, Any]) -> list[Issue]:
    """The Volcano plugin's Validate: a queue annotation (the runtime template's or a patch's) not empty."""
    if "volcano" not in (runtime.get("podGroupPolicy") or {}):
        return []
    found = ((runtime["template"].get("metadata") or {}).get("annotations") or {}).get(
        names.VOLCANO_QUEUE_ANNOTATION
    )
    for patch in spec.get("runtimePatches") or []:
        meta = ((patch.get("trainingRuntimeSpec") or {}).get("template") or {}).get("metadata") or {}
        found = (meta.get("annotations") or {}).get(names.VOLCANO_QUEUE_ANNOTATION, found)
    if found != "":
        return []
    path: Path = ("spec", "annotations", names.VOLCANO_QUEUE_ANNOTATION)
    return [
        Issue(path, "Volcano queue name must not be empty (the runtime's or a runtime patch's annotation)")
    ]


# Options that mean nothing for a TrainJob, refused when given (a value other than the default): what
# Trainer's runtime holds instead.
TRAINJOB_REFUSED_OPTIONS = {
    "gpus_per_node": (
        "gpus-per-node",
        "v1alpha1's; a TrainJob's slots are numProcPerNode (or its GPU count)",
    ),
    "processing_units_per_node": (
        "processing-units-per-node",
        "v1alpha1's; a TrainJob's slots are numProcPerNode",
    ),
    "processing_resource_type": (
        "processing-resource-type",
        "v1alpha1's; a TrainJob's slots are numProcPerNode",
    ),
    "kubectl_delivery_image": ("kubectl-delivery-image", "a TrainJob's MPI runs over SSH, without kubectl"),
    "wait_timeout_seconds": ("wait-timeout", "a TrainJob's launcher waits for the nodes Ready by dependsOn"),
    "gang_scheduler": (
        "gang-scheduler",
        (
            "a TrainJob's add-on gang is its runtime's podGroupPolicy (coscheduling or volcano), as Trainer"
            " reads it; only `kubernetes` (Kubernetes' own gang) applies"
        ),
    ),
    "scheduler_name": (
        "scheduler-name",
        "set schedulerName in the runtime's pod templates (or a runtime patch)",
    ),
    "cluster_domain": ("cluster-domain", "Trainer's hostfile names are <pod>.<subdomain>, without a domain"),
}


def _native_gang_option(options: Options, field: str) -> bool:
    """`--gang-scheduler kubernetes` (and its `--scheduler-name`, a kube-scheduler profile) is no add-on: the
    TrainJob's pods that start at once are Kubernetes' own gang (mpigen.targets.jobset.trainjob_gang)."""
    return options.gang_scheduler == GANG_KUBERNETES and field in ("gang_scheduler", "scheduler_name")


def refused_options(options: Options) -> list[Issue]:
    issues = []
    for field, (flag, why) in TRAINJOB_REFUSED_OPTIONS.items():
        if getattr(options, field) != getattr(Options(), field) and not _native_gang_option(options, field):
            issues.append(Issue((), f"--{flag} ({PREFIX}{flag}) is refused for a TrainJob: {why}"))
    return issues


def _target_issues(document: dict[str, Any]) -> list[Issue]:
    """The TrainJob's own `mpigen.dev/target` other than jobset (the flag does not apply to TrainJobs)."""
    found = ((document.get("metadata") or {}).get("annotations") or {}).get(PREFIX + "target")
    if found is None or found == "jobset":
        return []
    path: Path = ("metadata", "annotations", PREFIX + "target")
    return [Issue(path, f"{shown(str(found))}: refused for a TrainJob, which always runs as a JobSet")]


def _node_container(job: dict[str, Any]) -> dict[str, Any] | None:
    pod = ((job.get("template") or {}).get("spec") or {}).get("template", {}).get("spec") or {}
    return next(
        (c for c in pod.get("containers") or [] if c.get("name") == trainer_names.TRAINER_CONTAINER), None
    )


def _merge_resources(jobset_spec: dict[str, Any], trainer: dict[str, Any], launcher_as_node: bool) -> None:
    """newRuntimeInfo: resourcesPerNode merged into the `node` container's resources of the trainer job, and
    of the `node` job when the launcher runs as a node."""
    wanted = trainer.get("resourcesPerNode")
    if wanted is None:
        return
    for job in jobset_spec.get("replicatedJobs") or []:
        if ancestor(job) == trainer_names.ANCESTOR_TRAINER or (
            launcher_as_node and job["name"] == trainer_names.NODE_RJOB
        ):
            container = _node_container(job)
            if container is not None:
                container["resources"] = merge_resources(container.get("resources") or {}, wanted)


def _slots(jobset_spec: dict[str, Any], trainer: dict[str, Any], runtime_slots: int) -> int:
    """The MPI plugin's numProcPerNode: the TrainJob's; else the runtime's; when that is 1, the GPU count
    of resourcesPerNode (else of the first `node` container of the node or trainer job) if above 1."""
    if "numProcPerNode" in trainer:
        return int(trainer["numProcPerNode"])
    if runtime_slots != 1:
        return runtime_slots
    resources = trainer.get("resourcesPerNode")
    if resources is None:  # runtime.ExtractResourcePerNodeFromRuntime: the first such `node` container,
        for job in jobset_spec.get("replicatedJobs") or []:  # with resources or not (typed: never nil)
            container = _node_container(job)
            if (
                job["name"] == trainer_names.NODE_RJOB or ancestor(job) == trainer_names.ANCESTOR_TRAINER
            ) and container:
                resources = container.get("resources") or {}
                break
    gpus = _gpus((resources or {}).get("requests")) or _gpus((resources or {}).get("limits"))
    return max(1, gpus)


def _gpus(resources: dict[str, Any] | None) -> int:
    """runtime.numGPU: the first resource whose name contains "gpu", in whole units rounded up (Trainer
    ranges over a Go map; mpigen takes the names in sorted order)."""
    for resource in sorted(resources or {}):
        if "gpu" in resource.lower():
            value = parse_quantity(resources[resource]) if resources else None
            return 0 if value is None else -((-value.numerator) // value.denominator)
    return 0


def _warnings(spec: dict[str, Any], runtime: dict[str, Any]) -> list[Issue]:
    """A runtime's mlPolicy.numNodes other than 1: Trainer v2.3.0 gives the trainer job (an MPI runtime's
    launcher) that many pods, whatever the TrainJob's numNodes; mpigen does the same and says so."""
    wanted = runtime["mlPolicy"].get("numNodes", 1)
    trainer_jobs = [
        job["name"]
        for job in runtime["template"]["spec"].get("replicatedJobs") or []
        if ancestor(job) == trainer_names.ANCESTOR_TRAINER
    ]
    if wanted == 1 or not trainer_jobs:
        return []
    ref = spec["runtimeRef"]
    message = (
        f'{ref["kind"]} "{ref["name"]}" has mlPolicy.numNodes {wanted}: its trainer job "{trainer_jobs[0]}" runs '
        f"{max(wanted, 1)} pods, as Trainer v2.3.0 runs them; an MPI runtime keeps it at 1"
    )
    return [Issue(("spec", "runtimeRef", "name"), message, "warning")]
