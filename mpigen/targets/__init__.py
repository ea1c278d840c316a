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

This module is vocabulary: it names the targets and says what one is, and imports no target until one
is asked for, so `mpigen.options` may read the table.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    from mpigen.errors import Issue
    from mpigen.options import Options
    from mpigen.plan import JobPlan
    from mpigen.targets.shared.workload import NativeGang

# name -> the module that defines the target's TARGET. The first is the default (`--target`).
TARGETS: dict[str, str] = {
    "operator": "mpigen.targets.operator",
    "volcano": "mpigen.targets.volcano",
    "jobset": "mpigen.targets.jobset",
}
DEFAULT_TARGET = next(iter(TARGETS))


class Target(Protocol):
    """A run target: a job plan in, the Kubernetes objects that run it out."""

    name: str

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


class NativeGangTarget(Target, Protocol):
    """A target that can use Kubernetes' own gang scheduling (`--gang-scheduler kubernetes`): an optional
    part of a Target. A target without `native_gang` refuses that option (`gangs_natively`)."""

    def native_gang(self, plan: JobPlan) -> NativeGang:
        """What the gang holds together: which roles' pods, how many of them at least."""
        ...


def gangs_natively(run: Target) -> bool:
    return hasattr(run, "native_gang")


def native_gang(name: str, plan: JobPlan) -> NativeGang:
    """The gang of the target `name`, which gangs natively (mpigen.compiler refuses the option otherwise)."""
    run = target(name)
    assert gangs_natively(run), name
    return cast("NativeGangTarget", run).native_gang(plan)


def target(name: str) -> Target:
    """The target `name` (a key of TARGETS), imported on first use."""
    module = importlib.import_module(TARGETS[name])
    found: Target = module.TARGET
    return found
