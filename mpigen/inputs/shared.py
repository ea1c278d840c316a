"""What every input front shares: the strict model base, ObjectMeta, error mapping, pod template checks.

Input models (mpigen/inputs/model.py) have pydantic's semantics with `extra="forbid"` and strict types: a
typo such as `slotPerWorker` or a string where Kubernetes wants an integer is an error, never ignored or
coerced. A valid document is checked without pydantic; pydantic explains an invalid one.
Pod templates stay plain dicts (their full schema is Kubernetes' own); `check_pod_template` only makes
sure the parts the compiler edits have the shape it needs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from mpigen import names, tree
from mpigen.checks.kube.validator import validate_pod_template
from mpigen.errors import Issue, Path, format_path, shown
from mpigen.inputs._fast_model import parse_fast
from mpigen.inputs.model import Field, Strict, pydantic_model
from mpigen.plan import JobService, Labels
from mpigen.records import Record

if TYPE_CHECKING:
    from pydantic import BaseModel

    from mpigen.options import Options

__all__ = ["Field", "Strict"]  # re-exported: the fronts declare their models with them

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


class ObjectMeta(Strict):
    """Kubernetes ObjectMeta; fields a cluster adds (uid, managedFields, ...) are accepted and ignored."""

    name: str | None = None
    generateName: str | None = None
    namespace: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    uid: str | None = None
    resourceVersion: str | None = None
    generation: int | None = None
    creationTimestamp: Any = None
    deletionTimestamp: Any = None
    deletionGracePeriodSeconds: int | None = None
    selfLink: str | None = None
    finalizers: list[str] | None = None
    ownerReferences: list[dict[str, Any]] | None = None
    managedFields: list[dict[str, Any]] | None = None


PodTemplate = dict[str, Any]


def _describe(value: object) -> str:
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"number {value}"
    if isinstance(value, str):
        return f"string {shown(value)}"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def _message(error: Any, model: type[BaseModel]) -> str:
    kind = error["type"]
    value = error.get("input")
    ctx = error.get("ctx") or {}
    loc = error["loc"]
    if kind == "extra_forbidden":
        home = _nested_home(model, loc[:-1], str(loc[-1]))
        if home:
            where = format_path(loc[:-1] + home)
            return f"unknown field {shown(str(loc[-1]))} (did you mean to put it under {where}, one level deeper?)"
        known = _known_fields(model, loc[:-1])
        # deferred: difflib only for the "did you mean" of an unknown field
        import difflib

        close = difflib.get_close_matches(str(loc[-1]), known, n=1)
        hint = f' (did you mean "{close[0]}"?)' if close else ""
        return f"unknown field {shown(str(loc[-1]))}{hint}"
    if kind == "missing":
        return "required field is missing"
    if kind in ("int_type", "int_from_float"):
        return f"expected an integer, got {_describe(value)}"
    if kind == "bool_type":
        return f"expected true or false, got {_describe(value)}"
    if kind == "string_type":
        return f"expected a string, got {_describe(value)}"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"expected a mapping, got {_describe(value)}"
    if kind == "list_type":
        return f"expected a list, got {_describe(value)}"
    if kind == "greater_than_equal":
        return f"must be >= {ctx.get('ge')}, got {value}"
    if kind == "less_than_equal":
        return f"must be <= {ctx.get('le')}, got {value}"
    if kind == "literal_error":
        expected = str(ctx.get("expected"))
        # A value that differs only in case ("running") names the one it meant.
        same = [v for v in re.findall(r"'([^']*)'", expected) if str(value).lower() == v.lower()]
        hint = f' (did you mean "{same[0]}"?)' if isinstance(value, str) and same else ""
        return f"must be one of {expected}, got {_describe(value)}{hint}"
    return f"{error['msg']}, got {_describe(value)}"


def _nested_home(model: type[BaseModel], loc: tuple[Any, ...], key: str) -> tuple[str, ...]:
    """The field of a model just below `loc` that has a field named `key` (a dedented `Worker:` under
    `spec` belongs in `spec.mpiReplicaSpecs`): its name, as a path, or () if there is none."""
    current = _model_at(model, loc)
    fields = getattr(current, "model_fields", None) or {}
    for name, info in fields.items():
        inner = getattr(_model_of(info.annotation), "model_fields", None) or {}
        if key in inner:
            return (name,)
    return ()


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> Any:
    current: Any = model
    for part in loc:
        fields = getattr(current, "model_fields", None)
        if not fields or part not in fields:
            return None
        current = _model_of(fields[part].annotation)
    return current


def _known_fields(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """Field names of the model found by walking `loc` from `model` (for "did you mean")."""
    current: Any = model
    for part in loc:
        fields = getattr(current, "model_fields", None)
        if not fields or part not in fields:
            return []
        current = _model_of(fields[part].annotation)
    fields = getattr(current, "model_fields", None)
    return list(fields) if fields else []


def _model_of(annotation: Any) -> Any:
    # deferred: pydantic only for an unknown field's message, after the quick check failed
    from pydantic import BaseModel

    for arg in getattr(annotation, "__args__", ()) or ():
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return annotation


def parse_model(model: type[Strict], document: dict[str, Any]) -> tuple[Any, list[Issue]]:
    """Validate `document` against `model`; every problem becomes an Issue at its field path."""
    fast = parse_fast(model, document)
    if fast is not None:
        return fast, []
    # deferred: pydantic only when the quick check (parse_fast) refuses the document, for its messages
    from pydantic import ValidationError

    checked = pydantic_model(model)
    try:
        return checked.model_validate(document), []
    except ValidationError as exc:
        issues = []
        for error in exc.errors(include_url=False):
            loc = document_path(document, error)
            issues.append(Issue(loc, _message({**error, "loc": loc}, checked)))
        return None, dedupe(issues)


def parse_without_unknown_fields(model: type[Strict], document: dict[str, Any]) -> Any:
    """The model of `document` with its unknown fields left out, or None when anything else is wrong
    with it: a job whose only schema problems are unknown fields still gets the rules run on it, so
    that one run reports every problem (a typo must not hide a zero replica count)."""
    # deferred: pydantic only for a job whose quick check failed, to run the rules on the rest
    from pydantic import ValidationError

    checked = pydantic_model(model)
    try:
        checked.model_validate(document)
        return None
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    if any(error["type"] != "extra_forbidden" for error in errors):
        return None
    pruned = tree.copy(document)
    for error in errors:
        *parents, key = document_path(document, error)
        node: Any = pruned
        for part in parents:
            node = node[part]
        del node[key]
    try:
        return checked.model_validate(pruned)
    except ValidationError:
        return None


def document_path(document: Any, error: Any) -> tuple[str | int, ...]:
    """The path in the document of a pydantic error: its location without the names pydantic gives the
    branches of an Optional or a Union (`int`, `str`, `function-after[...]`), which are told apart from
    keys of the same name by walking the document itself. A missing field is the one part not found."""
    path: list[str | int] = []
    node = document
    loc = error["loc"]
    for position, part in enumerate(loc):
        found = isinstance(node, dict) and isinstance(part, str) and part in node
        if found or (isinstance(node, list) and type(part) is int and 0 <= part < len(node)):
            node = node[part]
        elif not (position == len(loc) - 1 and error["type"] == "missing" and isinstance(node, dict)):
            continue  # a branch name, not a field
        path.append(part)
    return tuple(path)


def dedupe(issues: list[Issue]) -> list[Issue]:
    seen: dict[tuple[Path, str], Issue] = {}
    for issue in issues:
        seen.setdefault((issue.path, issue.message), issue)
    return list(seen.values())


def name_of(document: dict[str, Any]) -> str:
    """The document's metadata.name if it has a usable one, for messages about a broken document."""
    meta = document.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else ""


def check_metadata(meta: ObjectMeta | None) -> list[Issue]:
    """The job's own name: required, fixed (no generateName) and usable in every derived name."""
    if meta is None or meta.name is None:
        hint = " (generateName is not supported: derived object names need a fixed name)"
        return [
            Issue(
                ("metadata", "name"),
                "required field is missing" + (hint if meta and meta.generateName else ""),
            )
        ]
    if not names.has_dns1123_characters(meta.name):
        return [
            Issue(
                ("metadata", "name"),
                f"{shown(meta.name)} is not a valid name: use at most {names.MAX_JOB_NAME} lower-case "
                "letters, digits and '-', starting and ending with a letter or digit (a DNS-1123 label, "
                "short enough for every name derived from it)",
            )
        ]
    if len(meta.name) > names.DNS1123_LABEL_MAX:
        # Say the limit that holds in the end at once, not 63 now and the derived names' limit next.
        return [
            Issue(
                ("metadata", "name"),
                f"too long: {len(meta.name)} characters; use a name of at most {names.MAX_JOB_NAME} characters "
                f'(the worker StatefulSet "<name>{names.WORKER_SUFFIX}" and its pods\' revision-hash label must fit '
                f"in {names.DNS1123_LABEL_MAX})",
            )
        ]
    if meta.namespace is not None and not names.is_dns1123_label(meta.namespace):
        return [
            Issue(
                ("metadata", "namespace"),
                f"{shown(meta.namespace)} is not a valid namespace (DNS-1123 label)",
            )
        ]
    return []


_LIST_FIELDS = ("containers", "initContainers", "volumes", "tolerations")


def check_pod_template(template: object, path: Path) -> list[Issue]:
    """Shape checks for the parts of a pod template the compiler reads or edits."""
    if not isinstance(template, dict):
        return [Issue(path, f"expected a pod template mapping, got {_describe(template)}")]
    issues = _expect_mapping(template, path, "metadata", "spec")
    meta = template.get("metadata")
    if isinstance(meta, dict):
        issues += _expect_mapping(meta, path + ("metadata",), "labels", "annotations")
    spec = template.get("spec")
    if spec is None or (isinstance(spec, dict) and not spec.get("containers")):
        return issues + [Issue(path + ("spec", "containers"), "at least one container is required")]
    if not isinstance(spec, dict):
        return issues
    issues += _expect_list(spec, path + ("spec",), *_LIST_FIELDS)
    containers = spec["containers"]
    if isinstance(containers, list):
        for index, container in enumerate(containers):
            issues += _check_container(container, path + ("spec", "containers", index))
    inits = spec.get("initContainers")
    if isinstance(inits, list):
        for index, container in enumerate(inits):
            issues += _check_container(container, path + ("spec", "initContainers", index))
    return issues


def check_pod_template_strictly(template: object, path: Path, kube_version: str | None) -> list[Issue]:
    """Shape checks, then (when they pass) Kubernetes' strict PodTemplateSpec schema: a typo such as
    `containers[0].resurces` is reported with its full path before anything is compiled."""
    issues = check_pod_template(template, path)
    if issues or not isinstance(template, dict):
        return issues

    return [issue.under(*path) for issue in validate_pod_template(template, kube_version)]


SPECS: Path = ("spec", "mpiReplicaSpecs")


class WorkerRule(Record):
    """What an apiVersion's operator requires of the Worker replica spec."""

    required: bool  # a job without a Worker is refused
    least: int  # the fewest replicas
    missing: str | None  # the message for a Worker without replicas (None: allowed)


def check_replicas(
    launcher: Any,
    worker: Any,
    options: Options,
    rule: WorkerRule,
    always_restarts: bool = False,
    containers: Callable[[object, Path, str], list[Issue]] | None = None,
) -> list[Issue]:
    """The Launcher and Worker replica specs every front checks: one Launcher of at most one replica
    (`always_restarts`: one that restarts `Always` is refused), the Worker as `rule` says, and each
    role's pod template (its shape, then Kubernetes' schema when `options.validate`, then, given
    `containers`, the front's own container rules on a template of the right shape)."""
    issues = []
    if launcher is None:
        issues.append(Issue(SPECS + ("Launcher",), "required: an MPIJob needs exactly one Launcher"))
    else:
        if launcher.replicas not in (None, 1):
            issues.append(Issue(SPECS + ("Launcher", "replicas"), f"must be 1, got {launcher.replicas}"))
        if always_restarts and launcher.restartPolicy == "Always":
            message = 'a launcher that always restarts never finishes: use "OnFailure" or "Never"'
            issues.append(Issue(SPECS + ("Launcher", "restartPolicy"), message))
    if worker is None:
        if rule.required:
            issues.append(Issue(SPECS + ("Worker",), "required: an MPIJob needs at least one Worker"))
    elif worker.replicas is None:
        if rule.missing is not None:
            issues.append(Issue(SPECS + ("Worker", "replicas"), rule.missing))
    elif worker.replicas < rule.least:
        issues.append(
            Issue(SPECS + ("Worker", "replicas"), f"must be >= {rule.least}, got {worker.replicas}")
        )
    for role, spec in (("Launcher", launcher), ("Worker", worker)):
        if spec is not None:
            path = SPECS + (role, "template")
            shape = check_pod_template(spec.template, path)
            if options.validate and not shape:
                shape = check_pod_template_strictly(spec.template, path, options.kube_version)
            issues += shape or (containers(spec.template, path, role) if containers else [])
    return issues


def check_raw_templates(document: dict[str, Any], paths: Sequence[Path], options: Any) -> list[Issue]:
    """Pod template problems of a document whose model did not parse, so that one run reports them
    along with the model's (templates are plain dicts to the model: their problems never overlap)."""
    issues: list[Issue] = []
    for path in paths:
        node: Any = document
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict):
            shape = check_pod_template(node, path)
            if options.validate and not shape:
                shape = check_pod_template_strictly(node, path, options.kube_version)
            issues += shape
    return issues


def _check_container(container: object, path: Path) -> list[Issue]:
    if not isinstance(container, dict):
        return [Issue(path, f"expected a container mapping, got {_describe(container)}")]
    issues = _expect_list(container, path, "env", "volumeMounts", "command", "args")
    issues += _expect_mapping(container, path, "resources")
    resources = container.get("resources")
    if isinstance(resources, dict):
        issues += _expect_mapping(resources, path + ("resources",), "limits", "requests")
    return issues


def _expect_mapping(obj: dict[str, Any], path: Path, *keys: str) -> list[Issue]:
    return [
        Issue(path + (key,), f"expected a mapping, got {_describe(obj[key])}")
        for key in keys
        if obj.get(key) is not None and not isinstance(obj[key], dict)
    ]


def _expect_list(obj: dict[str, Any], path: Path, *keys: str) -> list[Issue]:
    return [
        Issue(path + (key,), f"expected a list, got {_describe(obj[key])}")
        for key in keys
        if obj.get(key) is not None and not isinstance(obj[key], list)
    ]


def resolve_namespace(
    job_namespace: str | None, option_namespace: str | None
) -> tuple[str | None, list[Issue]]:
    """(metadata namespace, issues), following kubectl's `-n` conventions: the job's namespace, else
    --namespace, else none (so `kubectl apply -n` decides); the two disagreeing is an error."""
    if job_namespace and option_namespace and job_namespace != option_namespace:
        return None, [
            Issue(
                ("metadata", "namespace"),
                f'the job\'s namespace "{job_namespace}" does not match --namespace "{option_namespace}"',
            )
        ]
    return job_namespace or option_namespace or None, []


def v020_layout(job: str) -> dict[str, Any]:
    """The labels and Service of mpi-operator v0.2.0 jobs (v1alpha1, v1alpha2), as JobPlan fields."""
    launcher, worker = names.role_labels(job, names.ROLE_LAUNCHER), names.role_labels(job, names.ROLE_WORKER)
    labels = Labels(launcher, worker, launcher, worker, names.app_labels(job))
    return {"labels": labels, "service": JobService(names.worker_set(job), {}, worker, True)}
