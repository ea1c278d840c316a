"""The compiler: one MPIJob document in, the Kubernetes objects that run it out. Pure.

`compile_job` does no I/O and reads no clock, environment or randomness: the same document and
options always give the same objects, in the same order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from mpigen import api
from mpigen.api.common import name_of
from mpigen.build import canonical
from mpigen.build.cleanup import build_cleanup_job, build_cleanup_rbac
from mpigen.build.configmap import build_config_map
from mpigen.build.gang import build_pod_group, build_worker_pdb, gang_warnings
from mpigen.build.launcher import build_launcher_job
from mpigen.build.limits import check_derived_names, check_sizes
from mpigen.build.objectsize import check_object_sizes
from mpigen.build.rbac import (
    build_launcher_role,
    build_launcher_role_binding,
    build_launcher_service_account,
)
from mpigen.build.service import build_job_service
from mpigen.build.ssh import build_keygen_job, build_keygen_rbac, build_ssh_secret
from mpigen.build.workers import build_worker_stateful_set
from mpigen.errors import CompileError, Issue
from mpigen.job_options import options_for
from mpigen.options import Options
from mpigen.plan import JobPlan
from mpigen.rules import check_plan

Builder = Callable[[JobPlan, Options], list[dict[str, Any]]]


def _one(build: Callable[[JobPlan], dict[str, Any]]) -> Builder:
    return lambda plan, options: [build(plan)]


def _with_options(build: Callable[[JobPlan, Options], dict[str, Any]]) -> Builder:
    return lambda plan, options: [build(plan, options)]


def _some(build: Callable[[JobPlan], list[dict[str, Any]]]) -> Builder:
    return lambda plan, options: build(plan)


# The order of the documents of one job. It is API (documented in the README): GitOps diffs and
# `kubectl apply -f -` in one pass depend on it: identities and RBAC before the pods that use them,
# configuration, the SSH Secret and the PodGroup before pods, the SSH key Job before the pods that
# wait for its keys, workers before the launcher, and the clean-up Job last (it watches the launcher
# Job). Insert new objects in their place; never reorder.
BUILDERS: tuple[Builder, ...] = (
    _some(build_launcher_service_account),
    _some(build_launcher_role),
    _some(build_launcher_role_binding),
    build_cleanup_rbac,
    _some(build_keygen_rbac),
    _with_options(build_config_map),
    _some(build_ssh_secret),
    _some(build_job_service),
    build_pod_group,
    build_worker_pdb,
    build_keygen_job,
    build_worker_stateful_set,
    _with_options(build_launcher_job),
    build_cleanup_job,
)


class Compilation(NamedTuple):
    """The objects of one job, and the warnings met on the way."""

    objects: list[dict[str, Any]]
    warnings: list[Issue]
    name: str
    # The options the job was compiled with: the caller's, with the job's `mpigen.dev/*` annotations.
    options: Options


def plan_job(job: object, options: Options) -> tuple[JobPlan, Options]:
    """Normalise any supported input version into a JobPlan, with the options that apply to this job
    (the caller's, overridden by the job's `mpigen.dev/*` annotations). Raises CompileError."""
    if not isinstance(job, dict):
        raise CompileError([Issue((), "expected an MPIJob mapping")])
    front = api.front_for(job)
    if front is None:
        kind = job.get("kind")
        raise CompileError(api.near_miss_issues(job) or [_unsupported(job)], kind=kind if isinstance(kind, str) and kind else "MPIJob", name=name_of(job))
    options, option_issues = options_for(job, options)
    try:
        plan = front(job, options)
    except CompileError as exc:
        exc.issues[:0] = option_issues
        raise
    issues = option_issues + check_derived_names(plan)
    issues += check_plan(plan)
    issues += [] if issues else check_sizes(plan, options)
    if issues:
        raise CompileError(issues, name=plan.name)
    return plan, options


def _unsupported(job: dict[str, Any]) -> Issue:
    wanted = ", ".join(api.supported())
    api_version, kind = job.get("apiVersion"), job.get("kind")
    if any(kind == k for _, k in api.FRONTS):
        return Issue(("apiVersion",), f'unsupported apiVersion "{api_version}" for {kind}; supported: {wanted}')
    return Issue(("kind",), f'unsupported kind "{kind}" in {api_version}; mpigen compiles: {wanted}')


def build_objects(plan: JobPlan, options: Options) -> list[dict[str, Any]]:
    return [canonical(obj) for build in BUILDERS for obj in build(plan, options)]


def compile_job(job: object, options: Options | None = None) -> Compilation:
    plan, options = plan_job(job, options or Options())
    warnings = list(plan.warnings) + gang_warnings(plan, options)
    objects = build_objects(plan, options)
    too_large = check_object_sizes(objects, plan, job)
    if too_large:
        raise CompileError(too_large, name=plan.name)
    if options.validate:
        refused = _refused_pods(objects, plan, job, options)
        if refused:
            raise CompileError(refused, name=plan.name)
    return Compilation(objects, warnings, plan.name, options)


def _refused_pods(objects: list[dict[str, Any]], plan: JobPlan, job: object, options: Options) -> list[Issue]:
    """The API server's pod validation on every emitted pod template (mpigen.checks.pod)."""
    from mpigen.checks.output import pod_issues
    from mpigen.kube.versions import default_kube_version

    return pod_issues(objects, plan, job, options.kube_version or default_kube_version())


def compile(job: object, options: Options | None = None) -> list[dict[str, Any]]:
    """The Kubernetes objects the mpi-operator would create for `job`, plus what runs it without one.

    Raises CompileError carrying every problem found (each with its field path).
    """
    return compile_job(job, options).objects
