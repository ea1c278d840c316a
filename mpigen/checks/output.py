"""The pod rules (mpigen.checks.pod) on one job's emitted objects, as the user's problems: each
violation is reported at its field in the input job when it is there (a launcher or worker template
field), else at the template or the job, and always names the object and the field as the API server
would (`the API server would refuse StatefulSet pi-worker: spec.template.spec.containers[0].name: ...`).
Pure."""

from __future__ import annotations

from typing import Any

from mpigen import names
from mpigen.checks.pod import check_object, server_path, version_tuple
from mpigen.checks.templates import KUBERNETES_TEMPLATE_PATHS, TemplatePaths
from mpigen.errors import Issue, Path
from mpigen.plan import JobPlan


def _exists(job: Any, path: Path) -> bool:
    node = job
    try:
        for part in path:
            node = node[part]  # paths hold keys and list indices from enumerate (never negative)
    except (KeyError, IndexError, TypeError):
        return False
    return True


def _input_path(job: Any, template: Path | None, path: Path) -> Path:
    """The deepest field of the input template that the object's field comes from."""
    if template is None or path[:2] != ("spec", "template"):
        return ()
    rest = path[2:]
    if rest[:1] in (("labels",), ("annotations",)):
        rest = ("metadata", *rest)  # the server names the template's embedded ObjectMeta without "metadata"
    mapped = template + rest
    while len(mapped) > len(template) and not _exists(job, mapped):
        mapped = mapped[:-1]
    return mapped


Templates = dict[tuple[str, str], Path | None]


def input_templates(plan: JobPlan) -> Templates:
    """The objects (kind, name) whose pod template is one of the input job's, with that template's path."""
    return {
        ("Job", names.launcher(plan.name)): plan.template_paths.get("launcher"),
        ("StatefulSet", names.worker_set(plan.name)): plan.template_paths.get("worker"),
    }


def pod_issues(
    objects: list[dict[str, Any]],
    templates: Templates,
    job: Any,
    kube_version: str,
    paths: TemplatePaths = KUBERNETES_TEMPLATE_PATHS,
) -> list[Issue]:
    """Every pod-template violation of the emitted objects, once each, as Issues on the input job
    (`templates`: the objects that carry an input template, `input_templates`)."""
    version = version_tuple(kube_version)
    seen: set[tuple[Path, str]] = set()
    bodies: set[str] = set()
    issues = []
    # The launcher and workers first: a field mpigen's own Jobs copy from them is reported there, once.
    ordered = sorted(
        objects, key=lambda obj: (obj.get("kind"), (obj.get("metadata") or {}).get("name")) not in templates
    )
    for obj in ordered:
        kind, name = str(obj.get("kind")), str((obj.get("metadata") or {}).get("name"))
        template = templates.get((kind, name))
        for violation in check_object(obj, version, paths):
            where = _input_path(job, template, violation.path)
            tail = server_path(violation.path[2:]) if template is not None else ""
            key = (where, tail + violation.body) if template is not None else ((), violation.body)
            if key in seen or (template is None and violation.body in bodies):
                continue  # one template serves both roles, or mpigen's own Job copies the field
            seen.add(key)
            bodies.add(violation.body)
            message = (
                f"the API server would refuse {kind} {name}: {server_path(violation.path)}: {violation.body}"
            )
            issues.append(Issue(where, message))
    return issues
