"""The output-check stage: every check on one job's built objects, run from one function, once, by the
compiler (mpigen.compiler). Pure.

In order: the objects' sizes (what etcd stores, mpigen.checks.objectsize), then with validation on the
API server's pod rules (mpigen.checks.pod, through mpigen.checks.output), the strict schemas
(mpigen.checks.kube) and the API rules the schemas miss (mpigen.checks.rules). The first two find the
user's problems (a field of theirs the cluster would refuse: exit 1), the last two mpigen's own bugs
(exit 3), each with the object it is in. A target's own kinds (mpigen.targets.Kind) say where their pod
templates sit and which vendored schema checks them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from mpigen.checks.kube.versions import default_kube_version
from mpigen.checks.objectsize import check_object_sizes
from mpigen.checks.rules import check_objects
from mpigen.checks.templates import template_paths
from mpigen.errors import Issue
from mpigen.options import Options
from mpigen.plan import JobPlan

if TYPE_CHECKING:
    from mpigen.targets import Kind


class OutputCheck(NamedTuple):
    """What the stage found: the user's problems, and mpigen's own (each with its object)."""

    refused: list[Issue]
    invalid: list[tuple[dict[str, Any], Issue]]


def check_output(
    objects: list[dict[str, Any]], plan: JobPlan | None, job: Any, options: Options, kinds: Iterable[Kind]
) -> OutputCheck:
    """Every check on the objects built for `job` (`plan`: its job plan, None for a TrainJob, whose
    objects carry no template of an MPIJob's), stopping at the user's problems."""
    too_large = check_object_sizes(objects, plan, job)
    if too_large or not options.validate:
        return OutputCheck(too_large, [])
    from mpigen.checks.kube.validator import validate_object  # deferred: --no-validate spares the schemas
    from mpigen.checks.output import (  # deferred: --no-validate spares the pod rules
        input_templates,
        pod_issues,
    )

    kinds = tuple(kinds)
    paths = template_paths(kinds)
    templates = {} if plan is None else input_templates(plan)
    refused = pod_issues(objects, templates, job, options.kube_version or default_kube_version(), paths)
    if refused:
        return OutputCheck(refused, [])
    invalid = [(obj, issue) for obj in objects for issue in validate_object(obj, options.kube_version, kinds)]
    invalid += check_objects(objects, paths)
    return OutputCheck([], invalid)
