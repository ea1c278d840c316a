"""A TrainJob under `--gang-scheduler kubernetes`: Kubernetes 1.37's own Workload and PodGroup
(mpigen.targets.shared.workload) over the pods of the JobSet's replicated jobs that start at once.

As for an MPIJob on the jobset target, a replicated job that `dependsOn` another (Trainer's MPI launcher
waiting for its nodes) is created only once those run: its pods stay out of the gang, which would
otherwise never be complete. `minCount` is the pods of the others (Trainer v2.3.0's coscheduling plugin
counts every pod, having no such order to honour). A runtime that asks for a gang of its own
(`podGroupPolicy`: coscheduling or volcano) would put the pods in two gangs: refused.
"""

from __future__ import annotations

from typing import Any

from mpigen import names
from mpigen.errors import Issue
from mpigen.inputs import trainer_names
from mpigen.options import Options
from mpigen.placement import REQUIRED, placement
from mpigen.plan import TrainPlan
from mpigen.targets.jobset import names as jobset_names
from mpigen.targets.shared.workload import (
    ENABLE,
    NativeGang,
    build_gang_objects,
    topology_warnings,
    used,
    workload_option_issues,
)


def native_gang(plan: TrainPlan, counts: list[int]) -> NativeGang:
    """The replicated jobs that start at once, and their pods (`counts`: each job's, in order)."""
    jobs = plan.jobset_spec.get("replicatedJobs") or []
    starting = [
        (job["name"], count) for job, count in zip(jobs, counts, strict=True) if not job.get("dependsOn")
    ]
    template = "-".join(name for name, _ in starting)  # the jobs' names (DNS labels), as one if it fits
    return NativeGang(
        template if len(template) <= 63 else "gang",
        sum(count for _, count in starting),
        tuple(name for name, _ in starting),
    )


def check(plan: TrainPlan, options: Options) -> list[Issue]:
    if not used(options):
        return []
    issues = workload_option_issues(options, gangs=True)
    if plan.schedule_timeout_seconds is not None or plan.volcano is not None:
        message = "--gang-scheduler kubernetes with a runtime that asks for a gang of its own (podGroupPolicy): the pods would be in two gangs of two schedulers; drop one"
        issues.append(Issue(("spec", "runtimeRef"), message))
    return issues


def build(
    plan: TrainPlan, options: Options, counts: list[int], jobset: dict[str, Any]
) -> list[dict[str, Any]]:
    """The Workload and PodGroup, and `jobset`'s pod templates of the gang pointed at the PodGroup."""
    if not used(options):
        return []
    gang = native_gang(plan, counts)
    wanted = placement(options.topology)
    for job in jobset["spec"].get("replicatedJobs") or []:
        pod = job["template"]["spec"]["template"]["spec"]
        if job["name"] in gang.roles:
            pod["schedulingGroup"] = {"podGroupName": names.pod_group(plan.name)}
            if options.scheduler_name:
                pod["schedulerName"] = options.scheduler_name
        elif wanted is not None and wanted.mode == REQUIRED:
            _follow_gang(pod, plan.name, gang.roles, wanted.key)
    labels = {
        **names.standard_labels(plan.name, names.COMPONENT_SCHEDULING),
        "app.kubernetes.io/name": trainer_names.TRAINJOB_APP_NAME,
    }
    return build_gang_objects(plan.name, plan.namespace, labels, gang, None, options.topology)


def _follow_gang(pod: dict[str, Any], jobset: str, roles: tuple[str, ...], key: str) -> None:
    """A replicated job outside the gang (it `dependsOn` the gang's, so its pods come later) follows the
    gang's pods into their domain of `key`: a required pod affinity after the template's own terms, over the
    labels the JobSet controller puts on every pod (jobset v0.12.0 pkg/controllers:
    `labelAndAnnotateObject`)."""
    selector = {
        "matchLabels": {jobset_names.JOBSET_NAME_LABEL: jobset},
        "matchExpressions": [{"key": jobset_names.RJOB_LABEL, "operator": "In", "values": list(roles)}],
    }
    affinity = dict(pod.get("affinity") or {})
    together = dict(affinity.get("podAffinity") or {})
    field = "requiredDuringSchedulingIgnoredDuringExecution"
    together[field] = [*(together.get(field) or []), {"labelSelector": selector, "topologyKey": key}]
    affinity["podAffinity"] = together
    pod["affinity"] = affinity


def warnings(options: Options) -> list[Issue]:
    """What the cluster must enable (said once per render, as for an MPIJob)."""
    return [Issue((), ENABLE, "warning"), *topology_warnings(options)] if used(options) else []
