"""Gang scheduling: the PodGroup, the workers' PodDisruptionBudget, and what the job's pods must carry.

Off by default. `volcano` emits a `scheduling.volcano.sh/v1beta1` PodGroup and annotates pods with
`scheduling.k8s.io/group-name` (as mpi-operator v0.2.0 `newPodGroup` / `newWorker` do for kube-batch);
`scheduler-plugins` emits a `scheduling.x-k8s.io/v1alpha1` PodGroup and labels pods with
`scheduling.x-k8s.io/pod-group`. `minMember` counts the launcher too: all pods start together or none.

With a `schedulingPolicy` (v2beta1), the PodGroup is mpi-operator v0.8.2's (`pkg/controller/podgroup.go`):
`minMember` from `minAvailable`, Volcano's `queue` and `priorityClassName`, scheduler-plugins'
`scheduleTimeoutSeconds`, and `minResources` as written or summed from the pod templates
(`calPGMinResource`), and the pods' schedulerName is overwritten rather than kept. For kubeflow.org/v1
it is the training-operator's (release-1.9 `pkg/controller.v1/common/job.go` ReconcileJobs): the same
fields, summed as `CalcPGMinResources` sums them, Volcano pods also annotated `volcano.sh/task-spec`,
and a schedulerName of the template's kept (`DecoratePodTemplateSpec`).

`kubernetes` is Kubernetes' own gang scheduling, no add-on: the builders here hand it to
`mpigen.targets.shared.workload` with what the target gangs (its `native_gang`).
"""

from __future__ import annotations

from typing import Any

from mpigen import names
from mpigen.errors import Issue
from mpigen.options import SCHEDULER_PLUGINS, VOLCANO, Options
from mpigen.plan import JobPlan
from mpigen.targets import native_gang
from mpigen.targets.shared import workload
from mpigen.targets.shared.meta import merge_pod_annotations, merge_pod_labels, object_meta

POD_GROUP_API = {VOLCANO: "scheduling.volcano.sh/v1beta1", SCHEDULER_PLUGINS: "scheduling.x-k8s.io/v1alpha1"}


def min_member(plan: JobPlan) -> int:
    wanted = plan.scheduling.min_available
    return plan.workers + 1 if wanted is None else wanted


def _container_resources(template: dict[str, Any], requests_else_limits: bool) -> list[tuple[str, object]]:
    """Each container's requests, plus its limits for names it requests nothing of (v0.8.2 `addResources`);
    or its requests when it has any, else its limits (training-operator `AddResourceList`)."""
    found = []
    for container in (template.get("spec") or {}).get("containers") or []:
        resources = container.get("resources") or {}
        requests = resources.get("requests")
        if requests_else_limits:
            found += list((requests if requests is not None else resources.get("limits") or {}).items())
            continue
        merged = dict(requests or {})
        for name, limit in (resources.get("limits") or {}).items():
            merged.setdefault(name, limit)
        found += list(merged.items())
    return found


def sum_min_resources(plan: JobPlan, members: int) -> dict[str, str]:
    """v0.8.2 `calPGMinResource`: the resources of the first `members` pods, the launcher first.

    PriorityClass values are not known offline: launcher and workers count as equal (as the operator
    does when no PriorityClass exists), so the workers are the ones cut down to `members - 1`.
    """
    # deferred: mpigen.quantity (fractions, decimal) only for a gang's minResources
    from mpigen.quantity import QuantitySum

    workers = plan.workers if 1 + plan.workers <= members else max(members - 1, 0)
    total = QuantitySum()
    for template, replicas in ((plan.launcher_template, 1), (plan.worker_template, workers)):
        if not replicas:
            continue  # no pods, nothing to sum: never a zero entry for a resource only they ask for
        for name, quantity in (
            _container_resources(template, plan.scheduling.requests_else_limits) if template else []
        ):
            total.add(name, quantity, replicas)
    return total.result()


def min_resources(plan: JobPlan, members: int) -> dict[str, str] | None:
    wanted = plan.scheduling.min_resources
    if wanted is not None:
        # deferred: mpigen.quantity (fractions, decimal) only for a gang's minResources
        from mpigen.quantity import canonical_quantity

        return {name: canonical_quantity(value) for name, value in sorted(wanted.items())}
    return None if members == 0 else sum_min_resources(plan, members)


def _pod_group_spec(plan: JobPlan, scheduler: str, members: int, summed: int) -> dict[str, Any]:
    scheduling = plan.scheduling
    spec: dict[str, Any] = {"minMember": members}
    if not scheduling.operator_fields:
        # mpi-operator v0.3.0 newPodGroup (v1alpha2): the priority class too, where the PodGroup has one.
        if scheduling.priority_class and scheduler == VOLCANO:
            spec["priorityClassName"] = scheduling.priority_class
        return spec
    resources = min_resources(plan, summed)
    if scheduler == VOLCANO:
        if scheduling.queue:
            spec["queue"] = scheduling.queue
        if scheduling.priority_class:
            spec["priorityClassName"] = scheduling.priority_class
        if resources is not None:
            spec["minResources"] = resources
    else:
        if scheduling.schedule_timeout_seconds is not None:
            spec["scheduleTimeoutSeconds"] = scheduling.schedule_timeout_seconds
        if resources:
            spec["minResources"] = resources
    return spec


def build_pod_group(plan: JobPlan, options: Options, members: int | None = None) -> list[dict[str, Any]]:
    """The PodGroup; `members`: its minMember when not the operator's (`min_member`), the resources
    still summed over the operator's members (room for every pod reserved up front)."""
    if options.gang_scheduler is None:
        return []
    if workload.used(options):
        return workload.build_workload_gang(plan, native_gang(options.target, plan), options.topology)
    operator_members = min_member(plan)
    return [
        {
            "apiVersion": POD_GROUP_API[options.gang_scheduler],
            "kind": "PodGroup",
            "metadata": object_meta(plan, names.pod_group(plan.name), names.COMPONENT_SCHEDULING),
            "spec": _pod_group_spec(
                plan,
                options.gang_scheduler,
                operator_members if members is None else members,
                operator_members,
            ),
        }
    ]


def build_worker_pdb(plan: JobPlan, options: Options) -> list[dict[str, Any]]:
    """Keep voluntary evictions from breaking up a running gang.

    v0.2.0 `newPDB` selects `app: <job>`, which the worker pods do not carry; this one selects the
    workers' own labels.
    """
    if options.gang_scheduler is None or plan.workers == 0 or workload.used(options):
        return []  # Kubernetes' PodGroup: its disruptionMode says how the gang is disrupted
    return [
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": object_meta(plan, names.pdb(plan.name), names.COMPONENT_WORKER),
            "spec": {
                "minAvailable": plan.workers,
                "selector": {"matchLabels": dict(plan.labels.worker_pod)},
            },
        }
    ]


def join_gang(template: dict[str, Any], plan: JobPlan, options: Options, role: str) -> None:
    """Point a pod template (of `role`, launcher or worker) at the gang scheduler and its PodGroup; a
    schedulerName set is kept (v0.2.0, training-operator) or overwritten (v0.8.2)."""
    if options.gang_scheduler is None:
        return
    if workload.used(options):
        if role in native_gang(options.target, plan).roles:
            workload.join_workload_gang(template, plan, options)
        return
    pod = template["spec"]
    if not pod.get("schedulerName") or plan.scheduling.overwrite_scheduler_name:
        pod["schedulerName"] = options.effective_scheduler_name
    if options.gang_scheduler == VOLCANO:
        annotations = {names.VOLCANO_GROUP_ANNOTATION: names.pod_group(plan.name)}
        if plan.scheduling.task_spec_annotation:
            annotations[names.VOLCANO_TASK_SPEC_ANNOTATION] = role
        merge_pod_annotations(template, annotations)
    else:
        merge_pod_labels(template, {names.SCHEDULER_PLUGINS_GROUP_LABEL: names.pod_group(plan.name)})


def gang_warnings(plan: JobPlan, options: Options) -> list[Issue]:
    """A schedulerName the user set is kept (as v0.2.0 does), but it may defeat gang scheduling; or
    it is overwritten (as v0.8.2 does), which the user should know."""
    if workload.used(options):
        return workload.workload_warnings(plan, options)
    wanted = options.effective_scheduler_name
    if wanted is None:
        if plan.scheduling.written_at is None:
            return []
        message = (
            "ignored: no gang scheduler is chosen, so no PodGroup is rendered (as the operator renders none"
            " unless it runs with gang scheduling on); set --gang-scheduler or the mpigen.dev/gang-scheduler"
            " annotation to volcano or scheduler-plugins"
        )
        return [Issue(plan.scheduling.written_at, message, "warning")]
    warnings = []
    for role, template in (("launcher", plan.launcher_template), ("worker", plan.worker_template)):
        own = template.get("spec", {}).get("schedulerName")
        if own and own != wanted:
            verb = "is replaced by" if plan.scheduling.overwrite_scheduler_name else "is kept instead of"
            message = f'the {role} template\'s schedulerName "{own}" {verb} "{wanted}"'
            warnings.append(Issue(plan.template_paths[role] + ("spec", "schedulerName"), message, "warning"))
    return warnings
