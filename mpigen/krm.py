"""The KRM function: a `config.kubernetes.io/v1` ResourceList in, the same list with MPIJobs compiled out.

`process_resource_list(bytes) -> Outcome` is pure (no I/O); `run_function` (what `mpigen` runs with no
arguments and piped input) and the `mpigen krm` command are its shells. Behaviour, as the KRM Functions
Specification and kustomize's kyaml framework (`kyaml/fn/framework`) define a function:

- Transformer: every MPIJob (anything `kubeflow.org/*`) among `items` is replaced, in place, by the
  objects `mpigen render` makes for it (same options: the defaults and the job's `mpigen.dev/*`
  annotations). Items marked `config.kubernetes.io/local-config` are configuration, not resources:
  they pass through, never compiled (kustomize passes a generator's config among the items so).
- Generator: an MPIJob `functionConfig` also appends its objects to `items`, and the output then
  carries no `functionConfig`, so a second run cannot generate them twice; if an item that is not
  local-config names the same MPIJob, that item is compiled instead (never twice). Any other
  `functionConfig` (a kustomize transformer's config object, kpt's ConfigMap of `key=value`
  arguments) is ignored and echoed: options are set per job with `mpigen.dev/*` annotations.
- The output holds no MPIJob, so a run on its own output changes nothing. `results` already present
  are kept (kyaml's framework echoes them too) and this run's are appended.
- Results: every problem is a `results[]` entry (severity, message, resourceRef of the job, field.path,
  file.path/index from the job's path annotations) and a line on stderr. On any error the items are
  written back as given, nothing half-generated, and the exit code is 1 (3 when mpigen's own output
  fails Kubernetes' schemas: a bug). Warnings alone do not fail.

Reading and writing: the input is vetted by `mpigen.documents` (size, alias bombs, depth, duplicate
keys) and MPIJobs are compiled from that data, as `render` reads them. A list with nothing to compile
comes back byte for byte. Otherwise every item that is kept is copied from the input text as it came
(comments, quoting, layout) when the items are laid out as kyaml writes them (a block sequence, each
item starting a line with `- `, no aliases); the rest of the list (header, comments around the items,
`functionConfig`, `results`) goes through ruamel.yaml's round trip, which also takes the whole list
when the layout is another (kyaml's: 2-space indentation, compact sequences, nulls as `null`). Each
generated object is written by `mpigen.emit`, render's own emitter (fast; every string a YAML 1.1 or
1.2 reader could mistake is quoted), and spliced in as an item.

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

import functools
import io
import itertools
from dataclasses import dataclass, field
from typing import IO, Any

import click

API_VERSION = "config.kubernetes.io/v1"
# Earlier versions of the ResourceList, as older kustomize and kpt sent them; the shape is the same.
LEGACY_API_VERSIONS = ("config.kubernetes.io/v1beta1", "config.kubernetes.io/v1alpha1")
KIND = "ResourceList"

LOCAL_CONFIG = "config.kubernetes.io/local-config"
INTERNAL = "internal.config.kubernetes.io/"
PATH_KEYS = (INTERNAL + "path", "config.kubernetes.io/path")
INDEX_KEYS = (INTERNAL + "index", "config.kubernetes.io/index")
NOT_CARRIED = {INTERNAL + "id", INTERNAL + "annotations-migration-resource-id", *INDEX_KEYS}

EXIT_OK, EXIT_INVALID, EXIT_INTERNAL = 0, 1, 3
STDIN = "<stdin>"
PLACEHOLDER = "mpigen-generated-"
NO_INPUT = (
    "mpigen: no input: `mpigen` with no arguments (and `mpigen krm`) reads a KRM ResourceList on stdin,"
    " as kustomize and kpt send it; see `mpigen --help` and `mpigen krm --help`"
)


class NotAResourceList(Exception):
    """Input that is not a ResourceList at all: exit 1, nothing on stdout."""


@dataclass(frozen=True)
class Outcome:
    output: str  # the ResourceList to write on stdout; empty when none can be written
    code: int
    messages: list[str] = field(default_factory=list)  # lines for stderr


@dataclass
class _Job:
    """One MPIJob to compile: an item (position in `items`) or the functionConfig (position None)."""

    position: int | None
    data: dict[str, Any]
    source: str
    objects: list[dict[str, Any]] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    errors: int = 0
    bugs: int = 0


def process_resource_list(data: bytes) -> Outcome:
    """The function itself: the bytes of a ResourceList in, the output ResourceList and exit code out."""
    text, plain = read_resource_list(data)
    jobs = _jobs(plain)
    if not jobs:
        return Outcome(text, EXIT_OK)  # nothing to compile: the input, byte for byte
    for job in jobs:
        _compile(job)
    results = [entry for job in jobs for entry in job.results]
    lines = [line for job in jobs for line in job.lines]
    if any(job.errors or job.bugs for job in jobs):
        # Items as given, nothing half-generated. Input problems first: a bug shows once they are fixed.
        code = EXIT_INVALID if any(job.errors for job in jobs) else EXIT_INTERNAL
        return Outcome(write(text, plain, [], results), code, lines)
    return Outcome(write(text, plain, jobs, results), EXIT_OK, lines)


def failure_outcome(data: bytes, exc: BaseException) -> Outcome:
    """An unexpected failure (a bug): the input written back with one error result, when it can be."""
    line = f"mpigen: internal error: {type(exc).__name__}: {exc} (please report this)"
    try:  # the plainest way back (no text is cut or spliced): the bug may be in that code
        tree = round_trip_load(read_resource_list(data)[0])
        _with_results(tree, [{"message": line, "severity": "error"}])
        output = _dump(tree)
    except Exception:  # noqa: BLE001 - the input cannot even be echoed: stderr alone says it
        output = ""
    return Outcome(output, EXIT_INTERNAL, [line])


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
            f"mpigen: {STDIN}: expected one ResourceList, found {len(documents)} YAML documents"
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
        )
    api_version = plain.get("apiVersion")
    if api_version not in (API_VERSION, *LEGACY_API_VERSIONS):
        raise NotAResourceList(
            f'mpigen: {STDIN}: unsupported ResourceList apiVersion "{api_version}"; expected {API_VERSION}'
        )
    if not isinstance(plain.get("items") or [], list):
        raise NotAResourceList(f"mpigen: {STDIN}: ResourceList items must be a list")


def round_trip_load(text: str) -> Any:
    """A tree whose untouched nodes keep their comments and quoting when dumped."""
    from ruamel.yaml.error import YAMLError

    try:
        tree = _yaml().load(text)
    except YAMLError as exc:  # a construct PyYAML accepted and ruamel does not
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        what = " ".join(filter(None, (getattr(exc, "context", None), getattr(exc, "problem", None))))
        raise NotAResourceList(f"mpigen: {STDIN}: {where}{what or exc}") from None
    tree.fa.set_block_style()  # a JSON (flow) list is written back in block style, where items can go
    return tree


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
    return item.get("apiVersion"), item.get("kind"), meta.get("namespace"), meta.get("name")


def _file(item: Any) -> tuple[str | None, int | None]:
    annotations = _annotations(item)
    path = next((annotations[k] for k in PATH_KEYS if isinstance(annotations.get(k), str)), None)
    index = next((annotations[k] for k in INDEX_KEYS if isinstance(annotations.get(k), str)), None)
    return path, int(index) if index is not None and index.isdigit() else None


def _jobs(plain: dict[str, Any]) -> list[_Job]:
    from mpigen import api

    jobs = []
    for position, item in enumerate(plain.get("items") or []):
        if isinstance(item, dict) and api.claims(item) and not _is_local(item):
            path, _ = _file(item)
            jobs.append(_Job(position, item, path or f"items[{position}]"))
    config = plain.get("functionConfig")
    compiled = {_identity(job.data) for job in jobs}
    if isinstance(config, dict) and api.claims(config) and _identity(config) not in compiled:
        jobs.append(_Job(None, config, "functionConfig"))
    return jobs


def _compile(job: _Job) -> None:
    """Compile one job through the pipeline every shell shares; fill in objects, results and lines."""
    from mpigen.documents import Document
    from mpigen.options import Options
    from mpigen.pipeline import process

    result = process([(job.source, [Document(1, job.data)])], Options())
    job.errors, job.bugs = len(result.errors), len(result.invalid_output)
    for finding in result.errors + result.warnings:
        job.results.append(_result(job, finding.issue.message, finding.issue.severity, finding.issue.path))
        job.lines.append(finding.text())
    if result.invalid_output:
        job.lines.append("mpigen: internal error: the output fails Kubernetes' schemas (please report this):")
    for finding in result.invalid_output:
        message = f"internal error (please report this): generated {finding.kind}/{finding.name}: {finding.issue.text()}"
        job.results.append(_result(job, message, "error", ()))
        job.lines.append(finding.text())
    job.objects = result.objects


def _result(job: _Job, message: str, severity: str, path: tuple[str | int, ...]) -> dict[str, Any]:
    """One `results[]` entry, shaped as kyaml's framework.Result."""
    from mpigen.errors import format_path

    entry: dict[str, Any] = {"message": message, "severity": severity}
    api_version, kind, namespace, name = _identity(job.data)
    keys = ("apiVersion", "kind", "name", "namespace")
    ref = {
        key: value
        for key, value in zip(keys, (api_version, kind, name, namespace), strict=True)
        if isinstance(value, str) and value
    }
    if ref:
        entry["resourceRef"] = ref
    if path:
        entry["field"] = {"path": format_path(path)}
    file_path, index = _file(job.data)
    if file_path is not None:
        entry["file"] = {"path": file_path} if index is None else {"path": file_path, "index": index}
    return entry


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
    """The output ResourceList: the input with each job's objects in its place and `results` added.

    Items laid out as kyaml writes them (a block sequence, each item starting a line with `- `) are
    cut out of the text and put back as they came, byte for byte; ruamel.yaml's round trip reads and
    writes only what is left (fast: it is pure Python). Other layouts go through it whole."""
    token = _token(plain)
    cut = _cut_items(text, token)
    tree = round_trip_load(cut[0] if cut else text)
    texts = dict(cut[1]) if cut else {}
    _replace_items(tree, plain, jobs, token, texts)
    _with_results(tree, results)
    return _splice(_dump(tree), texts)


def _dump(tree: Any) -> str:
    buffer = io.StringIO()
    _yaml().dump(tree, buffer)
    return buffer.getvalue()


def _replace_items(
    tree: Any, plain: dict[str, Any], jobs: list[_Job], token: str, texts: dict[str, str]
) -> None:
    """Put each job's objects (as placeholders, their text in `texts`) in its place in `tree`."""
    from ruamel.yaml.comments import CommentedSeq

    from mpigen.emit import to_yaml

    numbers = itertools.count(len(texts))

    def generated(objects: list[dict[str, Any]]) -> list[str]:
        names = [f"{token}{next(numbers)}" for _ in objects]
        texts.update((name, _as_item(to_yaml([obj]))) for name, obj in zip(names, objects, strict=True))
        return names

    old = tree.get("items") or []
    next_index = _free_indices(plain.get("items") or [])
    by_position = {job.position: job for job in jobs}
    new = CommentedSeq()
    for position, node in enumerate(old):
        job = by_position.get(position)
        if job is None:
            new.append(node)
        else:
            if isinstance(node, str):
                texts.pop(node, None)  # the job's own text, cut out of the input
            new.extend(
                generated([_annotated(obj, _bookkeeping(job.data, next_index)) for obj in job.objects])
            )
    generator = by_position.get(None)
    if generator is not None:
        new.extend(generated(generator.objects))
        del tree["functionConfig"]
    if isinstance(old, CommentedSeq):
        new.ca.comment, new.ca.end = old.ca.comment, old.ca.end  # before the first item, after the last
    if "items" in tree:
        tree["items"] = new
    else:
        tree.insert(min(2, len(tree)), "items", new)


def _cut_items(text: str, token: str) -> tuple[str, dict[str, str]] | None:
    """`text` with each item of `items` cut down to a placeholder line, and each item's text (from its
    `- ` to the next item, comments and blank lines included); None unless kyaml's layout is met."""
    import yaml

    if any(mark in text for mark in ("\r", "\x85", "\u2028", "\u2029")) or _has_aliases(text):
        return None  # other line breaks; an alias in one item may name an anchor in another
    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:  # empty documents around the list: let the round trip say what it makes of it
        return None
    if not isinstance(root, yaml.MappingNode) or root.flow_style:
        return None
    keys = [key.value for key, _ in root.value]
    items = root.value[keys.index("items")][1] if "items" in keys else None
    if not isinstance(items, yaml.SequenceNode) or items.flow_style or not items.value:
        return None
    lines = text.split("\n")
    following = keys.index("items") + 1
    end = (
        root.value[following][0].start_mark.line if following < len(keys) else len(lines) - (lines[-1] == "")
    )
    bounds = [*(item.start_mark.line for item in items.value), end]
    laid_out = all(
        item.start_mark.column == 2 and lines[item.start_mark.line][:2] == "- " for item in items.value
    )
    markers = any(line.rstrip() in ("---", "...") for line in lines[bounds[0] : end])
    if not laid_out or markers or any(a >= b for a, b in itertools.pairwise(bounds)):
        return None
    names = [f"{token}{n}" for n in range(len(items.value))]
    skeleton = [*lines[: bounds[0]], *(f"- {name}" for name in names), *lines[end:]]
    return "\n".join(skeleton), {
        name: "\n".join(lines[a:b]) for name, (a, b) in zip(names, itertools.pairwise(bounds), strict=True)
    }


def _has_aliases(text: str) -> bool:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return any(isinstance(event, yaml.AliasEvent) for event in yaml.parse(text, Loader=loader))


def _as_item(document: str) -> str:
    """A YAML document written as an item of a top-level block sequence: `- ` and indented by two."""
    lines = document.removesuffix("\n").split("\n")
    return "- " + "\n".join([lines[0], *(f"  {line}" if line else line for line in lines[1:])])


def _token(plain: dict[str, Any]) -> str:
    """A placeholder prefix that no input can hold: it names a digest of the input itself."""
    import hashlib
    import json

    digest = hashlib.sha256(json.dumps(plain, sort_keys=True).encode()).hexdigest()[:24]
    return f"{PLACEHOLDER}{digest}-"


def _splice(text: str, texts: dict[str, str]) -> str:
    """Replace each placeholder item (`- <placeholder>` at the start of a line: `items` is a block
    sequence of the top-level mapping, in compact layout) with its text."""
    import re

    from mpigen.errors import InternalError

    placed = set()

    def item(match: re.Match[str]) -> str:
        if match.group(1) not in texts:
            return match.group(0)
        placed.add(match.group(1))
        return texts[match.group(1)]

    spliced = re.sub(rf"^- ({PLACEHOLDER}[0-9a-f]+-[0-9]+)$", item, text, flags=re.MULTILINE)
    if len(placed) != len(texts):
        raise InternalError(f"{len(texts) - len(placed)} items could not be placed in the ResourceList")
    return spliced


def _with_results(tree: Any, results: list[dict[str, Any]]) -> None:
    existing = tree.get("results")
    if isinstance(existing, list):
        existing.extend(results)
    elif results:
        tree["results"] = results


@functools.cache
def _representer() -> Any:
    from ruamel.yaml.representer import RoundTripRepresenter

    class Representer(RoundTripRepresenter):
        """Nulls as `null`, as kyaml and libyaml write them (ruamel's round trip writes nothing)."""

        def represent_none(self, data: Any) -> Any:
            return self.represent_scalar("tag:yaml.org,2002:null", "null")

    Representer.add_representer(type(None), Representer.represent_none)
    return Representer


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.Representer = _representer()
    yaml.preserve_quotes = True
    yaml.width = 1 << 16  # never fold long strings
    yaml.indent(mapping=2, sequence=2, offset=0)  # kyaml's layout
    return yaml


# Shells -------------------------------------------------------------------------------------------


def run_function(stdin: IO[bytes], stdout: IO[bytes], stderr: IO[str]) -> int:
    """Read a ResourceList from stdin, write the result to stdout and problems to stderr; the exit code."""
    from mpigen.documents import MAX_INPUT_BYTES

    data = stdin.read(MAX_INPUT_BYTES + 1)
    try:
        outcome = process_resource_list(data)
    except NotAResourceList as exc:
        outcome = Outcome("", EXIT_INVALID, [str(exc)])
    except Exception as exc:  # noqa: BLE001 - a bug: exit 3 with the input echoed, never a traceback
        outcome = failure_outcome(data, exc)
    if outcome.output:
        stdout.write(outcome.output.encode("utf-8"))
        stdout.flush()
    for line in outcome.messages:
        stderr.write(line + "\n")
    stderr.flush()
    return outcome.code


@click.command(context_settings={"max_content_width": 100})
@click.pass_context
def krm(ctx: click.Context) -> None:
    """Run as a KRM function: read a ResourceList on stdin, write it back with MPIJobs compiled.

    `mpigen` with no arguments and piped input does the same, so kustomize and kpt can name the
    executable itself. Every MPIJob among the items is replaced, in place, by its objects
    (transformer); an MPIJob given as the functionConfig adds its objects (generator). Other items,
    their comments and annotations pass through unchanged; items marked
    config.kubernetes.io/local-config are never compiled. Options are set per job with
    `mpigen.dev/<flag>` annotations (for example mpigen.dev/gang-scheduler: volcano).

    Problems are written as results[] (severity, resourceRef, field.path, file) and on stderr; the
    items then come back unchanged and the exit code is 1 (3 for a bug in mpigen).

    \b
    Generator (kustomization.yaml: `generators: [job.yaml]`), job.yaml:
      apiVersion: kubeflow.org/v1alpha2
      kind: MPIJob
      metadata:
        name: pi
        annotations:
          config.kubernetes.io/function: |
            exec:
              path: mpigen
      spec: ...
    \b
    Transformer (kustomization.yaml: `resources: [job.yaml]`, `transformers: [mpigen.yaml]`),
    mpigen.yaml:
      apiVersion: mpigen.dev/v1
      kind: Compile
      metadata:
        name: mpigen
        annotations:
          config.kubernetes.io/function: |
            exec:
              path: mpigen
    \b
      kustomize build --enable-alpha-plugins --enable-exec .
      kpt fn eval --exec mpigen .
    """
    stdin = click.get_binary_stream("stdin")
    if stdin.isatty():
        raise click.UsageError("reads a KRM ResourceList on stdin; pipe one in (see --help)")
    ctx.exit(run_function(stdin, click.get_binary_stream("stdout"), click.get_text_stream("stderr")))
