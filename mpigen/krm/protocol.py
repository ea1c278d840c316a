"""The KRM function: a `config.kubernetes.io/v1` ResourceList in, the same list with MPIJobs compiled out.

`process_resource_list(bytes) -> (text, Outcome)` is pure (no I/O); `mpigen.shells.krm` (what `mpigen`
runs with no arguments and piped input, and the `mpigen krm` command) is its shell. How the list is
read, its items read as data only when needed, is `mpigen.krm.items`; how the output text is written,
keeping every item that passes through byte for byte, is `mpigen.krm.yamltext`; what it may not
exceed, so that the function reads it back, is `mpigen.krm.readback`.
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
  local-config names the same MPIJob, that item is compiled instead (never twice) and the
  `functionConfig` is dropped all the same.
- Options: kpt's ConfigMap of `key=value` arguments and mpigen's kustomize transformer config (`Compile`)
  set options for every job, a job's `mpigen.dev/*` annotations winning (mpigen.krm.config); a key they
  refuse is an error. Any `functionConfig` that is not a job is echoed.
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

import json
import re
from collections import Counter
from typing import TYPE_CHECKING, Any

from mpigen import inputs as api
from mpigen.inputs.lists import flatten, holds_job, is_list
from mpigen.krm.config import config_options
from mpigen.krm.items import Listing, read_resource_list
from mpigen.krm.layout import ALIAS
from mpigen.krm.readback import refused_output
from mpigen.krm.yamltext import dump, round_trip_load, with_results, write_cut, write_whole
from mpigen.options import Options
from mpigen.outcome import Finding, Outcome, Placement, invalid_output_message, krm_result
from mpigen.pipeline import check_collisions, collect_runtimes, process
from mpigen.records import Record
from mpigen.yaml.load import Document

if TYPE_CHECKING:
    from mpigen.inputs.trainjob import Runtimes

LOCAL_CONFIG = "config.kubernetes.io/local-config"
INTERNAL = "internal.config.kubernetes.io/"
PATH_KEYS = (INTERNAL + "path", "config.kubernetes.io/path")
INDEX_KEYS = (INTERNAL + "index", "config.kubernetes.io/index")
ORIGIN = "config.kubernetes.io/origin"
_INDEX = "[0-9]{1,18}"
NOT_CARRIED = {INTERNAL + "id", INTERNAL + "annotations-migration-resource-id", *INDEX_KEYS}


class _Where(Record):
    """Where messages name an item, as render names a document: its file (the path annotation) and, in
    a file of several documents, its 1-based position there (the index annotation); else `items[N]`."""

    source: str
    document: int | None = None

    def as_document(self, data: Any) -> Any:
        # `Document.total` only decides whether the position is shown
        return Document(self.document or 1, data, 2 if self.document else 1)


class _Job:
    """One MPIJob to compile: an item (position in `items`) or the functionConfig (position None)."""

    __slots__ = ("data", "outcome", "position", "results", "where")

    def __init__(self, position: int | None, data: dict[str, Any], where: _Where) -> None:
        self.position = position
        self.data = data
        self.where = where
        self.outcome = Outcome()
        self.results: list[dict[str, Any]] = []


def process_resource_list(data: bytes) -> tuple[str, Outcome]:
    """The function itself: the bytes of a ResourceList in; the output ResourceList and the outcome out."""
    listing = read_resource_list(data)
    aliases = _aliases(listing)  # before anything reads the items as data (a whole reading drops the cut)
    outcome = Outcome()
    options, refused = config_options(listing.header.get("functionConfig"), outcome)
    if refused:
        return write(listing, [], refused), outcome  # items as given
    jobs = _jobs(listing)
    foreign = _foreign(listing, outcome)
    if not jobs and not foreign:
        return listing.text, outcome  # nothing to compile: the input, byte for byte
    if aliases:
        # The items are written back as text around the generated objects: an alias could lose its
        # anchor (a job's item is replaced) or stand for a job that would be compiled twice.
        for position in aliases:
            message = (
                f"items[{position}]: the item is only a YAML alias of a node elsewhere in the list; "
                "the function rewrites the items and cannot keep it: write the item out in full"
            )
            outcome.errors.append(Finding.line(f"mpigen: {message}"))
        results = [
            {"message": f.issue.message.removeprefix("mpigen: "), "severity": "error"} for f in outcome.errors
        ]
        return write(listing, [], results), outcome
    runtimes = _runtimes(jobs, options)
    for job in jobs:
        _compile(job, runtimes, options)
        outcome.add(job.outcome)
    results = [entry for job in jobs for entry in job.results] + foreign
    for finding, item in _collisions(listing.items(), jobs):
        outcome.errors.append(finding)
        results.append(_item_result(item, finding.issue.message, finding.issue.path))
    if outcome.exit_code:
        return write(listing, [], results), outcome  # items as given, nothing half-generated
    output = write(listing, jobs, results)
    too_large = refused_output(listing, [job.outcome.objects for job in jobs], output, results)
    if too_large:
        outcome.errors.append(Finding.line(too_large))
        return write(listing, [], [*results, {"message": too_large, "severity": "error"}]), outcome
    return output, outcome


def _ends_in_block_mapping(text: str) -> bool:
    """A list written as a block mapping from its first line (`apiVersion: ...` at column 0) with no
    document marker after it: a key added at column 0 after its last line is one more key of it."""
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if not lines or not re.match(r"[A-Za-z_][\w.-]*:( |$)", lines[0]):
        return False
    return not any(line.startswith(("---", "...")) for line in lines[1:]) and "\t" not in lines[-1][:1]


def _aliases(listing: Listing) -> list[int]:
    """The positions of the items that are only a YAML alias (`- *a`)."""
    if listing.cut is None:
        return []
    return [position for position, head in enumerate(listing.heads) if head == ALIAS]


def failure_outcome(data: bytes, exc: BaseException) -> tuple[str, Outcome]:
    """An unexpected failure (a bug): the input written back with one error result, when it can be."""
    outcome = Outcome.crashed(exc)
    result = {"message": outcome.crash, "severity": "error"}
    for echo in (
        _echo_cut,
        _echo_whole,
    ):  # the second, plainest (no text cut or spliced), if the bug is in the first
        try:
            return echo(data, result), outcome
        except Exception:  # noqa: BLE001, S112 - the input cannot even be echoed so: try the next way, else stderr alone says it
            continue
    return "", outcome


def _echo_cut(data: bytes, result: dict[str, Any]) -> str:
    return write(read_resource_list(data), [], [result])


def _echo_whole(data: bytes, result: dict[str, Any]) -> str:
    tree = round_trip_load(read_resource_list(data).text)
    with_results(tree, [result])
    return dump(tree)


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
    return tuple(
        part if part is None or isinstance(part, (str, int, float)) else repr(part) for part in parts
    )


_ORIGIN_PATH = r"(?m)^path: (?:'((?:[^']|'')+)'|\"((?:[^\"\\]|\\.)+)\"|([^'\"\s].*?))[ \t]*$"


def _origin_path(origin: object) -> str | None:
    """The file in kustomize's `config.kubernetes.io/origin` (a small YAML mapping it writes under
    `buildMetadata: [originAnnotations]`: `path: jobs/pi.yaml`, with `repo:` and `ref:` for a remote one);
    kustomize gives an exec function no path annotation."""
    found = re.search(_ORIGIN_PATH, origin) if isinstance(origin, str) else None
    if found is None:
        return None
    single, double, plain = found.groups()
    if single is not None:
        return single.replace("''", "'")
    if double is not None:
        try:
            text = json.loads(f'"{double}"')
        except ValueError:
            return None
        return text if isinstance(text, str) else None
    return plain


def _file(item: Any, origin: bool = False) -> tuple[str | None, int | None]:
    """The item's file and index there, from the path and index annotations (kpt, kyaml). With `origin`,
    for naming the item in messages only, a file named by kustomize's origin annotation too."""
    annotations = _annotations(item)
    path = next(
        (annotations[k] for k in PATH_KEYS if isinstance(annotations.get(k), str) and annotations[k]), None
    )
    if path is None and origin:
        path = _origin_path(annotations.get(ORIGIN))
    index = next((annotations[k] for k in INDEX_KEYS if isinstance(annotations.get(k), str)), None)
    # kyaml reads the index with strconv.Atoi: ASCII digits, within int64 (not `²`, not 5,000 digits)
    return path, int(index) if index is not None and re.fullmatch(_INDEX, index) else None


def _locations(items: list[Any]) -> list[_Where]:
    """Per item, where messages name it (`_Where`). A file holds several documents when several items
    name it, or when an item's index there is above 0 (the list may carry only some of its documents)."""
    files = [_file(item, origin=True) for item in items]
    counts = Counter(path for path, _ in files)  # counted once: a list may hold thousands of items
    locations = []
    for position, (path, index) in enumerate(files):
        if path is None:
            locations.append(_Where(f"items[{position}]"))
            continue
        several = index is not None and (index > 0 or counts[path] > 1)
        locations.append(_Where(path, index + 1 if several and index is not None else None))
    return locations


def _jobs(listing: Listing) -> list[_Job]:
    """The MPIJobs to compile: items (read as data only when their head may be an MPIJob) and an MPIJob
    `functionConfig` that no item names."""
    positions = [
        position
        for position in range(len(listing))
        if (head := listing.head(position)) is None or api.claims(head) or str(head["kind"]).endswith("List")
    ]
    # A list (`kind: List`, `MPIJobList`) that holds a job is compiled as one: replaced by its items, the
    # jobs among them compiled (mpigen.inputs.lists).
    positions = [
        position
        for position in positions
        if isinstance(item := listing.item(position), dict)
        and (api.claims(item) or holds_job(item))
        and not _is_local(item)
    ]
    config = _config_job(listing)
    if not positions and config is None:
        return []
    items = listing.items()
    locations = _locations(items)
    jobs = [_Job(position, items[position], locations[position]) for position in positions]
    compiled = {_identity(job.data) for job in jobs}
    if config is not None and _identity(config) not in compiled:
        jobs.append(_Job(None, config, _Where("functionConfig")))
    return jobs


def _foreign(listing: Listing, outcome: Outcome) -> list[dict[str, Any]]:
    """A warning result for each item that is another project's MPIJob (passed through unchanged)."""
    positions = [
        position
        for position in range(len(listing))
        if ((head := listing.head(position)) is None or api.foreign_mpijob(head))
        and isinstance(item := listing.item(position), dict)
        and api.foreign_mpijob(item)
    ]
    if not positions:
        return []
    items = listing.items()
    locations = _locations(items)
    given = listing.header.get("results")
    results = []
    for position in positions:
        job = _Job(position, items[position], locations[position])
        issue = api.foreign_warning(job.data)
        _, kind, _, name = _identity(job.data)
        result = _result(job, issue.message, "warning", issue.path)
        if isinstance(given, list) and result in given:
            continue  # reported by an earlier run (this function's on its own output): once is enough
        where = job.where
        outcome.warnings.append(Finding(where.source, where.document, str(kind), str(name or ""), issue))
        results.append(result)
    return results


def _config_job(listing: Listing) -> dict[str, Any] | None:
    """The `functionConfig` when it is an MPIJob (a generator's): compiled, and never written back."""
    config = listing.header.get("functionConfig")
    return config if isinstance(config, dict) and api.claims(config) else None


def _runtimes(jobs: list[_Job], given: Options | None = None) -> Runtimes | None:
    """The Kubeflow Trainer runtimes among the items, collected as the pipeline collects a stream's
    (mpigen.pipeline.collect_runtimes), for the TrainJobs that name them (None: no TrainJob or runtime at
    all); a runtime's own problems are reported when it is compiled as a job of its own."""
    runtimes, _ = collect_runtimes(
        [(job.where.source, [job.where.as_document(job.data)]) for job in jobs], given or Options()
    )
    return runtimes


def _compile(job: _Job, runtimes: Runtimes | None = None, given: Options | None = None) -> None:
    """Compile one job through the pipeline every shell shares (options `given`, the job's annotations
    winning); fill in its outcome and results."""
    job.outcome = outcome = process(
        [(job.where.source, [job.where.as_document(job.data)])], given or Options(), runtimes
    )
    for finding in outcome.errors + outcome.warnings:
        about = _about(job, finding)
        job.results.append(_result(about, finding.issue.message, finding.issue.severity, finding.issue.path))
    for finding in outcome.invalid_output:
        job.results.append(
            _result(job, invalid_output_message(finding.kind, finding.name, finding.issue), "error", ())
        )


def _about(job: _Job, finding: Finding) -> _Job:
    """The job a finding is about: `job`, or for a list the item of the finding's kind and name."""
    if not is_list(job.data):
        return job
    for item in flatten(job.data):
        if isinstance(item, dict) and (item.get("kind"), _identity(item)[3]) == (finding.kind, finding.name):
            return _Job(job.position, item, job.where)
    return job


def _collisions(items: list[Any], jobs: list[_Job]) -> list[tuple[Finding, dict[str, Any]]]:
    """Two jobs, or a job and an item passed through, that would write the same object."""
    compiled = {job.position for job in jobs}
    placements = [placement for job in jobs for placement in job.outcome.placements]
    by_place: dict[tuple[str, int | None, str, str], dict[str, Any]] = {}
    for position, (item, where) in enumerate(zip(items, _locations(items), strict=True)):
        if position in compiled or not isinstance(item, dict) or _is_local(item):
            continue
        kind, name = item.get("kind"), _identity(item)[3]
        if isinstance(kind, str) and isinstance(name, str):
            placements.append(Placement(where.source, where.document, kind, name, (item,), generated=False))
            by_place[(where.source, where.document, kind, name)] = item
    for job in jobs:
        for data in flatten(job.data):  # a list's jobs and other items, each named as itself
            if isinstance(data, dict):
                by_place[
                    (job.where.source, job.where.document, str(data.get("kind")), str(_identity(data)[3]))
                ] = data
    return [
        (finding, by_place[(finding.source, finding.document, finding.kind, finding.name)])
        for finding in check_collisions(placements)
    ]


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
    file_path, index = _file(job.data, origin=True)
    file = (
        None
        if file_path is None
        else ({"path": file_path} if index is None else {"path": file_path, "index": index})
    )
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


def write(listing: Listing, jobs: list[_Job], results: list[dict[str, Any]]) -> str:
    """The output ResourceList: the input with each job's objects in its place and `results` added; with
    jobs (a success), an MPIJob `functionConfig` is not written back, so a second run adds nothing."""
    replacements: dict[int | None, list[dict[str, Any]]] = {}
    if jobs:
        next_index = _free_indices(listing.items())
        for job in jobs:
            objects = job.outcome.objects
            if job.position is not None:
                objects = [_annotated(obj, _bookkeeping(job.data, next_index)) for obj in objects]
            replacements[job.position] = objects
    drop_config = bool(jobs) and _config_job(listing) is not None
    if listing.cut is not None:
        appendable = "results" not in listing.header and _ends_in_block_mapping(listing.text)
        return write_cut(listing.cut, listing.token, replacements, results, drop_config, appendable)
    return write_whole(listing.text, listing.token, replacements, results, drop_config)
