"""The compiler: one MPIJob (or TrainJob) document in, the Kubernetes objects that run it out. Pure.

`compile_job` does no I/O and reads no clock, environment or randomness: the same document and
options always give the same objects, in the same order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mpigen import inputs as api
from mpigen.checks.stage import check_output
from mpigen.errors import ComparedByFields, CompileError, Issue
from mpigen.inputs.aliases import resolve_aliases
from mpigen.inputs.annotations import options_for
from mpigen.inputs.shared import name_of
from mpigen.options import Options
from mpigen.plan import JobPlan
from mpigen.targets import DEFAULT_TARGET, TrainJobRunner, gangs_natively, missing_capability, target
from mpigen.targets.nulls import without_nulls
from mpigen.targets.shared.workload import workload_option_issues

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
    job, alias_warnings = resolve_aliases(job)
    try:
        plan = front(job, options)
    except CompileError as exc:
        exc.issues[:0] = option_issues
        raise
    if alias_warnings:
        plan = plan.replace(warnings=(*alias_warnings, *plan.warnings))
    run = target(options.target)
    issues = option_issues + workload_option_issues(options, gangs_natively(run)) + run.check(plan)
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
    """Every object of the job, in its target's order (mpigen.targets); no null in a custom resource."""
    return without_nulls(target(options.target).build(plan, options))


def compile_job(job: object, options: Options | None = None, runtimes: Runtimes | None = None) -> Compilation:
    """The objects of one job and its warnings; a TrainJob is planned with the runtime it names among
    `runtimes` (the stream's, mpigen.pipeline.collect_runtimes). Raises CompileError with every problem:
    those an early one hid too (`_hidden_issues`)."""
    try:
        return _compile_job(job, options, runtimes)
    except CompileError as exc:
        exc.issues += _hidden_issues(job, options, exc.issues, runtimes)
        raise


def _hidden_issues(
    job: object, options: Options | None, found: list[Issue], runtimes: Runtimes | None = None
) -> list[Issue]:
    """The problems the `found` ones hid (an unknown replica type, an invalid name: mpigen.inputs.repair),
    found by compiling the job with those taken out, again while the new ones hide more (a few rounds)."""
    from mpigen.inputs.repair import renamed, repaired  # deferred: only a refused job is repaired

    original = name_of(job) if isinstance(job, dict) else ""
    seen = {(issue.path, issue.message) for issue in found}
    hidden: list[Issue] = []
    document, issues, stand_in = job, found, None
    for _ in range(3):
        repair = repaired(document, issues)
        if repair is None:
            break
        document, stand_in = repair[0], repair[1] or stand_in
        try:
            _compile_job(document, options, runtimes)
            break
        except CompileError as exc:
            issues = exc.issues
        for issue in issues:
            if stand_in is not None and issue.path == ("metadata", "name"):
                continue  # about the stand-in, not the job
            issue = renamed(issue, stand_in, original)
            if (issue.path, issue.message) not in seen:
                seen.add((issue.path, issue.message))
                hidden.append(issue)
    return hidden


def _compile_job(
    job: object, options: Options | None = None, runtimes: Runtimes | None = None
) -> Compilation:
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
    requested = options.target
    options, option_issues = options_for(document, options.replace(target="jobset"))
    run = target(options.target)
    if missing_capability(run, "trainjob") is not None or not isinstance(run, TrainJobRunner):
        # The TrainJob's own `mpigen.dev/target` names a target that cannot run it: the front refuses
        # that annotation beside the TrainJob's other problems, planned on the jobset target meanwhile.
        options = options.replace(target="jobset")
        run = target("jobset")
        assert isinstance(run, TrainJobRunner)
    if runtimes is None:
        from mpigen.inputs.trainjob import Runtimes  # deferred: an MPIJob needs no Trainer runtimes

        runtimes = Runtimes()
    try:
        plan = front(document, runtimes, options)
    except CompileError as exc:
        exc.issues[:0] = option_issues
        raise
    issues = option_issues + run.check_train_job(plan, options)
    if issues:
        raise CompileError(issues, kind="TrainJob", name=plan.name)
    objects = without_nulls(run.build_train_job(plan, options))
    checked = check_output(objects, None, document, options, run.kinds)
    if checked.refused:
        raise CompileError(checked.refused, kind="TrainJob", name=plan.name)
    warnings = run.train_job_warnings(plan, options)
    if requested not in (DEFAULT_TARGET, "jobset"):  # --target (a stream's MPIJobs') is no TrainJob's
        message = f"--target {requested} does not apply to a TrainJob: Kubeflow Trainer runs every TrainJob as a JobSet (rendered for the jobset target)"
        warnings.append(Issue((), message, "warning"))
    return Compilation(objects, warnings, plan.name, options, checked.invalid)
