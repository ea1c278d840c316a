"""The pipeline over a stream of documents: compile the MPIJobs, pass everything else through. Pure.

Shared by every shell (CLI, KRM function, kustomize plugin), so that they give the same objects and
report the same problems, as one `Outcome` (mpigen/outcome.py).
"""

from __future__ import annotations

from typing import Any

from mpigen import api
from mpigen.documents import Document
from mpigen.errors import CompileError, Issue
from mpigen.options import Options
from mpigen.outcome import Finding, Outcome


def _finding(source: str, doc: Document, kind: str, name: str, issue: Issue) -> Finding:
    return Finding(source, doc.index if doc.total > 1 else None, kind, name, issue)


def process(inputs: list[tuple[str, list[Document]]], options: Options) -> Outcome:
    """Compile every MPIJob of every input; non-MPIJob documents pass through unchanged, in place."""
    from mpigen.compiler import compile_job  # deferred: a stream without MPIJobs needs no pydantic

    result = Outcome()
    for source, documents in inputs:
        for doc in documents:
            data = doc.data
            if not isinstance(data, dict):
                issue = Issue((), "expected a Kubernetes object (a mapping with apiVersion and kind)")
                result.errors.append(_finding(source, doc, "", "", issue))
                continue
            if not api.claims(data):
                result.objects.append(data)
                continue
            result.jobs += 1
            try:
                compilation = compile_job(data, options)
            except CompileError as exc:
                for issue in exc.issues:
                    result.errors.append(_finding(source, doc, exc.kind, exc.name, issue))
                continue
            result.objects.extend(compilation.objects)
            if compilation.options.validate:
                result.invalid_output += _check_output(source, doc, compilation.objects, compilation.options)
            for issue in compilation.warnings:
                result.warnings.append(_finding(source, doc, "MPIJob", compilation.name, issue))
    return result


def _check_output(source: str, doc: Document, objects: list[dict[str, Any]], options: Options) -> list[Finding]:
    """The emitted objects against Kubernetes' strict schemas and the API-server rules they miss."""
    from mpigen.kube.validator import validate_object
    from mpigen.rules import check_objects

    found = [(obj, issue) for obj in objects for issue in validate_object(obj, options.kube_version)]
    found += check_objects(objects)
    return [_finding(source, doc, obj["kind"], obj["metadata"]["name"], issue) for obj, issue in found]
