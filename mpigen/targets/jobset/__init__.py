"""The jobset target: one JobSet (jobset.x-k8s.io/v1alpha2, JobSet v0.12 and newer, the base of
Kubeflow Trainer v2) runs the job; Kueue admits it as one workload.

The JobSet's `worker` replicated job is an Indexed Job of the workers, its `launcher` replicated job
starts when every worker is Ready (`dependsOn`); JobSet makes the headless Service and gives every pod
its DNS name, restarts the whole gang on a failure up to `backoffLimit` times and ends the workers when
the launcher finishes. So there is no worker StatefulSet, Service, wait script or clean-up Job and none
of their RBAC. Modules: `jobset` (the JobSet), `pods` (its pod templates), `config` (the ConfigMap and
the launcher's identity), `hosts` (the pods' host names), `checks` (names, sizes, warnings), `exec_policy`
(the cluster-wide admission policy that confines the kubectl-exec launcher, `mpigen exec-policy`); a
TrainJob's in the `trainjob*` modules. This module is its one entry: `TARGET`, the row of
mpigen.targets.TARGETS.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mpigen.errors import Issue
from mpigen.names import ROLE_LAUNCHER, ROLE_WORKER
from mpigen.options import Options
from mpigen.plan import JobPlan, TrainPlan
from mpigen.targets import Target
from mpigen.targets.canonical import canonical
from mpigen.targets.jobset import (
    checks,
    implied,
    kinds,
    trainjob,
    trainjob_disruption,
    trainjob_gang,
    trainjob_sizes,
)
from mpigen.targets.jobset.config import (
    build_config_map,
    build_launcher_role,
    build_launcher_role_binding,
    build_launcher_service_account,
    launcher_role,
)
from mpigen.targets.jobset.hosts import hosts, worker_hosts
from mpigen.targets.jobset.jobset import build_jobset
from mpigen.targets.shared.disruption import version_warnings
from mpigen.targets.shared.gang import build_pod_group, build_worker_pdb, gang_warnings
from mpigen.targets.shared.meta import template_warnings
from mpigen.targets.shared.network import build_network_policy
from mpigen.targets.shared.ssh import build_keygen_job, build_keygen_rbac, build_ssh_secret
from mpigen.targets.shared.workload import NativeGang

Builder = Callable[[JobPlan, Options], list[dict[str, Any]]]


def _some(build: Callable[[JobPlan], list[dict[str, Any]]]) -> Builder:
    return lambda plan, options: build(plan)


def _gang(plan: JobPlan, options: Options) -> list[dict[str, Any]]:
    """The PodGroup of a gang scheduler: minMember the workers alone when the launcher waits for them
    (a gang of workers + launcher would hold the workers forever, the launcher pod not yet created)."""
    if plan.workers == 0:
        return build_pod_group(plan, options, 1)
    wanted = plan.scheduling.min_available
    return build_pod_group(plan, options, plan.workers if wanted is None else min(wanted, plan.workers))


# The order of the documents of one job (API, as the operator target's): identities and RBAC, the
# ConfigMap, the SSH Secret, the NetworkPolicy, the gang's PodGroup and PDB, the SSH key Job, the JobSet.
BUILDERS: tuple[Builder, ...] = (
    _some(build_launcher_service_account),
    _some(build_launcher_role),
    _some(build_launcher_role_binding),
    _some(build_keygen_rbac),
    _some(build_config_map),
    _some(build_ssh_secret),
    build_network_policy,
    _gang,
    build_worker_pdb,
    build_keygen_job,
    build_jobset,
)


class JobSetTarget:
    """mpigen.targets.Target for one JobSet."""

    name = "jobset"
    kinds = kinds.KINDS
    capabilities: frozenset[str] = frozenset({"trainjob", "native-gang"})

    def check(self, plan: JobPlan) -> list[Issue]:
        return checks.check(plan)

    def check_sizes(self, plan: JobPlan, options: Options) -> list[Issue]:
        """The host lists a ConfigMap holds, and the Kueue options that conflict with the job's."""
        return checks.check_sizes(plan, options)

    def warnings(self, plan: JobPlan, options: Options) -> list[Issue]:
        own = [issue for issue in template_warnings(plan) if issue.path[-2:] != ("spec", "hostname")]
        return gang_warnings(plan, options) + own + checks.warnings(plan, options) + version_warnings(options)

    def build(self, plan: JobPlan, options: Options) -> list[dict[str, Any]]:
        return [canonical(obj) for build in BUILDERS for obj in build(plan, options)]

    def worker_pods(self, plan: JobPlan) -> list[str]:
        """The workers' hostnames (their pod names add a random suffix)."""
        return worker_hosts(plan)

    def hosts(self, plan: JobPlan) -> list[str]:
        return hosts(plan)

    def launcher_role(self, plan: JobPlan) -> dict[str, Any] | None:
        return launcher_role(plan)

    def native_gang(self, plan: JobPlan) -> NativeGang:
        """The workers alone: the launcher `dependsOn` them, so its pod is made only once they are Ready,
        and a gang that counted it would hold the workers unplaced forever. A job without workers: the
        launcher alone."""
        if plan.workers == 0:
            return NativeGang("launcher", 1, (ROLE_LAUNCHER,))
        wanted = plan.scheduling.min_available
        count = plan.workers if wanted is None else max(min(wanted, plan.workers), 1)
        return NativeGang("workers", count, (ROLE_WORKER,))

    def check_train_job(self, plan: TrainPlan, options: Options) -> list[Issue]:
        """JobSet's checks on the names a TrainJob's JobSet derives, Kubernetes' gang, the hostfile's size and
        the placement (mpigen.targets.TrainJobRunner)."""
        issues = trainjob_gang.check(plan, options) + (trainjob_sizes.check(plan) or trainjob.check(plan))
        return issues or trainjob.check_placement(plan, options)

    def train_job_warnings(self, plan: TrainPlan, options: Options) -> list[Issue]:
        return (
            list(plan.warnings)
            + trainjob_gang.warnings(options)
            + trainjob_disruption.warnings(plan, options)
        )

    def build_train_job(self, plan: TrainPlan, options: Options) -> list[dict[str, Any]]:
        """What Kubeflow Trainer's controller would create for the TrainJob."""
        return trainjob.build(plan, options)

    def engine_objects(self, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return implied.engine_objects(objects)


TARGET: Target = JobSetTarget()
