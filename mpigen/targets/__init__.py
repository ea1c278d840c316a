"""Run targets: what a job plan becomes in the cluster. One folder per target, one row in `TARGETS`.

A target is a folder `mpigen/targets/<name>/` whose `__init__.py` defines `TARGET`, an object with the
`Target` protocol below: which objects it builds and in what order, what it checks on a plan before it
builds (the names it derives, the names it reserves in the user's pod templates, the sizes the API
server allows), how worker pods are named and reached (the host names of the hostfile) and the Role
the launcher gets. The compiler asks `target(options.target)` and nothing else of a target.

Adding a target is a new folder and one row in `TARGETS`: the `--target` flag, the `mpigen.dev/target`
annotation and the input schemas' annotation list are made from this table (mpigen.options). A
target imports the vocabulary, the input plan and the checks, never another target (tests/test_layout.py);
what two targets share lives beside this file, not in either of them.

Each target declares what is its own: its names (`names.py` in its folder, or its builders' modules),
the kinds it emits that Kubernetes does not define (`kinds.py`: their pod-template paths and vendored
schemas, which the compiler hands to the output checks), and the optional abilities it has
(`capabilities`, each a name of `CAPABILITIES` with its own protocol, e.g. `TrainJobRunner`); a job that
asks for an ability its target lacks is refused by the ability's name (`missing_capability`).

This module is vocabulary: it names the targets and says what one is, and imports no target until one
is asked for, so `mpigen.options` and the checks may read it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

if TYPE_CHECKING:
    from mpigen.errors import Issue
    from mpigen.options import Options
    from mpigen.plan import JobPlan, TrainPlan
    from mpigen.targets.shared.workload import NativeGang

# name -> the module that defines the target's TARGET. The first is the default (`--target`).
TARGETS: dict[str, str] = {
    "operator": "mpigen.targets.operator",
    "volcano": "mpigen.targets.volcano",
    "jobset": "mpigen.targets.jobset",
}
DEFAULT_TARGET = next(iter(TARGETS))

# The optional abilities a target may have, by name, with what a job that needs one asks for. A target
# lists the ones it has in `capabilities` and implements each one's protocol below.
CAPABILITIES: dict[str, str] = {
    "trainjob": "a Kubeflow Trainer TrainJob",
    "native-gang": "Kubernetes' own gang scheduling (--gang-scheduler kubernetes)",
}


class Kind(NamedTuple):
    """A kind a target emits that Kubernetes does not define: where its objects keep their pod templates
    (paths from the object's root, "*" for every item of a list) and the schema, vendored in schemas/,
    that its objects are checked against."""

    api_version: str
    kind: str
    template_paths: tuple[tuple[str, ...], ...]
    schema: str


class Target(Protocol):
    """A run target: a job plan in, the Kubernetes objects that run it out."""

    name: str
    # The kinds it emits that Kubernetes does not define (its `kinds` module's KINDS).
    kinds: tuple[Kind, ...]
    # The names of the optional abilities (CAPABILITIES) it has.
    capabilities: frozenset[str]

    def check(self, plan: JobPlan) -> list[Issue]:
        """The job's problems for this target, before anything is built (the user's: exit 1): the
        names it derives from the job's, the names it reserves in the job's pod templates."""
        ...

    def check_sizes(self, plan: JobPlan, options: Options) -> list[Issue]:
        """What it would build fits what the API server stores (asked only of a job with no other
        problem; computed without building, so an absurd worker count is refused at once)."""
        ...

    def warnings(self, plan: JobPlan, options: Options) -> list[Issue]:
        """What the job will do that its author may not expect on this target."""
        ...

    def build(self, plan: JobPlan, options: Options) -> list[dict[str, Any]]:
        """Every object, in the target's fixed order (API: GitOps diffs and `kubectl apply` depend on it)."""
        ...

    def worker_pods(self, plan: JobPlan) -> list[str]:
        """The worker pods' names, in rank order."""
        ...

    def hosts(self, plan: JobPlan) -> list[str]:
        """The host names the launcher reaches the ranks by, one per hostfile line."""
        ...

    def launcher_role(self, plan: JobPlan) -> dict[str, Any] | None:
        """The Role the launcher's ServiceAccount is bound to (None: it gets no rights)."""
        ...

    def engine_objects(self, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The objects the target's engine creates from `objects` (what it built), named after them: they
        count in the check that two jobs never write the same object (apiVersion, kind and metadata)."""
        ...


@runtime_checkable
class NativeGangTarget(Protocol):
    """The "native-gang" ability: the target can use Kubernetes' own gang scheduling (`--gang-scheduler
    kubernetes`). A target without it refuses that option (`gangs_natively`)."""

    def native_gang(self, plan: JobPlan) -> NativeGang:
        """What the gang holds together: which roles' pods, how many of them at least."""
        ...


def gangs_natively(run: Target) -> bool:
    return "native-gang" in run.capabilities and isinstance(run, NativeGangTarget)


def native_gang(name: str, plan: JobPlan) -> NativeGang:
    """The gang of the target `name`, which gangs natively (mpigen.compiler refuses the option otherwise)."""
    run = target(name)
    if not isinstance(run, NativeGangTarget) or not gangs_natively(run):
        raise AssertionError(f"the {name} target has no native gang")
    return run.native_gang(plan)


def target(name: str) -> Target:
    """The target `name` (a key of TARGETS), imported on first use."""
    module = importlib.import_module(TARGETS[name])
    found: Target = module.TARGET
    return found


@runtime_checkable
class TrainJobRunner(Protocol):
    """The "trainjob" ability: what Kubeflow Trainer's controller would create for one TrainJob plan."""

    def check_train_job(self, plan: TrainPlan, options: Options) -> list[Issue]:
        """The TrainJob's problems on this target, before anything is built."""
        ...

    def train_job_warnings(self, plan: TrainPlan, options: Options) -> list[Issue]:
        """What the TrainJob will do that its author may not expect on this target."""
        ...

    def build_train_job(self, plan: TrainPlan, options: Options) -> list[dict[str, Any]]:
        """Every object of the TrainJob, in the target's fixed order."""
        ...


def missing_capability(run: Target, capability: str) -> str | None:
    """Why `run` cannot do what `capability` (a key of CAPABILITIES) asks, or None when it can."""
    if capability in run.capabilities:
        return None
    able = ", ".join(name for name in TARGETS if capability in target(name).capabilities) or "none"
    return f"the {run.name} target cannot run {CAPABILITIES[capability]}; targets that can: {able}"


def all_kinds() -> tuple[Kind, ...]:
    """The kinds of every target (imports every target: for tools and tests; a render hands its
    target's own `kinds` to the output checks)."""
    return tuple(kind for name in TARGETS for kind in target(name).kinds)


def kind_schemas() -> dict[tuple[str, str], str]:
    """(apiVersion, kind) -> the schema file in schemas/ of every target's own kinds (imports every target)."""
    return {(kind.api_version, kind.kind): kind.schema for kind in all_kinds()}
