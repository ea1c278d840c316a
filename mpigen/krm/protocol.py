"""The KRM function: a `config.kubernetes.io/v1` ResourceList in, the same list with MPIJobs compiled out.

`process_resource_list(bytes) -> (text, Outcome)` is pure (no I/O); `mpigen.shells.krm` (what `mpigen`
runs with no arguments and piped input, and the `mpigen krm` command) is its shell. How the output
text is written, keeping every item that passes through byte for byte, is `mpigen.krm.yamltext`.
Behaviour, as the KRM Functions Specification and kustomize's kyaml framework
(`kyaml/fn/framework`) define a function:

- Transformer: every MPIJob among `items` is replaced, in place, by the
  objects `mpigen render` makes for it (same options: the defaults and the job's `mpigen.dev/*`
  annotations). Items marked `config.kubernetes.io/local-config` are configuration, not resources:
  they pass through, never compiled (kustomize passes a generator's config among the items so).
  Other kinds pass through, other Kubeflow kinds (TFJob, PyTorchJob) too; a near-miss (kind MPIJob
  in another case or with another apiVersion, an apiVersion that looks like Kubeflow's) is an error,
  and so are two jobs, or a job and another item, that would write the same object.
- Generator: an MPIJob `functionConfig` also appends its objects to `items`, and the output then
  carries no `functionConfig`, so a second run cannot generate them twice; if an item that is not
  local-config names the same MPIJob, that item is compiled instead (never twice). Any other
  `functionConfig` (a kustomize transformer's config object, kpt's ConfigMap of `key=value`
  arguments) is ignored and echoed: options are set per job with `mpigen.dev/*` annotations.
- The output holds no MPIJob, so a run on its own output changes nothing. `results` already present
  are kept (kyaml's framework echoes them too) and this run's are appended.
- Results: every problem is a `results[]` entry (severity, message, resourceRef of the job, field.path,
  file.path/index from the job's path annotations) and a line on stderr. Lines and messages name an
  item as render names a document: its file and, in a file of several documents, its position there
  (`jobs/train.yaml: document 2:`, `is at jobs/train.yaml (document 1)`), else `items[N]`. On any error the items are
  written back as given, nothing half-generated, and the exit code is 1 (3 when mpigen's own output
  fails Kubernetes' schemas: a bug). Warnings alone do not fail.

`field.path` is written as mpigen's other messages and kubectl write fields
(`spec.mpiReplicaSpecs.Worker.template.spec.containers[0].resources.limits["nvidia.com/gpu"]`). The
KRM spec leaves the notation open; the all-dots `containers.0...` form some validators emit is
ambiguous for keys that hold dots, and this one reads the same on stderr and in `results`.

Where generated objects are filed: kpt writes items back to files by their path annotation
(`internal.config.kubernetes.io/path`, legacy `config.kubernetes.io/path`), orders each file by index,
and refuses two items with the same path and index. A job's objects therefore take the job's path and
fresh indices after the highest one used in that file, so `jobs/train.yaml` ends up holding the job's
objects instead of the job. They also take the job's other `internal.config.kubernetes.io/*`
annotations (kpt's package path, sequence indentation), but never the orchestrator's item ids
(`config.k8s.io/id`, `internal.config.kubernetes.io/id`, `...annotations-migration-resource-id`): ids
map outputs back to inputs (kustomize copies an input's comments and field order onto the output with
its id), and a generated object is no input's output. Nothing else of the job's metadata is copied
(`local-config`, `config.kubernetes.io/function`, user annotations). A job without a path annotation
(kustomize build) gives objects without one, and so does a `functionConfig`: the orchestrator files
them (kpt as `<kind>_<name>.yaml`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mpigen.krm import STDIN, NotAResourceList
from mpigen.krm.yamltext import dump, round_trip_load, with_results, write_resource_list
from mpigen.outcome import Finding, Outcome, Placement, invalid_output_message, krm_result

API_VERSION = "config.kubernetes.io/v1"
# Earlier versions of the ResourceList, as older kustomize and kpt sent them; the shape is the same.
LEGACY_API_VERSIONS = ("config.kubernetes.io/v1beta1", "config.kubernetes.io/v1alpha1")
KIND = "ResourceList"

LOCAL_CONFIG = "config.kubernetes.io/local-config"
INTERNAL = "internal.config.kubernetes.io/"
PATH_KEYS = (INTERNAL + "path", "config.kubernetes.io/path")
INDEX_KEYS = (INTERNAL + "index", "config.kubernetes.io/index")
NOT_CARRIED = {INTERNAL + "id", INTERNAL + "annotations-migration-resource-id", *INDEX_KEYS}

# `cat job.yaml | mpigen`: with no arguments and piped input mpigen is a KRM function; say what was meant.
RENDER_HINT = "; to compile MPIJob files, use mpigen render (cat job.yaml | mpigen render)"
NO_INPUT = (
    "mpigen: no input: `mpigen` with no arguments (and `mpigen krm`) reads a KRM ResourceList on stdin,"
    " as kustomize and kpt send it; see `mpigen --help` and `mpigen krm --help`"
)


@dataclass(frozen=True)
class _Where:
    """Where messages name an item, as render names a document: its file (the path annotation) and, in
    a file of several documents, its 1-based position there (the index annotation); else `items[N]`."""

    source: str
    document: int | None = None

    def as_document(self, data: Any) -> Any:
        from mpigen.documents import Document

        # `Document.total` only decides whether the position is shown
        return Document(self.document or 1, data, 2 if self.document else 1)


@dataclass
class _Job:
    """One MPIJob to compile: an item (position in `items`) or the functionConfig (position None)."""

    position: int | None
    data: dict[str, Any]
    where: _Where
    outcome: Outcome = field(default_factory=Outcome)
    results: list[dict[str, Any]] = field(default_factory=list)


def process_resource_list(data: bytes) -> tuple[str, Outcome]:
    """The function itself: the bytes of a ResourceList in; the output ResourceList and the outcome out."""
    text, plain = read_resource_list(data)
    jobs = _jobs(plain)
    outcome = Outcome()
    if not jobs:
        return text, outcome  # nothing to compile: the input, byte for byte
    for job in jobs:
        _compile(job)
        outcome.add(job.outcome)
    results = [entry for job in jobs for entry in job.results]
    for finding, item in _collisions(plain, jobs):
        outcome.errors.append(finding)
        results.append(_item_result(item, finding.issue.message, finding.issue.path))
    if outcome.exit_code:
        return write(text, plain, [], results), outcome  # items as given, nothing half-generated
    return write(text, plain, jobs, results), outcome


def failure_outcome(data: bytes, exc: BaseException) -> tuple[str, Outcome]:
    """An unexpected failure (a bug): the input written back with one error result, when it can be."""
    outcome = Outcome.crashed(exc)
    try:  # the plainest way back (no text is cut or spliced): the bug may be in that code
        tree = round_trip_load(read_resource_list(data)[0])
        with_results(tree, [{"message": outcome.crash, "severity": "error"}])
        output = dump(tree)
    except Exception:  # noqa: BLE001 - the input cannot even be echoed: stderr alone says it
        output = ""
    return output, outcome


# Reading ------------------------------------------------------------------------------------------


def read_resource_list(data: bytes) -> tuple[str, dict[str, Any]]:
    """The ResourceList as text and as plain data, vetted by mpigen.documents (bounded, as `render`
    reads YAML) before anything else parses it. Raises NotAResourceList."""
    from mpigen.documents import InputError, decode, load_documents

    try:
        text = decode(data, STDIN)
        documents = load_documents(text, STDIN)
    except InputError as exc:
        raise NotAResourceList(f"mpigen: {exc}") from None
    if not documents:
        raise NotAResourceList(NO_INPUT)
    if len(documents) > 1:
        raise NotAResourceList(
            f"mpigen: {STDIN}: expected one ResourceList, found {len(documents)} YAML documents" + RENDER_HINT
        )
    plain = documents[0].data
    _check_shape(plain)
    return text, plain


def _check_shape(plain: Any) -> None:
    kind = plain.get("kind") if isinstance(plain, dict) else None
    if kind != KIND:
        got = f'kind "{kind}"' if kind else "no kind"
        raise NotAResourceList(
            f"mpigen: {STDIN}: not a KRM ResourceList (apiVersion {API_VERSION}, kind {KIND}): found {got}"
            + (RENDER_HINT if kind else "")
        )
    api_version = plain.get("apiVersion")
    if api_version not in (API_VERSION, *LEGACY_API_VERSIONS):
        raise NotAResourceList(
            f'mpigen: {STDIN}: unsupported ResourceList apiVersion "{api_version}"; expected {API_VERSION}'
        )
    if not isinstance(plain.get("items") or [], list):
        raise NotAResourceList(f"mpigen: {STDIN}: ResourceList items must be a list")


# Compiling ----------------------------------------------------------------------------------------


def _annotations(item: Any) -> dict[str, Any]:
    meta = item.get("metadata") if isinstance(item, dict) else None
    found = meta.get("annotations") if isinstance(meta, dict) else None
    return found if isinstance(found, dict) else {}


def _is_local(item: Any) -> bool:
    value = _annotations(item).get(LOCAL_CONFIG)
    return value is not None and value != "false"


def _identity(item: dict[str, Any]) -> tuple[Any, ...]:
    meta = item.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    parts = (item.get("apiVersion"), item.get("kind"), meta.get("namespace"), meta.get("name"))
    # a list or a mapping where a string belongs (the job's own checks say so): hashable all the same
    return tuple(part if part is None or isinstance(part, (str, int, float)) else repr(part) for part in parts)


def _file(item: Any) -> tuple[str | None, int | None]:
    annotations = _annotations(item)
    path = next((annotations[k] for k in PATH_KEYS if isinstance(annotations.get(k), str) and annotations[k]), None)
    index = next((annotations[k] for k in INDEX_KEYS if isinstance(annotations.get(k), str)), None)
    return path, int(index) if index is not None and index.isdigit() else None


def _locations(items: list[Any]) -> list[_Where]:
    """Per item, where messages name it (`_Where`). A file holds several documents when several items
    name it, or when an item's index there is above 0 (the list may carry only some of its documents)."""
    paths = [_file(item)[0] for item in items]
    locations = []
    for position, item in enumerate(items):
        path, index = _file(item)
        if path is None:
            locations.append(_Where(f"items[{position}]"))
            continue
        several = index is not None and (index > 0 or paths.count(path) > 1)
        locations.append(_Where(path, index + 1 if several and index is not None else None))
    return locations


def _jobs(plain: dict[str, Any]) -> list[_Job]:
    from mpigen import api

    items = plain.get("items") or []
    jobs = []
    for position, (item, where) in enumerate(zip(items, _locations(items), strict=True)):
        if isinstance(item, dict) and api.claims(item) and not _is_local(item):
            jobs.append(_Job(position, item, where))
    config = plain.get("functionConfig")
    compiled = {_identity(job.data) for job in jobs}
    if isinstance(config, dict) and api.claims(config) and _identity(config) not in compiled:
        jobs.append(_Job(None, config, _Where("functionConfig")))
    return jobs


def _compile(job: _Job) -> None:
    """Compile one job through the pipeline every shell shares; fill in its outcome and results."""
    from mpigen.options import Options
    from mpigen.pipeline import process

    job.outcome = outcome = process([(job.where.source, [job.where.as_document(job.data)])], Options())
    for finding in outcome.errors + outcome.warnings:
        job.results.append(_result(job, finding.issue.message, finding.issue.severity, finding.issue.path))
    for finding in outcome.invalid_output:
        job.results.append(_result(job, invalid_output_message(finding.kind, finding.name, finding.issue), "error", ()))


def _collisions(plain: dict[str, Any], jobs: list[_Job]) -> list[tuple[Finding, dict[str, Any]]]:
    """Two jobs, or a job and an item passed through, that would write the same object."""
    from mpigen.pipeline import check_collisions

    compiled = {job.position for job in jobs}
    placements = [placement for job in jobs for placement in job.outcome.placements]
    items = plain.get("items") or []
    by_place: dict[tuple[str, int | None, str, str], dict[str, Any]] = {}
    for position, (item, where) in enumerate(zip(items, _locations(items), strict=True)):
        if position in compiled or not isinstance(item, dict) or _is_local(item):
            continue
        kind, name = item.get("kind"), _identity(item)[3]
        if isinstance(kind, str) and isinstance(name, str):
            placements.append(Placement(where.source, where.document, kind, name, (item,), generated=False))
            by_place[(where.source, where.document, kind, name)] = item
    for job in jobs:
        by_place[(job.where.source, job.where.document, str(job.data.get("kind")), str(_identity(job.data)[3]))] = job.data
    return [(finding, by_place[(finding.source, finding.document, finding.kind, finding.name)]) for finding in check_collisions(placements)]


def _item_result(item: dict[str, Any], message: str, path: tuple[str | int, ...]) -> dict[str, Any]:
    """One error `results[]` entry about an item (or a job)."""
    return _result(_Job(None, item, _Where("")), message, "error", path)


def _result(job: _Job, message: str, severity: str, path: tuple[str | int, ...]) -> dict[str, Any]:
    """One `results[]` entry about `job`."""
    api_version, kind, namespace, name = _identity(job.data)
    keys = ("apiVersion", "kind", "name", "namespace")
    ref = {
        key: value
        for key, value in zip(keys, (api_version, kind, name, namespace), strict=True)
        if isinstance(value, str) and value
    }
    file_path, index = _file(job.data)
    file = None if file_path is None else ({"path": file_path} if index is None else {"path": file_path, "index": index})
    return krm_result(message, severity, path, ref, file)


# Writing ------------------------------------------------------------------------------------------


def _bookkeeping(job: dict[str, Any], next_index: dict[str, int]) -> list[tuple[str, str]]:
    """The annotations a generated object takes from its job (see the module docstring); each call
    takes the next free index in the job's file."""
    annotations = _annotations(job)
    carried = [
        (key, value)
        for key, value in annotations.items()
        if isinstance(value, str)
        and (key in PATH_KEYS or (key.startswith(INTERNAL) and key not in NOT_CARRIED))
    ]
    path, _ = _file(job)
    if path is None:
        return sorted(carried)
    index_keys = [key for key in INDEX_KEYS if key in annotations]
    index_keys = index_keys or [
        index for key, index in zip(PATH_KEYS, INDEX_KEYS, strict=True) if key in annotations
    ]
    index = next_index.get(path, 0)
    next_index[path] = index + 1
    return sorted(carried + [(key, str(index)) for key in index_keys])


def _annotated(obj: dict[str, Any], extra: list[tuple[str, str]]) -> dict[str, Any]:
    if not extra:
        return obj
    meta = dict(obj["metadata"])
    meta["annotations"] = dict(sorted({**(meta.get("annotations") or {}), **dict(extra)}.items()))
    return {**obj, "metadata": meta}


def _free_indices(items: list[Any]) -> dict[str, int]:
    """Per file path, the first index after every index the items use there."""
    highest: dict[str, int] = {}
    for item in items:
        path, index = _file(item)
        if path is not None:
            highest[path] = max(highest.get(path, -1), -1 if index is None else index)
    return {path: index + 1 for path, index in highest.items()}


def write(text: str, plain: dict[str, Any], jobs: list[_Job], results: list[dict[str, Any]]) -> str:
    """The output ResourceList: the input with each job's objects in its place and `results` added."""
    next_index = _free_indices(plain.get("items") or [])
    replacements: dict[int | None, list[dict[str, Any]]] = {}
    for job in jobs:
        objects = job.outcome.objects
        if job.position is not None:
            objects = [_annotated(obj, _bookkeeping(job.data, next_index)) for obj in objects]
        replacements[job.position] = objects
    return write_resource_list(text, plain, replacements, results)
