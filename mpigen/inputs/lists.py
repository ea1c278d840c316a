"""Kubernetes lists that hold jobs: read as kubectl reads them, item by item.

kubectl decodes any object with an `items` field as a list (apimachinery v0.37
pkg/apis/meta/v1/unstructured/helpers.go: unstructuredJSONScheme.decode) and creates its items one by one
(cli-runtime resource.FlattenListVisitor, also for lists inside lists): a `kind: List`, an `MPIJobList`,
or `kubectl get -o json` output. So a job inside a list is compiled or refused as a top-level one would
be, and the list is replaced by its items; a list without a job passes through untouched.
"""

from __future__ import annotations

from typing import Any

from mpigen import inputs as api
from mpigen.yaml.load import Document

# Lists inside lists deeper than this are not looked into (the input reader bounds nesting anyway).
MAX_DEPTH = 16


def is_list(data: Any) -> bool:
    """An object kubectl reads as a list: a mapping with a list of `items`."""
    return isinstance(data, dict) and isinstance(data.get("items"), list)


def holds_job(data: Any, depth: int = 0) -> bool:
    """A list with a job mpigen takes among its items, at any depth."""
    if not is_list(data) or depth > MAX_DEPTH:
        return False
    return any(
        isinstance(item, dict) and (api.claims(item) or holds_job(item, depth + 1)) for item in data["items"]
    )


def flatten(data: Any, depth: int = 0) -> list[Any]:
    """The objects kubectl would create from `data`: a list holding a job becomes its items, in order,
    each flattened again; anything else is itself."""
    if depth > MAX_DEPTH or not holds_job(data):
        return [data]
    return [flat for item in data["items"] for flat in flatten(item, depth + 1)]


def flatten_documents(documents: list[Document]) -> list[Document]:
    """Each document, a list that holds a job replaced by its items, which keep the list's place in the
    stream for messages."""
    if not any(holds_job(doc.data) for doc in documents):
        return documents
    return [Document(doc.index, item, doc.total) for doc in documents for item in flatten(doc.data)]
