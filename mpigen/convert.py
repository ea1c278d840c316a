"""`mpigen convert`: MPIJobs to Kubeflow Trainer v2 TrainJobs, each with the runtime it names. Pure.

Each MPIJob is planned by its input front (mpigen.inputs), as render plans it, then written as Trainer
v2.3.0 reads a job: a TrainJob (`trainer.kubeflow.org/v1alpha1`) holding what is the job's own (the
number of nodes and processes, the launcher's image, command, args, env and resources, suspend, Kueue's
MultiKueue, the job's metadata) and a ClusterTrainingRuntime (or, namespaced, a TrainingRuntime) holding
its shape: the MPI policy and a JobSet template of two replicated jobs, `node` (the workers, their first
container renamed `node`, running sshd) and `launcher` (the trainer step, its first container renamed
`node`) that `dependsOn` the nodes being Ready, as mpigen's jobset target runs an MPIJob. Jobs of one
shape share one runtime, named `mpigen-<hash of its spec>`, written once before the first job using it.

What has no TrainJob equivalent is said on stderr, per field (a warning); what cannot be converted is an
error with its field path: the kubectl-exec transport of kubeflow.org/v1alpha1, v1alpha2 and v1 unless
the worker runs sshd itself (Trainer's MPI runtime needs sshd in every node), a job with no workers.
Documents that are not MPIJobs pass through unchanged, in place.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, NamedTuple

from mpigen import inputs as api
from mpigen import names, tree
from mpigen.compiler import plan_job
from mpigen.errors import CompileError, Issue, Path
from mpigen.inputs import trainer_names
from mpigen.inputs.annotations import PREFIX
from mpigen.options import KUBERNETES as GANG_KUBERNETES
from mpigen.options import Options
from mpigen.outcome import Finding, Outcome
from mpigen.plan import JobPlan
from mpigen.targets.canonical import canonical
from mpigen.targets.jobset.jobset import disruption_failure_rule, disruption_pod_failure_policy
from mpigen.targets.shared import disruption
from mpigen.yaml.load import Document

DEFAULT_MAX_RESTARTS = 6  # batch/v1 Job's backoffLimit default, which the jobset target uses too
OWN_NAMING = ("hostname", "subdomain")
LIFTED = ("command", "args", "env", "resources")
# With the launcher as a node, Trainer v2.3 gives trainer.env and resourcesPerNode to the node pods too
# (the JobSet builder's Trainer(), newRuntimeInfo): the launcher's own stay in its template.
LIFTED_AS_NODE = ("command", "args")
# The `manager` of the runtime patch convert writes (a domain-prefixed path, as Trainer requires).
CONVERT_MANAGER = "mpigen.dev/convert"


class ConvertOptions(NamedTuple):
    """`namespaced`: a TrainingRuntime in each job's namespace instead of a ClusterTrainingRuntime."""

    namespaced: bool = False
    compile: Options = Options()


def convert(inputs: Sequence[tuple[str, list[Document] | str]], options: ConvertOptions) -> Outcome:
    result, written = Outcome(), set[tuple[str, str]]()
    for source, documents in inputs:
        if isinstance(documents, str):
            result.errors.append(Finding.line(documents))
            continue
        for doc in documents:
            data = doc.data
            if not isinstance(data, dict) or not api.claims(data) or api.is_trainer(data):
                result.objects.append(data)
                continue
            result.jobs += 1
            where = doc.index if doc.total > 1 else None
            try:
                runtime, job, warnings = convert_job(data, options)
            except CompileError as exc:
                result.errors += [Finding(source, where, exc.kind, exc.name, issue) for issue in exc.issues]
                continue
            key = (
                runtime["kind"],
                runtime["metadata"].get("namespace", "") + "/" + runtime["metadata"]["name"],
            )
            if key not in written:
                written.add(key)
                result.objects.append(runtime)
            result.objects.append(job)
            result.warnings += [
                Finding(source, where, "MPIJob", job["metadata"]["name"], w) for w in warnings
            ]
    return result


def convert_job(
    document: dict[str, Any], options: ConvertOptions
) -> tuple[dict[str, Any], dict[str, Any], list[Issue]]:
    """(runtime, TrainJob, warnings) for one MPIJob, or CompileError."""
    plan, compile_options = plan_job(document, options.compile.replace(target="jobset"))
    issues = _refusals(plan)
    if issues:
        raise CompileError(issues, name=plan.name)
    spec = runtime_spec(plan, disruption.free(compile_options))
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:10]
    name, kind = f"mpigen-{digest}", "TrainingRuntime" if options.namespaced else "ClusterTrainingRuntime"
    meta: dict[str, Any] = {"name": name}
    if options.namespaced and plan.namespace is not None:
        meta["namespace"] = plan.namespace

    runtime = canonical(
        {"apiVersion": trainer_names.TRAINER_API, "kind": kind, "metadata": meta, "spec": spec}
    )
    return runtime, canonical(train_job(plan, document, kind, name)), _warnings(plan, document)


def _container_index(plan: JobPlan, template: dict[str, Any]) -> int:
    """The container renamed `node`: v1's mainContainer (the one kubexec.sh execs into), else the first."""
    found = [i for i, c in enumerate(template["spec"]["containers"]) if c.get("name") == plan.exec_container]
    return found[0] if found else 0


def _runs_sshd(plan: JobPlan) -> bool:
    container = plan.worker_template["spec"]["containers"][_container_index(plan, plan.worker_template)]
    return bool(container.get("command")) and str(container["command"][0]).rsplit("/", 1)[-1] == "sshd"


def _refusals(plan: JobPlan) -> list[Issue]:
    issues = []
    if plan.workers == 0:
        message = "no workers: a Trainer MPI runtime always runs at least one node pod besides the launcher; not convertible"
        issues.append(Issue(plan.workers_path, message))
    elif plan.ssh is None and not _runs_sshd(plan):
        path = (*plan.template_paths.get("worker", ("spec",)), "spec", "containers", 0, "command")
        message = (
            f"{plan.api_version} launches the ranks over kubectl exec (kubexec.sh); Trainer's MPI runtime reaches "
            "its nodes over SSH, so the worker must run sshd (e.g. command [/usr/sbin/sshd, -De]) in an image "
            "that has it; not convertible as written"
        )
        issues.append(Issue(path, message))
    return issues


def _clean(template: dict[str, Any], container: int) -> dict[str, Any]:
    """A pod template without nulls and its own hostname and subdomain (JobSet names the pods), its
    chosen container named `node` (Trainer finds the trainer and the nodes by that name)."""
    copied: dict[str, Any] = tree.without_nulls(template)
    for key in OWN_NAMING:
        copied.setdefault("spec", {}).pop(key, None)
    copied["spec"]["containers"][container]["name"] = trainer_names.TRAINER_CONTAINER
    return copied


def _job(plan: JobPlan, pods: int, template: dict[str, Any], free: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {"parallelism": pods, "completions": pods, "backoffLimit": 0}
    if free:  # as the jobset target: both pods `restartPolicy: Never`
        spec["podFailurePolicy"] = disruption_pod_failure_policy()
    if plan.active_deadline_seconds is not None:
        spec["activeDeadlineSeconds"] = plan.active_deadline_seconds
    spec["template"] = template
    return spec


def node_template(plan: JobPlan) -> dict[str, Any]:
    index = _container_index(plan, plan.worker_template)
    template = _clean(plan.worker_template, index)
    pod = template["spec"]
    pod["restartPolicy"] = "Never"
    container = pod["containers"][index]
    if not container.get("command") and not container.get("args"):
        container["command"] = list(names.SSHD_COMMAND)
    if plan.ssh is not None:  # the operator's role variable (v0.8.2 setupSSHOnPod), kept
        container["env"] = [
            *(container.get("env") or []),
            {"name": names.JOB_ROLE_ENV, "value": names.ROLE_WORKER},
        ]
    return template


def launcher_template(plan: JobPlan, free: bool) -> dict[str, Any]:
    index = _container_index(plan, plan.launcher_template)
    template = _clean(plan.launcher_template, index)
    if free:
        template["spec"]["restartPolicy"] = "Never"
    container = template["spec"]["containers"][index]
    for key in _lifted(plan):  # the job's own, in TrainJob.spec.trainer
        container.pop(key, None)
    if plan.hostnames.launcher_first and plan.ssh is not None:
        container["env"] = [
            *(container.get("env") or []),
            {"name": names.JOB_ROLE_ENV, "value": names.ROLE_LAUNCHER},
        ]
    return template


def _lifted(plan: JobPlan) -> tuple[str, ...]:
    return LIFTED_AS_NODE if plan.hostnames.launcher_first else LIFTED


def runtime_spec(plan: JobPlan, free: bool) -> dict[str, Any]:
    """The runtime of `plan`'s shape; `free`: with the jobset target's free-disruption fields, so that
    Trainer's own JobSet makes disruptions free as mpigen's render of the TrainJob does."""
    assert plan.ssh is not None or _runs_sshd(plan)
    mpi = {
        "numProcPerNode": plan.slots_per_worker,
        "mpiImplementation": plan.implementation,
        "sshAuthMountPath": plan.ssh.mount_path if plan.ssh is not None else names.ROOT_SSH_PATH,
        "runLauncherAsNode": plan.hostnames.launcher_first,
    }
    failure: dict[str, Any] = {
        "maxRestarts": DEFAULT_MAX_RESTARTS if plan.backoff_limit is None else plan.backoff_limit
    }
    rules = [disruption_failure_rule()] if free else []
    if free:
        failure["restartStrategy"] = "BlockingRecreate"
    if plan.active_deadline_seconds is not None:
        rules.append(
            {"name": "deadline", "action": "FailJobSet", "onJobFailureReasons": ["DeadlineExceeded"]}
        )
    if rules:
        failure["rules"] = rules
    launcher_labels = {trainer_names.ANCESTOR_LABEL: trainer_names.ANCESTOR_TRAINER}
    jobs = [
        {
            "name": trainer_names.NODE_RJOB,
            "template": {"spec": _job(plan, plan.workers, node_template(plan), free)},
        },
        {
            "name": trainer_names.LAUNCHER_RJOB,
            "dependsOn": [{"name": trainer_names.NODE_RJOB, "status": "Ready"}],
            "template": {
                "metadata": {"labels": launcher_labels},
                "spec": _job(plan, 1, launcher_template(plan, free), free),
            },
        },
    ]
    jobset: dict[str, Any] = {
        "successPolicy": {"operator": "All", "targetReplicatedJobs": [trainer_names.LAUNCHER_RJOB]},
        "failurePolicy": failure,
        "replicatedJobs": jobs,
    }
    if plan.ttl_seconds_after_finished is not None:
        jobset["ttlSecondsAfterFinished"] = plan.ttl_seconds_after_finished
    return {"mlPolicy": {"numNodes": 1, "mpi": mpi}, "template": {"spec": jobset}}


def _trainer(plan: JobPlan) -> dict[str, Any]:
    container = plan.launcher_template["spec"]["containers"][_container_index(plan, plan.launcher_template)]
    trainer: dict[str, Any] = {
        "numNodes": plan.workers + (1 if plan.hostnames.launcher_first else 0),
        "numProcPerNode": plan.slots_per_worker,
        "image": container["image"],
    }
    for key in ("command", "args"):
        if container.get(key) is not None:
            trainer[key] = tree.copy(container[key])
    if plan.hostnames.launcher_first:  # env and resources stay in the launcher's template (LIFTED_AS_NODE)
        return trainer
    env = tree.copy(container.get("env") or [])
    if plan.ssh is not None:
        env.append({"name": names.JOB_ROLE_ENV, "value": names.ROLE_LAUNCHER})
    if plan.blank_launcher_gpus:  # the launcher that is no host does not take the node's GPUs (as render)
        env += [{"name": name} for name in names.NVIDIA_ENV]
    if env:
        trainer["env"] = env
    resources = {
        k: v for k, v in (container.get("resources") or {}).items() if k in ("limits", "requests") and v
    }
    if resources:
        trainer["resourcesPerNode"] = tree.copy(resources)
    return trainer


def train_job(plan: JobPlan, document: dict[str, Any], kind: str, runtime: str) -> dict[str, Any]:
    own = document.get("metadata") or {}
    meta: dict[str, Any] = {"name": plan.name}
    if plan.namespace is not None:
        meta["namespace"] = plan.namespace
    for key in ("labels", "annotations"):
        if own.get(key):
            meta[key] = tree.copy(own[key])
    for key in _dropped_options(document):
        del meta["annotations"][key]
    if "annotations" in meta and not meta["annotations"]:
        del meta["annotations"]
    spec: dict[str, Any] = {
        "runtimeRef": {"apiGroup": trainer_names.TRAINER_GROUP, "kind": kind, "name": runtime}
    }
    queue = (own.get("labels") or {}).get(names.QUEUE_LABEL)
    if queue is not None:  # a runtime patch's template labels reach the JobSet Kueue admits (Trainer v2.2+)
        labels = {"labels": {names.QUEUE_LABEL: queue}}
        patch = {"manager": CONVERT_MANAGER, "trainingRuntimeSpec": {"template": {"metadata": labels}}}
        spec["runtimePatches"] = [patch]
    if plan.suspend:
        spec["suspend"] = True
    if plan.managed_by == "kueue.x-k8s.io/multikueue":
        spec["managedBy"] = plan.managed_by
    spec["trainer"] = _trainer(plan)
    return {
        "apiVersion": trainer_names.TRAINER_API,
        "kind": trainer_names.TRAINJOB_KIND,
        "metadata": meta,
        "spec": spec,
    }


def _get(document: dict[str, Any], path: Path) -> Any:
    value: Any = document
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def _warnings(plan: JobPlan, document: dict[str, Any]) -> list[Issue]:
    """What the TrainJob does not carry, or carries differently, field by field."""
    found = [
        Issue(
            ("metadata", "name"),
            f"Trainer names the pods {plan.name}-node-0-<i> and {plan.name}-launcher-0-0 (hosts "
            f"<pod>.{plan.name}) and the SSH Secret {trainer_names.trainjob_ssh_secret(plan.name)}; the MPIJob's "
            "<job>-worker-<i> names and discover_hosts.sh do not exist there",
            "warning",
        )
    ]
    for run_policy in (("spec", "runPolicy"), ("spec",)):
        for key, message in _RUN_POLICY.items():
            if _get(document, (*run_policy, key)) is not None:
                found.append(Issue((*run_policy, key), message, "warning"))
    if plan.implementation != "OpenMPI":
        message = f"{plan.implementation}: beyond Trainer v2.3.0 (its CRD takes OpenMPI only); mpigen compiles the TrainJob"
        found.append(Issue(("spec", "mpiImplementation"), message, "warning"))
    if plan.hostnames.launcher_first:
        message = "the launcher starts when the nodes are Ready (dependsOn), so it is the hostfile's last host, not its first"
        found.append(Issue(("spec", "runLauncherAsWorker"), message, "warning"))
    if plan.ssh is not None and not plan.ssh.generate_keys:
        message = "--ssh-secret: Trainer makes its own Secret <job>-mpi-ssh-auth; the given one is not used"
        found.append(Issue(("metadata", "annotations"), message, "warning"))
    if plan.managed_by == "kueue.x-k8s.io/multikueue":
        message = "kept as the TrainJob's spec.managedBy: Trainer v2.3.0 leaves the TrainJob to MultiKueue, and `mpigen render` of the TrainJob gives its JobSet spec.managedBy"
        found.append(Issue(_managed_by_path(document), message, "warning"))
    for key, why in _dropped_options(document).items():
        found.append(
            Issue(("metadata", "annotations", key), f"not carried over to the TrainJob: {why}", "warning")
        )
    if plan.hydra_bootstrap:
        message = "Intel MPI's kubexec bootstrap variables (I_MPI_HYDRA_BOOTSTRAP*) are dropped: the runtime uses SSH"
        found.append(Issue(plan.template_paths.get("launcher", ("spec",)), message, "warning"))
    return found + _annotation_warnings(document)


def _annotation_warnings(document: dict[str, Any]) -> list[Issue]:
    """The annotations copied to the TrainJob that no longer mean there what they meant on the MPIJob."""
    own = (document.get("metadata") or {}).get("annotations")
    dropped = _dropped_options(document)  # warned as not carried over
    found = []
    for key in sorted(own) if isinstance(own, dict) else []:
        if key in dropped:
            continue
        message = _ANNOTATION_MEANINGS.get(key)
        if message is None and isinstance(key, str) and key.startswith(OPTION_PREFIX):
            message = "copied to the TrainJob, where only `mpigen render` reads it (Trainer ignores it)"
        if message is not None:
            found.append(Issue(("metadata", "annotations", key), message, "warning"))
    return found


def _dropped_options(document: dict[str, Any]) -> dict[str, str]:
    """The MPIJob's `mpigen.dev/*` option annotations a TrainJob refuses (mpigen.inputs.trainjob) or has no
    use for (`target`: a TrainJob is always a JobSet), each with why: not carried over."""
    # deferred: the TrainJob front (Trainer's rules and defaults) only once a job converts; a refused job
    # never needs it
    from mpigen.inputs.trainjob import TRAINJOB_REFUSED_OPTIONS

    why = {flag: reason for flag, reason in TRAINJOB_REFUSED_OPTIONS.values()}
    why["target"] = "a TrainJob always runs as a JobSet"
    annotations = (document.get("metadata") or {}).get("annotations") or {}
    if (
        annotations.get(PREFIX + "gang-scheduler") == GANG_KUBERNETES
    ):  # Kubernetes' own gang applies to TrainJobs
        del why["gang-scheduler"], why["scheduler-name"]
    return {
        key: why[key[len(PREFIX) :]]
        for key in annotations
        if key.startswith(PREFIX) and key[len(PREFIX) :] in why
    }


OPTION_PREFIX = "mpigen.dev/"
_ANNOTATION_MEANINGS = {
    names.VOLCANO_QUEUE_ANNOTATION: (
        "the MPIJob's Volcano queue (mpi-operator v0.8.2 reads it); copied to the TrainJob, where no "
        "controller reads it: set the queue in the runtime's podGroupPolicy instead"
    ),
    "kubectl.kubernetes.io/last-applied-configuration": (
        "the MPIJob's own last-applied configuration, copied to a TrainJob it does not describe: "
        "delete it before applying (kubectl would compute its next patch from it)"
    ),
}


def _managed_by_path(document: dict[str, Any]) -> Path:
    return (
        ("spec", "runPolicy", "managedBy")
        if _get(document, ("spec", "runPolicy", "managedBy"))
        else ("spec", "managedBy")
    )


_RUN_POLICY = {
    "cleanPodPolicy": "no TrainJob equivalent: JobSet deletes the nodes when the launcher finishes (as Running or All); None cannot be kept",
    "schedulingPolicy": "not converted: Trainer v2.3.0 has podGroupPolicy.coscheduling (minMember every pod, no queue, priority or minAvailable) and podGroupPolicy.volcano; add one to the runtime by hand for a gang scheduler",
    "ttlSecondsAfterFinished": "converted to the runtime's JobSet ttlSecondsAfterFinished: it deletes the JobSet, not the TrainJob",
}
