"""Documents: turn the bytes of one input (a file or stdin) into JSON-like documents, safely. Pure.

YAML is read as Kubernetes reads it (YAML 1.1 scalars, as sigs.k8s.io/yaml does), except that dates
stay strings. Hostile input is refused with a clear message instead of hanging or exhausting memory:
oversized input, alias bombs (the expanded size is bounded), deep nesting, duplicate keys, non-string
keys, invalid UTF-8 and values JSON cannot carry.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

MAX_INPUT_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 1_000_000


class InputError(Exception):
    """The input cannot be read as documents; the message says where and why.

    `may_hold_mpijob` is False when the text never names `kind: MPIJob` (a GitHub workflow, a Helm
    template, some other tool's YAML): `mpigen validate` then skips the file, as kubeconform skips what
    it cannot use, while `render`, which must pass every document through, still refuses it.
    """

    def __init__(self, message: str, may_hold_mpijob: bool = True) -> None:
        super().__init__(message)
        self.may_hold_mpijob = may_hold_mpijob


class ForeignInput(str):
    """The message of an unreadable input that names no MPIJob (see `InputError.may_hold_mpijob`)."""


# `kind: MPIJob` in any case, in block or flow YAML or JSON (`"kind": "MPIJob"`).
_MPIJOB_KIND = re.compile(r"""\bkind['"]?\s*:\s*['"]?mpijob\b""", re.IGNORECASE)


def may_hold_mpijob(text: str) -> bool:
    """Whether a text names an MPIJob kind anywhere (a cheap test before a file is refused)."""
    return _MPIJOB_KIND.search(text) is not None


@dataclass(frozen=True)
class Document:
    """One non-empty document of an input, with its 1-based position in the stream."""

    index: int
    data: Any
    total: int = 1


_LOADER: Any = None


def _loader() -> Any:
    global _LOADER
    if _LOADER is None:
        _LOADER = _make_loader()
    return _LOADER


def _make_loader() -> Any:
    import yaml  # deferred: only reading input needs it

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):  # type: ignore[misc, valid-type]
        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
            seen: dict[Any, Any] = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                if isinstance(key, (list, dict)):
                    raise yaml.constructor.ConstructorError(
                        None, None, "mapping keys must be strings", key_node.start_mark
                    )
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f'duplicate key "{key}"', key_node.start_mark
                    )
                seen[key] = True
            mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
            return mapping

    Loader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in base.yaml_implicit_resolvers.items()
    }
    return Loader


def decode(data: bytes, source: str, limit: int = MAX_INPUT_BYTES) -> str:
    if len(data) > limit:
        raise InputError(f"{source}: input is larger than {limit // (1024 * 1024)} MiB")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{source}: not valid UTF-8 (byte {exc.start})") from None


def load_documents(text: str, source: str) -> list[Document]:
    """Every non-empty document of a YAML (or JSON) stream, checked to be plain JSON-like data."""
    try:
        return _load_documents(text, source)
    except InputError as exc:
        raise InputError(str(exc), may_hold_mpijob(text)) from None


def _load_documents(text: str, source: str) -> list[Document]:
    import yaml

    try:
        raw: list[Any] = list(yaml.load_all(text, Loader=_loader()))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise InputError(f"{source}: {where}{exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{source}: {exc}") from None
    except RecursionError:
        raise InputError(f"{source}: nesting is deeper than {MAX_DEPTH} levels") from None
    documents = []
    for index, data in enumerate(raw, start=1):
        if data is None:
            continue
        prefix = f"{source}: document {index}" if len(raw) > 1 else source
        _check_tree(data, prefix)
        documents.append(Document(index, data, len(raw)))
    return documents


def _check_tree(data: Any, where: str) -> None:
    """Refuse what JSON cannot carry, deep nesting and alias bombs (bounded walk)."""
    budget = MAX_NODES
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        budget -= 1
        if budget < 0:
            raise InputError(f"{where}: too large (more than {MAX_NODES} values once YAML aliases are expanded)")
        if depth > MAX_DEPTH:
            raise InputError(f"{where}: nesting is deeper than {MAX_DEPTH} levels")
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    raise InputError(f'{where}: mapping key {key!r} is not a string (quote it: "{key}")')
                stack.append((item, depth + 1))
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)
        elif isinstance(value, float) and not math.isfinite(value):
            raise InputError(f"{where}: {value} is not a number JSON or Kubernetes can carry")
        elif value is not None and not isinstance(value, (str, int, float, bool)):
            raise InputError(f"{where}: unsupported YAML value of type {type(value).__name__}")
