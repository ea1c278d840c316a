"""Gang scheduling: the PodGroup, the workers' PodDisruptionBudget, and what the job's pods must carry.

Off by default. `volcano` emits a `scheduling.volcano.sh/v1beta1` PodGroup and annotates pods with
`scheduling.k8s.io/group-name` (as mpi-operator v0.2.0 `newPodGroup` / `newWorker` do for kube-batch);
`scheduler-plugins` emits a `scheduling.x-k8s.io/v1alpha1` PodGroup and labels pods with
`scheduling.x-k8s.io/pod-group`. `minMember` counts the launcher too: all pods start together or none.
"""

from __future__ import annotations

from typing import Any

from mpigen import names
from mpigen.build import merge_pod_annotations, merge_pod_labels, object_meta
from mpigen.errors import Issue
from mpigen.options import SCHEDULER_PLUGINS, VOLCANO, Options
from mpigen.plan import JobPlan

POD_GROUP_API = {VOLCANO: "scheduling.volcano.sh/v1beta1", SCHEDULER_PLUGINS: "scheduling.x-k8s.io/v1alpha1"}


def build_pod_group(plan: JobPlan, options: Options) -> list[dict[str, Any]]:
    if options.gang_scheduler is None:
        return []
    return [
        {
            "apiVersion": POD_GROUP_API[options.gang_scheduler],
            "kind": "PodGroup",
            "metadata": object_meta(plan, names.pod_group(plan.name), names.COMPONENT_SCHEDULING),
            "spec": {"minMember": plan.workers + 1},
        }
    ]


def build_worker_pdb(plan: JobPlan, options: Options) -> list[dict[str, Any]]:
    """Keep voluntary evictions from breaking up a running gang.

    v0.2.0 `newPDB` selects `app: <job>`, which the worker pods do not carry; this one selects the
    workers' own labels.
    """
    if options.gang_scheduler is None:
        return []
    return [
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": object_meta(plan, names.pdb(plan.name), names.COMPONENT_WORKER),
            "spec": {
                "minAvailable": plan.workers,
                "selector": {"matchLabels": names.role_labels(plan.name, names.ROLE_WORKER)},
            },
        }
    ]


def join_gang(template: dict[str, Any], plan: JobPlan, options: Options) -> None:
    """Point a pod template at the gang scheduler and its PodGroup; a schedulerName set is kept."""
    if options.gang_scheduler is None:
        return
    pod = template["spec"]
    if not pod.get("schedulerName"):
        pod["schedulerName"] = options.effective_scheduler_name
    if options.gang_scheduler == VOLCANO:
        merge_pod_annotations(template, {names.VOLCANO_GROUP_ANNOTATION: names.pod_group(plan.name)})
    else:
        merge_pod_labels(template, {names.SCHEDULER_PLUGINS_GROUP_LABEL: names.pod_group(plan.name)})


def gang_warnings(plan: JobPlan, options: Options) -> list[Issue]:
    """A schedulerName the user set is kept (as v0.2.0 does), but it may defeat gang scheduling."""
    wanted = options.effective_scheduler_name
    if wanted is None:
        return []
    warnings = []
    for role, template in (("launcher", plan.launcher_template), ("worker", plan.worker_template)):
        own = template.get("spec", {}).get("schedulerName")
        if own and own != wanted:
            message = f'the {role} template\'s schedulerName "{own}" is kept instead of "{wanted}"'
            warnings.append(Issue(plan.template_paths[role] + ("spec", "schedulerName"), message, "warning"))
    return warnings
