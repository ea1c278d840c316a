"""API-server rules the JSON schemas do not express, on the input plan and on the emitted objects.

Input (`check_plan`, the user's problems, exit 1):
- names the target adds (the operator target's, mpigen.targets.operator.reserved) must not collide with the pod templates' own: volumes `mpi-job-config` and
  `mpi-job-kubectl`, init containers `kubectl-delivery` and `wait-for-workers`, the launcher's
  `OMPI_MCA_*` variables, mounts at `/etc/mpi` and `/opt/kube` (the API server refuses duplicate
  volume and container names and mount paths; a duplicate variable would silently lose one value);
- template label keys and values and annotation keys are well formed (the schemas only say "string").

Output (`check_objects`, mpigen's own bugs, exit 3): every selector matches the labels of the pods it
must select, every RoleBinding ServiceAccount subject is in the binding's own namespace (named, or
left out when the job has none), every label on every object is well formed, and Kubernetes' own
Workload and PodGroup keep the rules of their API (mpigen.checks.workload).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Any

from mpigen import names
from mpigen.checks.templates import KUBERNETES_TEMPLATE_PATHS, TemplatePaths, pod_templates
from mpigen.errors import Issue, Path, shown
from mpigen.plan import JobPlan

_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = re.compile(rf"({_NAME})?\Z")
_QUALIFIED_NAME = re.compile(rf"{_NAME}\Z")
_DNS1123_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z"
QUALIFIED_NAME_MAX = 63
PREFIX_MAX = 253

# What a target adds to each role's pod: (volumes, init containers, env of containers[0], mounts).
Added = dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]]


def check_plan(plan: JobPlan, added: Added) -> list[Issue]:
    """Collisions with what the target adds (`added`), and malformed labels, in the job's pod templates."""
    templates: dict[Path, tuple[dict[str, Any], list[str]]] = {}
    for role, template in (("launcher", plan.launcher_template), ("worker", plan.worker_template)):
        # v1alpha1's one template serves both roles: check it once, for both.
        templates.setdefault(plan.template_paths.get(role, (role,)), (template, []))[1].append(role)
    issues: list[Issue] = []
    for path, (template, roles) in templates.items():
        issues += _collisions(roles, template, path, added, plan.kubexec)
        issues += _metadata_keys(template.get("metadata") or {}, path + ("metadata",))
        issues += _images(template.get("spec") or {}, path + ("spec",))
    return issues


def _images(pod: dict[str, Any], path: Path) -> list[Issue]:
    """Every container names an image: the API server refuses a pod template without one
    (k8s.io/kubernetes pkg/apis/core/validation: validateContainers, `image: Required value`)."""
    return [
        Issue(
            path + (field, index, "image"),
            "required field is missing: the API server refuses a container without an image"
            if container.get("image") is None
            else "must not be empty: the API server refuses a container without an image",
        )
        for field in ("initContainers", "containers")
        for index, container in enumerate(pod.get(field) or [])
        if isinstance(container, dict) and not container.get("image")
    ]


def _collisions(
    roles: list[str], template: dict[str, Any], path: Path, adds: Added, kubexec: bool
) -> list[Issue]:
    def reserving(index: int, value: object) -> str:
        """The roles whose pods get `value` from mpigen ("" for none), e.g. "launcher and worker"."""
        return " and ".join(role for role in roles if value in adds[role][index])

    pod = template.get("spec") or {}
    spec_path = path + ("spec",)
    issues = []
    for index, volume in enumerate(pod.get("volumes") or []):
        name = volume.get("name") if isinstance(volume, dict) else None
        if who := reserving(0, name):
            message = _reserved(name, f"adds a volume of that name to the {who} pods", "rename yours")
            issues.append(Issue(spec_path + ("volumes", index, "name"), message))
    for field in ("containers", "initContainers"):
        for index, container in enumerate(pod.get(field) or []):
            name = container.get("name") if isinstance(container, dict) else None
            if who := reserving(1, name):
                message = _reserved(
                    name, f"adds an init container of that name to the {who} pods", "rename yours"
                )
                issues.append(Issue(spec_path + (field, index, "name"), message))
    containers = pod.get("containers") or [{}]
    first = containers[0] if isinstance(containers[0], dict) else {}
    first_path = spec_path + ("containers", 0)
    for index, var in enumerate(first.get("env") or []):
        name = var.get("name") if isinstance(var, dict) else None
        if who := reserving(2, name):
            why = (
                "to point Open MPI at kubexec.sh and the hostfile"
                if kubexec and name in names.LAUNCHER_ENV
                else "for the MPI launch"
            )
            what = f"sets it in the first container of the {who} pods, {why}"
            issues.append(Issue(first_path + ("env", index, "name"), _reserved(name, what, "remove yours")))
    for index, mount in enumerate(first.get("volumeMounts") or []):
        target = str(mount.get("mountPath", "")).rstrip("/") if isinstance(mount, dict) else ""
        if who := reserving(3, target):
            what = {names.KUBECTL_MOUNT_PATH: "kubectl", names.CONFIG_MOUNT_PATH: "the job's ConfigMap"}.get(
                target, "the SSH key"
            )
            message = _reserved(
                mount["mountPath"],
                f"mounts {what} there in the first container of the {who} pods",
                "mount yours elsewhere",
            )
            issues.append(Issue(first_path + ("volumeMounts", index, "mountPath"), message))
    return issues


def _reserved(value: object, what: str, fix: str) -> str:
    return f"{shown(str(value))} is reserved: mpigen {what}; {fix}"


def _metadata_keys(meta: dict[str, Any], path: Path) -> list[Issue]:
    issues = []
    for field in ("labels", "annotations"):
        for key, value in (meta.get(field) or {}).items():
            # The API server reads annotation keys in lower case (apimachinery ValidateAnnotations).
            problem = qualified_name_problem(str(key) if field == "labels" else str(key).lower())
            if problem:
                issues.append(Issue(path + (field, key), f"invalid {field[:-1]} key: {problem}"))
            elif field == "labels":
                problem = label_value_problem(value)
                if problem:
                    issues.append(Issue(path + (field, key), f"invalid label value: {problem}"))
    return issues


@functools.lru_cache(maxsize=4096)  # every object carries the same few label keys
def qualified_name_problem(key: str) -> str | None:
    """Why `key` is not a valid label or annotation key (`[prefix/]name`), or None."""
    prefix, _, name = key.rpartition("/")
    if "/" in key and (not prefix or len(prefix) > PREFIX_MAX or not re.match(_DNS1123_SUBDOMAIN, prefix)):
        return f"the prefix {shown(prefix)} must be a DNS subdomain of at most {PREFIX_MAX} characters"
    if len(name) > QUALIFIED_NAME_MAX or not _QUALIFIED_NAME.match(name):
        return (
            f'{shown(name)} must be at most {QUALIFIED_NAME_MAX} letters, digits, "-", "_" or ".", '
            "starting and ending with a letter or digit"
        )
    return None


def label_value_problem(value: object) -> str | None:
    if not isinstance(value, str):
        return None  # the schema check reports the type
    if len(value) > QUALIFIED_NAME_MAX:
        return f"{shown(value)} has {len(value)} characters, more than {QUALIFIED_NAME_MAX}"
    if not _LABEL_VALUE.match(value):
        return f'{shown(value)} must be empty or letters, digits, "-", "_" or ".", starting and ending with a letter or digit'
    return None


def check_objects(
    objects: list[dict[str, Any]], paths: TemplatePaths = KUBERNETES_TEMPLATE_PATHS
) -> Iterator[tuple[dict[str, Any], Issue]]:
    """Each (object, issue) where the emitted objects break an API-server rule the schemas miss (their
    pod templates found by `paths`, mpigen.checks.templates)."""
    pods = [
        (template.get("metadata") or {}).get("labels") or {}
        for obj in objects
        for _, template in pod_templates(obj, paths)
    ]
    for obj in objects:
        for issue in _object_issues(obj, pods, paths):
            yield obj, issue


def _template_labels(obj: dict[str, Any]) -> dict[str, str] | None:
    template = (obj.get("spec") or {}).get("template")
    return (
        ((template or {}).get("metadata") or {}).get("labels") or {} if isinstance(template, dict) else None
    )


def _matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


def _object_issues(obj: dict[str, Any], pods: list[dict[str, str]], paths: TemplatePaths) -> Iterator[Issue]:
    spec = obj.get("spec") or {}
    yield from _metadata_keys(obj.get("metadata") or {}, ("metadata",))
    for path, template in pod_templates(obj, paths):
        yield from _metadata_keys(template.get("metadata") or {}, (*path, "metadata"))
    selector = spec.get("selector")
    if isinstance(selector, dict) and "matchLabels" in selector:
        own = _template_labels(obj)
        match = selector["matchLabels"] or {}
        if own is not None and not _matches(match, own):
            yield Issue(("spec", "selector", "matchLabels"), "does not match the pod template's labels")
        if own is None and not any(_matches(match, labels) for labels in pods):
            yield Issue(("spec", "selector", "matchLabels"), "selects none of the job's pods")
    elif (
        obj.get("kind") == "Service"
        and isinstance(selector, dict)
        and not any(_matches(selector, labels) for labels in pods)
    ):
        yield Issue(("spec", "selector"), "selects none of the job's pods")
    if obj.get("kind") in ("RoleBinding", "ClusterRoleBinding"):
        yield from _subject_issues(obj)
    if obj.get("kind") in ("Workload", "PodGroup"):
        # deferred: the gang objects' rules only for a job rendered with a gang (a PodGroup, or Kubernetes'
        # Workload)
        from mpigen.checks.workload import scheduling_issues

        yield from scheduling_issues(obj)


def _subject_issues(binding: dict[str, Any]) -> Iterator[Issue]:
    """mpigen binds only the job's own ServiceAccounts: a RoleBinding's subject names the binding's own
    namespace, or none (which Kubernetes reads as the binding's); a ClusterRoleBinding's must name one."""
    own = (binding.get("metadata") or {}).get("namespace")
    for index, subject in enumerate(binding.get("subjects") or []):
        if subject.get("kind") != "ServiceAccount":
            continue
        namespace = subject.get("namespace")
        if binding["kind"] == "ClusterRoleBinding" and not namespace:
            yield Issue(("subjects", index, "namespace"), "a ServiceAccount subject needs a namespace")
        elif binding["kind"] == "RoleBinding" and namespace is not None and namespace != own:
            yield Issue(
                ("subjects", index, "namespace"), f'"{namespace}" is not the binding\'s own namespace "{own}"'
            )
