"""The volcano target: the job as one Volcano `batch.volcano.sh/v1alpha1` Job (Volcano v1.14).

A launcher task (1 replica) and a worker task (N replicas) in one gang (`minAvailable` = every pod, or
the run policy's), in the run policy's queue, with Volcano's life-cycle policies in place of the
operator's run-time work: the launcher's `TaskCompleted` completes the job (Volcano then deletes the
running workers), a failed run restarts the whole gang up to `maxRetry` runs, an evicted pod restarts
it. Volcano's `svc` plugin gives every pod its name as hostname in the job's headless Service `<job>`,
its `ssh` plugin makes the SSH key pair in the cluster (v2beta1). The hostfile stays mpigen's, with
slots, over Volcano's pod names `<job>-<task>-<index>`: `<job>-worker-<i>` as under the operator
target, the launcher `<job>-launcher-0`. Decisions and departures: docs/departures.md, "The volcano
target". This module is its one entry: `TARGET`, the row of mpigen.targets.TARGETS.
"""

from __future__ import annotations

from typing import Any

from mpigen.checks.rules import check_plan
from mpigen.errors import Issue
from mpigen.options import Options
from mpigen.plan import JobPlan
from mpigen.targets import Target
from mpigen.targets.canonical import canonical
from mpigen.targets.shared.rbac import build_launcher_role
from mpigen.targets.volcano import implied, job, kinds, limits
from mpigen.targets.volcano.placement import check_placement


class VolcanoTarget:
    """mpigen.targets.Target for a Volcano Job."""

    name = "volcano"
    kinds = kinds.KINDS
    capabilities: frozenset[str] = frozenset()

    def check(self, plan: JobPlan) -> list[Issue]:
        return limits.check_plan_fits(plan) + check_plan(plan, limits.added(plan))

    def check_sizes(self, plan: JobPlan, options: Options) -> list[Issue]:
        return check_placement(options) + (
            limits.check_options(plan, options) or limits.SIZES.issues(plan, options)
        )

    def warnings(self, plan: JobPlan, options: Options) -> list[Issue]:
        return job.warnings(plan, options)

    def build(self, plan: JobPlan, options: Options) -> list[dict[str, Any]]:
        return [canonical(obj) for build in job.BUILDERS for obj in build(plan, options)]

    def worker_pods(self, plan: JobPlan) -> list[str]:
        """The worker task's pods, `<job>-worker-<index>`."""
        return plan.worker_pod_names

    def hosts(self, plan: JobPlan) -> list[str]:
        return job.hosts(plan)

    def launcher_role(self, plan: JobPlan) -> dict[str, Any] | None:
        roles = build_launcher_role(plan)
        return roles[0] if roles else None

    def engine_objects(self, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return implied.engine_objects(objects)


TARGET: Target = VolcanoTarget()
