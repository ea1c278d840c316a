"""The pipeline over a stream of documents: compile the MPIJobs, pass everything else through. Pure.

Shared by every shell (CLI, KRM function, kustomize plugin), so that they give the same objects and
report the same problems, as one `Outcome` (mpigen/outcome.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mpigen import inputs as api
from mpigen.checks.objectsize import OBJECT_MAX_BYTES, json_size
from mpigen.errors import CompileError, Issue, shown
from mpigen.inputs import trainer_names
from mpigen.inputs.lists import flatten_documents
from mpigen.options import Options
from mpigen.outcome import Finding, Outcome, Placement
from mpigen.targets import target
from mpigen.yaml.load import Document

if TYPE_CHECKING:
    from mpigen.inputs.trainjob import Runtimes

Inputs = Sequence[tuple[str, list[Document] | str]]


def _finding(source: str, doc: Document, kind: str, name: str, issue: Issue) -> Finding:
    return Finding(source, doc.index if doc.total > 1 else None, kind, name, issue)


def _too_large(data: dict[str, Any]) -> Issue | None:
    """A passed-through object that no cluster could store (etcd's 1.5 MiB), refused before it is
    written out: emitting a 16 MiB mapping of a million keys would take far longer than reading it."""
    size = json_size(data)
    if size <= OBJECT_MAX_BYTES:
        return None
    return Issue(
        (),
        f"too large: {size:,} bytes as JSON, more than the 1.5 MiB etcd stores: no cluster can store this object",
    )


def process(inputs: Inputs, options: Options, runtimes: Runtimes | None = None) -> Outcome:
    """Compile every MPIJob of every input; non-MPIJob documents pass through unchanged, in place.
    An input given as a text is one that could not be read: that text is its problem. Two documents
    that would write the same object are refused (`check_collisions`). A TrainJob is compiled with the
    runtime it names from `runtimes` (the whole stream's, `collect_runtimes`) when given, else from the inputs."""
    from mpigen.compiler import compile_job  # deferred: a stream without MPIJobs needs no pydantic

    result = Outcome()
    given = runtimes is not None
    if not given:
        runtimes, found = collect_runtimes(inputs, options)
        result.errors += found
    for source, documents in inputs:
        if isinstance(documents, str):
            result.errors.append(Finding.line(documents))
            continue
        for doc in flatten_documents(documents):
            data = doc.data
            if not isinstance(data, dict):
                issue = Issue((), "expected a Kubernetes object (a mapping with apiVersion and kind)")
                result.errors.append(_finding(source, doc, "", "", issue))
                continue
            if not api.claims(data):
                if too_large := _too_large(data):
                    kind = data.get("kind")
                    result.errors.append(
                        _finding(source, doc, kind if isinstance(kind, str) else "", _name(data), too_large)
                    )
                    continue
                result.objects.append(data)
                result.placements.append(_placement(source, doc, data, (data,), generated=False))
                if api.foreign_mpijob(data):
                    warning = api.foreign_warning(data)
                    result.warnings.append(_finding(source, doc, str(data.get("kind")), _name(data), warning))
                continue
            result.jobs += 1
            if api.is_trainer(data) and api.train_front_for(data) is None:
                _trainer_document(result, source, doc, data, options, check_runtime=given)
                continue
            kind = str(data.get("kind")) if api.is_trainer(data) else "MPIJob"
            try:
                compilation = compile_job(data, options, runtimes)
            except CompileError as exc:
                for issue in exc.issues:
                    result.errors.append(_finding(source, doc, exc.kind, exc.name, issue))
                for issue in exc.warnings:
                    result.warnings.append(_finding(source, doc, exc.kind, exc.name, issue))
                continue
            result.objects.extend(compilation.objects)
            made = target(compilation.options.target).engine_objects(compilation.objects)
            result.placements.append(
                _placement(source, doc, data, tuple(compilation.objects), generated=True).replace(
                    implied=tuple(made)
                )
            )
            result.invalid_output += _invalid(source, doc, compilation.invalid)
            for issue in compilation.warnings:
                if _first_time(result, issue):
                    result.warnings.append(_finding(source, doc, kind, compilation.name, issue))
    result.errors += check_collisions(result.placements)
    return result


def _first_time(result: Outcome, issue: Issue) -> bool:
    """A warning about the cluster rather than a field of the job (no path; what `--gang-scheduler
    kubernetes` needs enabled) is said once per render, not once per job."""
    return bool(issue.path) or not any(
        not found.issue.path and found.issue.message == issue.message for found in result.warnings
    )


def collect_runtimes(inputs: Inputs, options: Options) -> tuple[Runtimes | None, list[Finding]]:
    """Every TrainingRuntime and ClusterTrainingRuntime of the stream, checked, for the TrainJobs that name
    them wherever they stand in it (None: no Kubeflow Trainer document at all); with their problems, each
    at its own document. Collected once per stream and handed to every shell's pipeline run."""
    documents = [
        (source, doc)
        for source, docs in inputs
        if not isinstance(docs, str)
        for doc in flatten_documents(docs)
        if isinstance(doc.data, dict) and api.is_trainer(doc.data)
    ]
    if not documents:
        return None, []
    from mpigen.inputs.trainjob import Runtimes, is_runtime  # deferred: a stream without Trainer documents

    runtimes, found = Runtimes(), []
    for source, doc in documents:
        if is_runtime(doc.data):
            for issue in runtimes.add(doc.data, options):
                found.append(_finding(source, doc, str(doc.data["kind"]), _name(doc.data), issue))
    return runtimes, found


def _trainer_document(
    result: Outcome, source: str, doc: Document, data: dict[str, Any], options: Options, check_runtime: bool
) -> None:
    """A Kubeflow Trainer document that is no TrainJob mpigen compiles: a runtime renders nothing of its
    own (its problems are reported here when `check_runtime`, else where the runtimes were collected)."""
    from mpigen.inputs.trainjob import Runtimes, is_runtime  # deferred: a stream without Trainer documents

    kind = str(data.get("kind"))
    if data.get("apiVersion") != trainer_names.TRAINER_API:
        message = f"unsupported apiVersion {shown(str(data.get('apiVersion')))} for {kind}; mpigen compiles {trainer_names.TRAINER_API}"
        result.errors.append(_finding(source, doc, kind, _name(data), Issue(("apiVersion",), message)))
    elif check_runtime and is_runtime(data):
        result.errors += [_finding(source, doc, kind, _name(data), i) for i in Runtimes().add(data, options)]
    result.placements.append(_placement(source, doc, data, (), generated=True))


def _placement(
    source: str, doc: Document, data: dict[str, Any], objects: tuple[dict[str, Any], ...], generated: bool
) -> Placement:
    kind, name = data.get("kind"), _name(data)
    return Placement(
        source,
        doc.index if doc.total > 1 else None,
        kind if isinstance(kind, str) else "",
        name,
        objects,
        generated,
    )


def _name(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else ""


Key = tuple[str, str, str, str]


def _key(obj: dict[str, Any]) -> Key | None:
    """What names one object on the API server: group, kind, namespace (empty: `kubectl apply -n`'s), name."""
    api_version, kind, name = obj.get("apiVersion"), obj.get("kind"), _name(obj)
    meta = obj.get("metadata")
    namespace = meta.get("namespace") if isinstance(meta, dict) else None
    if not (isinstance(api_version, str) and isinstance(kind, str) and name):
        return None
    group = api_version.rpartition("/")[0]
    return group, kind, namespace if isinstance(namespace, str) else "", name


def _in(namespace: str) -> str:
    return f'in namespace "{namespace}"' if namespace else "with no namespace"


def check_collisions(placements: list[Placement]) -> list[Finding]:
    """Two documents that would write the same object (same group, kind, namespace and name), which
    `kubectl apply` would silently merge: two jobs with one name, or a passed-through document that is
    also one of a job's objects. Each is reported once, at the later document, naming the other."""
    owners: dict[Key, Placement] = {}
    findings: list[Finding] = []
    for placement in [p for p in placements if p.generated]:
        clashes: dict[int, tuple[Placement, Key]] = {}  # by id: the first object each other job shares
        # with the objects the engines create from them (a JobSet's Service, Volcano's plugins')
        made = [*placement.objects, *placement.implied]
        for key in [key for obj in made if (key := _key(obj)) is not None]:
            other = owners.setdefault(key, placement)
            if other is not placement:
                clashes.setdefault(id(other), (other, key))
        findings += [_job_clash(placement, other, key) for other, key in clashes.values()]
    for placement in [p for p in placements if not p.generated]:
        key = _key(placement.objects[0])
        key = key if key in owners else None
        if key is not None:
            job = owners[key]
            message = (
                f'{key[1]} "{key[3]}" {_in(key[2])} is also generated for {job.kind}/{job.name} at {job.where()}: '
                "kubectl apply would merge the two; rename one"
            )
            findings.append(
                Finding(
                    placement.source,
                    placement.document,
                    placement.kind,
                    placement.name,
                    Issue(("metadata", "name"), message),
                )
            )
    return findings


def _job_clash(placement: Placement, other: Placement, key: Key) -> Finding:
    namespace = key[2]
    if (placement.kind, placement.name) == (other.kind, other.name):
        message = f'another {other.kind} "{other.name}" {_in(namespace)} is at {other.where()}: both would create the same objects; rename one'
    else:
        message = f'its {key[1]} "{key[3]}" {_in(namespace)} is also generated for {other.kind}/{other.name} at {other.where()}; rename one of the jobs'
    return Finding(
        placement.source,
        placement.document,
        placement.kind,
        placement.name,
        Issue(("metadata", "name"), message),
    )


def _invalid(source: str, doc: Document, invalid: list[tuple[dict[str, Any], Issue]]) -> list[Finding]:
    """What the output checks found wrong with a job's objects (mpigen.checks.stage), at the job's document."""
    return [_finding(source, doc, obj["kind"], obj["metadata"]["name"], issue) for obj, issue in invalid]
