"""Where objects keep their pod templates: one table of paths per kind, Kubernetes' own kinds here and
each run target's own kinds from its declaration (mpigen.targets.Kind, handed in by the compiler).

Read by the pod rules (mpigen.checks.pod) and the API rules on the emitted objects
(mpigen.checks.rules); light, so that the plan's checks do not load the pod rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from mpigen.errors import Path

if TYPE_CHECKING:
    from mpigen.targets import Kind

TemplatePaths = Mapping[tuple[str, str], tuple[Path, ...]]

# Where each of Kubernetes' kinds keeps its pod templates ("*": every item of a list), by API group and kind.
KUBERNETES_TEMPLATE_PATHS: dict[tuple[str, str], tuple[Path, ...]] = {
    ("", "PodTemplate"): (("template",),),
    ("", "ReplicationController"): (("spec", "template"),),
    ("apps", "Deployment"): (("spec", "template"),),
    ("apps", "ReplicaSet"): (("spec", "template"),),
    ("apps", "StatefulSet"): (("spec", "template"),),
    ("apps", "DaemonSet"): (("spec", "template"),),
    ("batch", "Job"): (("spec", "template"),),
    ("batch", "CronJob"): (("spec", "jobTemplate", "spec", "template"),),
}


def template_paths(kinds: Iterable[Kind]) -> dict[tuple[str, str], tuple[Path, ...]]:
    """Kubernetes' table with a target's own kinds added."""
    own = {(kind.api_version.rpartition("/")[0], kind.kind): kind.template_paths for kind in kinds}
    return {**KUBERNETES_TEMPLATE_PATHS, **own}


def group_kind(obj: dict[str, Any]) -> tuple[str, str]:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    group = api_version.rpartition("/")[0] if isinstance(api_version, str) else ""
    return group, kind if isinstance(kind, str) else ""


def pod_templates(
    obj: dict[str, Any], paths: TemplatePaths = KUBERNETES_TEMPLATE_PATHS
) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Each pod template of `obj` with its path, as `paths` places them for its kind."""
    for path in paths.get(group_kind(obj), ()):
        yield from _walk(obj, path, ())


def _walk(node: Any, rest: Path, at: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    if not rest:
        if isinstance(node, dict):
            yield at, node
        return
    head, tail = rest[0], rest[1:]
    if head == "*":
        for index, item in enumerate(node if isinstance(node, list) else []):
            yield from _walk(item, tail, (*at, index))
    elif isinstance(node, dict) and head in node:
        yield from _walk(node[head], tail, (*at, head))
