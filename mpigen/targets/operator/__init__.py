"""The operator target: the objects the mpi-operator would create, plus what runs them without it.

Workers are a StatefulSet `<job>-worker` behind a headless Service; the launcher is a Job that reaches
them by their pod names (the hostfile), over `kubectl exec` (kubexec.sh) or SSH; a clean-up Job scales
the workers down when the launcher ends. Its own modules: `configmap`
(the ConfigMap), `cleanup` (the clean-up Job), `workloads` (the worker StatefulSet and the launcher Job
around the shared pod templates), `service` (v2beta1's Service), `reserved` (the names it adds to the
user's pods) and `limits` (the API-server limits on what it builds); the pods, RBAC and scripts come
from mpigen.targets.shared.
This module is its one entry: `TARGET`, the row of mpigen.targets.TARGETS.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mpigen import names
from mpigen.checks.rules import check_plan
from mpigen.errors import Issue
from mpigen.options import Options
from mpigen.plan import JobPlan
from mpigen.targets import Target
from mpigen.targets.canonical import canonical
from mpigen.targets.operator import kinds
from mpigen.targets.operator.cleanup import build_cleanup_job, build_cleanup_rbac
from mpigen.targets.operator.configmap import build_config_map
from mpigen.targets.operator.disruption import build_launcher, disruption_warnings
from mpigen.targets.operator.limits import SIZES, check_derived_names
from mpigen.targets.operator.placement import check_placement, place_pods
from mpigen.targets.operator.reserved import added
from mpigen.targets.operator.service import build_job_service
from mpigen.targets.operator.workloads import build_worker_stateful_set
from mpigen.targets.shared.gang import build_pod_group, build_worker_pdb, gang_warnings, min_member
from mpigen.targets.shared.meta import identity_warnings, template_warnings
from mpigen.targets.shared.network import build_network_policy
from mpigen.targets.shared.policy import multikueue_warnings
from mpigen.targets.shared.rbac import (
    build_launcher_role,
    build_launcher_role_binding,
    build_launcher_service_account,
    foreign_account_warnings,
)
from mpigen.targets.shared.ssh import build_keygen_job, build_keygen_rbac, build_ssh_secret
from mpigen.targets.shared.workload import NativeGang

Builder = Callable[[JobPlan, Options], list[dict[str, Any]]]


def _with_options(build: Callable[[JobPlan, Options], dict[str, Any]]) -> Builder:
    return lambda plan, options: [build(plan, options)]


def _some(build: Callable[[JobPlan], list[dict[str, Any]]]) -> Builder:
    return lambda plan, options: build(plan)


# The order of the documents of one job. It is API (documented in the README): GitOps diffs and
# `kubectl apply -f -` in one pass depend on it: identities and RBAC before the pods that use them,
# configuration, the SSH Secret, the NetworkPolicy and the PodGroup before pods, the SSH key Job
# before the pods that wait for its keys, workers before the launcher, and the clean-up Job last (it
# watches the launcher Job). Insert new objects in their place; never reorder.
BUILDERS: tuple[Builder, ...] = (
    _some(build_launcher_service_account),
    _some(build_launcher_role),
    _some(build_launcher_role_binding),
    build_cleanup_rbac,
    _some(build_keygen_rbac),
    _with_options(build_config_map),
    _some(build_ssh_secret),
    _some(build_job_service),
    build_network_policy,
    build_pod_group,
    build_worker_pdb,
    build_keygen_job,
    build_worker_stateful_set,
    _with_options(build_launcher),
    build_cleanup_job,
)


class OperatorTarget:
    """mpigen.targets.Target for the mpi-operator's objects."""

    name = "operator"
    kinds = kinds.KINDS
    capabilities: frozenset[str] = frozenset({"native-gang"})

    def check(self, plan: JobPlan) -> list[Issue]:
        """Derived names that fit, and no collision with what the builders add."""
        return check_derived_names(plan) + check_plan(plan, added(plan))

    def check_sizes(self, plan: JobPlan, options: Options) -> list[Issue]:
        """The ConfigMap and the launcher Role the API server accepts for this worker count; a placement
        pod affinity can express."""
        return check_placement(options) + SIZES.issues(plan, options)

    def warnings(self, plan: JobPlan, options: Options) -> list[Issue]:
        managed = multikueue_warnings(
            plan, "the operator would leave this job to Kueue's MultiKueue; mpigen compiles it to run here"
        )
        return (
            managed
            + gang_warnings(plan, options)
            + template_warnings(plan)
            + identity_warnings(plan)
            + foreign_account_warnings(plan)
            + disruption_warnings(plan, options)
        )

    def build(self, plan: JobPlan, options: Options) -> list[dict[str, Any]]:
        built = [obj for build in BUILDERS for obj in build(plan, options)]
        return [canonical(obj) for obj in place_pods(built, plan, options)]

    def worker_pods(self, plan: JobPlan) -> list[str]:
        """The StatefulSet's pods, `<job>-worker-<index>`."""
        return plan.worker_pod_names

    def hosts(self, plan: JobPlan) -> list[str]:
        """Each pod's name, or its name in the job's Service's domain (v2beta1), launcher first when it runs a rank."""
        return plan.host_names()

    def launcher_role(self, plan: JobPlan) -> dict[str, Any] | None:
        roles = build_launcher_role(plan)
        return roles[0] if roles else None

    def native_gang(self, plan: JobPlan) -> NativeGang:
        """The launcher Job's pod and the worker StatefulSet's pods, one gang (minCount every pod, or the
        run policy's minAvailable). The StatefulSet creates its pods in Parallel (mpigen.targets.shared.workers):
        with OrderedReady it would create only pod 0 and wait for it, which the gang never places."""
        return NativeGang(
            "launcher-and-workers", max(min_member(plan), 1), (names.ROLE_LAUNCHER, names.ROLE_WORKER)
        )

    def engine_objects(self, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return []


TARGET: Target = OperatorTarget()
