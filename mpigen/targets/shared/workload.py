"""Kubernetes' own gang scheduling (`--gang-scheduler kubernetes`): a Workload and a PodGroup of
`scheduling.k8s.io/v1beta1` (Kubernetes 1.37, behind the `GenericWorkload` gate) and the pods'
`spec.schedulingGroup`, for whichever target asks (target-agnostic: the target says which pods join and
how many must run together).

Field by field (k8s.io/api v0.37.2 scheduling/v1beta1 types.go; KEP-4671):
- static, rendered here: the Workload's one `podGroupTemplates` entry and the PodGroup made from it
  (`workloadRef` to that template), with `schedulingPolicy.gang.minCount` (the pods that must be placed
  together), `disruptionMode: all` (kube-scheduler v1.37.2 pkg/scheduler/framework/preemption/types.go
  preempts such a group whole: losing one rank ends an MPI run anyway), and `priorityClassName` from
  the run policy's `schedulingPolicy.priorityClass`; every pod template that joins gets
  `spec.schedulingGroup.podGroupName`.
- made at run time, so left out: the PodGroup's `priority` and `preemptionPolicy` (the Priority
  admission plugin fills them from the PriorityClass), its status, and its finalizer (the
  podgroup-protection-controller of kube-controller-manager).
- left out on purpose: the Workload's `controllerRef` (the operator target has no one owner, and with
  the alpha `WorkloadWithJob` gate the Job controller indexes Workloads by the Job named there,
  kubernetes v1.37.2 pkg/controller/job/job_scheduling_manager.go: workloadByJobNameIndexFunc).
- `--topology required:KEY`: `schedulingConstraints.topology: [{key: KEY}]` on the template and the
  PodGroup (one constraint at most, k8s.io/api v0.37.2 PodGroupSchedulingConstraints). kube-scheduler
  v1.37.2's topologyaware plugin (TopologyPlacement.GeneratePlacements) makes one candidate placement
  per value of KEY among the nodes that carry it, tries the whole gang in each and keeps the best that
  fits: a hard constraint, every pod of the group in one domain. `preferred:` has no word there (the
  constraint is always required): the PodGroup gets nothing and the target's own placement stays (a
  warning says so); `slice:` neither. The field is behind the alpha gate
  TopologyAwareWorkloadScheduling (needs GenericWorkload): without it the API server drops it
  silently (pkg/registry/scheduling/podgroup/strategy.go: dropDisabledFields) and kube-scheduler
  does not run the placement algorithm (schedule_one_podgroup.go: podGroupSchedulingAlgorithm); a
  warning names the gate.

The Job controller makes no PodGroup of its own for a Job whose template sets `schedulingGroup`
(job_scheduling_manager.go: getManagementMode returns manageNone); a StatefulSet and a JobSet copy the
field into their pods unchanged. No PodDisruptionBudget and no add-on PodGroup is rendered.
"""

from __future__ import annotations

from typing import Any

from mpigen import names
from mpigen.errors import Issue
from mpigen.options import KUBERNETES, Options
from mpigen.placement import PREFERRED, REQUIRED, placement
from mpigen.plan import JobPlan
from mpigen.records import Record
from mpigen.targets import native_gang

SCHEDULING_API = "scheduling.k8s.io/v1beta1"
# The queue kubeflow.org/v1 fills in (mpigen.inputs.v1_plan), not one the user wrote.
DEFAULT_QUEUE = "default"
# The first Kubernetes minor that serves scheduling.k8s.io/v1beta1 Workload and PodGroup and the pod's
# spec.schedulingGroup (v1.35 and v1.36 served v1alpha1/v1alpha2 with another pod field, workloadRef).
FIRST_KUBE_VERSION = (1, 37)

ENABLE = (
    "the cluster must enable Kubernetes' gang scheduling, which is off by default in 1.37:"
    " kube-apiserver --feature-gates=GenericWorkload=true --runtime-config=scheduling.k8s.io/v1beta1=true,"
    " kube-scheduler --feature-gates=GenericWorkload=true, and kube-controller-manager"
    " --feature-gates=GenericWorkload=true with its podgroup-protection-controller running;"
    " an API server without the gate silently drops the pods' spec.schedulingGroup"
)


class NativeGang(Record):
    """What a target gangs (its optional `native_gang(plan)` method, mpigen.targets): the name of the
    Workload's pod group template, the pods that must be placed together, the roles whose pods join."""

    template: str
    min_count: int
    roles: tuple[str, ...]


def used(options: Options) -> bool:
    return options.gang_scheduler == KUBERNETES


def build_workload_gang(plan: JobPlan, gang: NativeGang, topology: str | None = None) -> list[dict[str, Any]]:
    """The Workload with its one pod group template, and the PodGroup made from it, of an MPIJob."""
    labels = names.standard_labels(plan.name, names.COMPONENT_SCHEDULING)
    return build_gang_objects(
        plan.name, plan.namespace, labels, gang, plan.scheduling.priority_class, topology
    )


def topology_constraints(topology: str | None) -> dict[str, Any]:
    """The `schedulingConstraints` of the gang for `--topology` (`Options.topology`): only `required`
    has a word in Kubernetes' PodGroup."""
    wanted = placement(topology)
    if wanted is None or wanted.mode != REQUIRED:
        return {}
    return {"schedulingConstraints": {"topology": [{"key": wanted.key}]}}


def build_gang_objects(
    job: str,
    namespace: str | None,
    labels: dict[str, str],
    gang: NativeGang,
    priority_class: str | None,
    topology: str | None = None,
) -> list[dict[str, Any]]:
    """The Workload and the PodGroup of the job `job` (an MPIJob's or a TrainJob's), labelled `labels`."""
    template = gang.template
    group: dict[str, Any] = {
        "schedulingPolicy": {"gang": {"minCount": gang.min_count}},
        "disruptionMode": {"all": {}},
    }
    if priority_class:
        group["priorityClassName"] = priority_class
    group.update(topology_constraints(topology))
    name = names.pod_group(job)
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return [
        {
            "apiVersion": SCHEDULING_API,
            "kind": "Workload",
            "metadata": dict(meta, labels=dict(labels)),
            "spec": {"podGroupTemplates": [{"name": template, **group}]},
        },
        {
            "apiVersion": SCHEDULING_API,
            "kind": "PodGroup",
            "metadata": dict(meta, labels=dict(labels)),
            "spec": {"workloadRef": {"workloadName": name, "templateName": template}, **group},
        },
    ]


def join_workload_gang(template: dict[str, Any], plan: JobPlan, options: Options) -> None:
    """A pod template of the gang: its PodGroup; the default scheduler unless --scheduler-name names
    another profile of kube-scheduler."""
    pod = template["spec"]
    pod["schedulingGroup"] = {"podGroupName": names.pod_group(plan.name)}
    if options.scheduler_name:
        pod["schedulerName"] = options.scheduler_name


def workload_option_issues(options: Options, gangs: bool) -> list[Issue]:
    """`--gang-scheduler kubernetes` where it cannot work: a target that cannot gang its pods this way
    (`gangs` False), a `--kube-version` that has no Workload API."""
    if not used(options):
        return []
    issues = []
    if not gangs:
        message = f"--gang-scheduler kubernetes cannot be used with --target {options.target}: the target schedules its pods as one gang through its own scheduler"
        issues.append(Issue((), message))
    version = options.kube_version
    if version is not None and tuple(int(part) for part in version.split(".")) < FIRST_KUBE_VERSION:
        message = f"--gang-scheduler kubernetes needs Kubernetes 1.37 or newer (scheduling.k8s.io/v1beta1 Workload and PodGroup, the pods' spec.schedulingGroup); --kube-version is {version}"
        issues.append(Issue((), message))
    return issues


def workload_warnings(plan: JobPlan, options: Options) -> list[Issue]:
    """What the cluster must enable (said once per render: mpigen.pipeline drops repeats of ENABLE), and
    the run policy's fields that Kubernetes' PodGroup has no place for."""
    if not used(options):
        return []
    found = [Issue((), ENABLE, "warning"), *topology_warnings(options)]
    scheduling, path = plan.scheduling, plan.scheduling.written_at
    # The operator's defaults (v2beta1 a timeout of 0, kubeflow.org/v1 the queue "default") say nothing.
    unused = [
        field
        for field, value in (
            ("queue", scheduling.queue not in (None, DEFAULT_QUEUE)),
            ("minResources", scheduling.min_resources is not None),
            ("scheduleTimeoutSeconds", bool(scheduling.schedule_timeout_seconds)),
        )
        if value
    ]
    roles = native_gang(options.target, plan).roles
    for role, template in (("launcher", plan.launcher_template), ("worker", plan.worker_template)):
        own = (template.get("spec") or {}).get("schedulingGroup")
        if role in roles and own and own != {"podGroupName": names.pod_group(plan.name)}:
            message = f"the {role} template's schedulingGroup is replaced by the job's PodGroup \"{names.pod_group(plan.name)}\""
            found.append(Issue(plan.template_paths[role] + ("spec", "schedulingGroup"), message, "warning"))
    if unused and path is not None:
        message = f"ignored with --gang-scheduler kubernetes: {', '.join(unused)} (Kubernetes' PodGroup has no such field)"
        found.append(Issue(path, message, "warning"))
    return found


def topology_warnings(options: Options) -> list[Issue]:
    """`--topology` with Kubernetes' gang: the alpha gate its constraint needs, or that it has none."""
    wanted = placement(options.topology)
    if wanted is None or not used(options):
        return []
    if wanted.mode == REQUIRED:
        message = f"--topology {wanted} puts the PodGroup's schedulingConstraints.topology, which needs the alpha gate TopologyAwareWorkloadScheduling as well: kube-apiserver and kube-scheduler --feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true; without it the API server silently drops the field and kube-scheduler places the gang as if it were not there"
    elif wanted.mode == PREFERRED:
        message = f"--topology {wanted}: Kubernetes' PodGroup has no preferred topology (its schedulingConstraints.topology is always required), so only the pods' preferred affinity asks for it"
    else:
        return []
    return [Issue((), message, "warning")]
