"""The compiler: one MPIJob (or TrainJob) document in, the Kubernetes objects that run it out. Pure.

`compile_job` does no I/O and reads no clock, environment or randomness: the same document and
options always give the same objects, in the same order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mpigen import inputs as api
from mpigen.checks.stage import check_output
from mpigen.errors import ComparedByFields, CompileError, Issue
from mpigen.inputs.annotations import options_for
from mpigen.inputs.shared import name_of
from mpigen.options import Options
from mpigen.plan import JobPlan
from mpigen.targets import TrainJobRunner, missing_capability, target

if TYPE_CHECKING:
    from mpigen.inputs import TrainFront
    from mpigen.inputs.trainjob import Runtimes


class Compilation(ComparedByFields):
    """The objects of one job, and the warnings met on the way. Two are equal when every field is."""

    __slots__ = ("invalid", "name", "objects", "options", "warnings")

    def __init__(
        self,
        objects: list[dict[str, Any]],
        warnings: list[Issue] | None = None,
        name: str = "",
        options: Options | None = None,
        invalid: list[tuple[dict[str, Any], Issue]] | None = None,
    ) -> None:
        self.objects = objects
        self.warnings: list[Issue] = [] if warnings is None else warnings
        self.name = name
        # The options the job was compiled with: the caller's, with the job's `mpigen.dev/*` annotations.
        self.options = Options() if options is None else options
        # What the output checks found wrong with mpigen's own objects (mpigen.checks.stage): each object
        # with its issue, reported apart from the user's problems (exit 3).
        self.invalid: list[tuple[dict[str, Any], Issue]] = [] if invalid is None else invalid

    _compared = ("objects", "warnings", "name", "options", "invalid")


def plan_job(job: object, options: Options) -> tuple[JobPlan, Options]:
    """Normalise any supported input version into a JobPlan, with the options that apply to this job
    (the caller's, overridden by the job's `mpigen.dev/*` annotations). Raises CompileError."""
    if not isinstance(job, dict):
        raise CompileError([Issue((), "expected an MPIJob mapping")])
    front = api.front_for(job)
    if front is None:
        kind = job.get("kind")
        raise CompileError(
            api.near_miss_issues(job) or [_unsupported(job)],
            kind=kind if isinstance(kind, str) and kind else "MPIJob",
            name=name_of(job),
        )
    options, option_issues = options_for(job, options)
    try:
        plan = front(job, options)
    except CompileError as exc:
        exc.issues[:0] = option_issues
        raise
    run = target(options.target)
    issues = option_issues + run.check(plan)
    issues += [] if issues else run.check_sizes(plan, options)
    if issues:
        raise CompileError(issues, name=plan.name)
    return plan, options


def _unsupported(job: dict[str, Any]) -> Issue:
    wanted = ", ".join(api.supported())
    api_version, kind = job.get("apiVersion"), job.get("kind")
    if any(kind == k for _, k in api.FRONTS):
        return Issue(
            ("apiVersion",), f'unsupported apiVersion "{api_version}" for {kind}; supported: {wanted}'
        )
    return Issue(("kind",), f'unsupported kind "{kind}" in {api_version}; mpigen compiles: {wanted}')


def build_objects(plan: JobPlan, options: Options) -> list[dict[str, Any]]:
    """Every object of the job, in its target's order (mpigen.targets)."""
    return target(options.target).build(plan, options)


def compile_job(job: object, options: Options | None = None, runtimes: Runtimes | None = None) -> Compilation:
    """The objects of one job and its warnings; a TrainJob is planned with the runtime it names among
    `runtimes` (the stream's, mpigen.pipeline.collect_runtimes). Raises CompileError."""
    train = api.train_front_for(job) if isinstance(job, dict) else None
    if train is not None:
        return _compile_train_job(job, train, runtimes, options or Options())  # type: ignore[arg-type]
    plan, options = plan_job(job, options or Options())
    run = target(options.target)
    warnings = list(plan.warnings) + run.warnings(plan, options)
    objects = build_objects(plan, options)
    checked = check_output(objects, plan, job, options, run.kinds)
    if checked.refused:
        raise CompileError(checked.refused, name=plan.name)
    return Compilation(objects, warnings, plan.name, options, checked.invalid)


def compile(job: object, options: Options | None = None) -> list[dict[str, Any]]:
    """The Kubernetes objects the mpi-operator would create for `job`, plus what runs it without one.

    Raises CompileError carrying every problem found (each with its field path).
    """
    return compile_job(job, options).objects


def _compile_train_job(
    document: dict[str, Any], front: TrainFront, runtimes: Runtimes | None, options: Options
) -> Compilation:
    """A TrainJob on the jobset target, whatever `options.target` says (Kubeflow Trainer runs every TrainJob
    as a JobSet), unless its own `mpigen.dev/target` names a target without the "trainjob" ability."""
    options, option_issues = options_for(document, options.replace(target="jobset"))
    run = target(options.target)
    missing = missing_capability(run, "trainjob")
    if missing is not None or not isinstance(run, TrainJobRunner):
        issue = Issue(("metadata", "annotations"), missing or f"the {run.name} target cannot run a TrainJob")
        raise CompileError([*option_issues, issue], kind="TrainJob", name=name_of(document))
    if runtimes is None:
        from mpigen.inputs.trainjob import Runtimes  # deferred: an MPIJob needs no Trainer runtimes

        runtimes = Runtimes()
    try:
        plan = front(document, runtimes, options)
    except CompileError as exc:
        exc.issues[:0] = option_issues
        raise
    issues = option_issues + run.check_train_job(plan)
    if issues:
        raise CompileError(issues, kind="TrainJob", name=plan.name)
    objects = run.build_train_job(plan, options)
    checked = check_output(objects, None, document, options, run.kinds)
    if checked.refused:
        raise CompileError(checked.refused, kind="TrainJob", name=plan.name)
    return Compilation(objects, list(plan.warnings), plan.name, options, checked.invalid)
