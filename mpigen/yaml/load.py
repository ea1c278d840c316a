"""Documents: turn the bytes of one input (a file or stdin) into JSON-like documents, safely. Pure.

YAML is read as Kubernetes reads it (YAML 1.1 scalars, as sigs.k8s.io/yaml does; dates stay strings)
by `mpigen.yaml.reader`, which bounds depth, alias expansion, values and documents while it reads. Here
the bytes are bounded too (size, UTF-8), and every refusal names the input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

MAX_INPUT_BYTES = 16 * 1024 * 1024


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


def decode(data: bytes, source: str, limit: int = MAX_INPUT_BYTES) -> str:
    if len(data) > limit:
        raise InputError(f"{source}: input is larger than {limit // (1024 * 1024)} MiB")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{source}: not valid UTF-8 (byte {exc.start})") from None


def load_documents(text: str, source: str, fast: bool = True) -> list[Document]:
    """Every non-empty document of a YAML (or JSON) stream, checked to be plain JSON-like data
    (`fast`: as mpigen.yaml.reader.read_stream takes it)."""
    try:
        return _load_documents(text, source, fast)
    except InputError as exc:
        raise InputError(str(exc), may_hold_mpijob(text)) from None


def _load_documents(text: str, source: str, fast: bool) -> list[Document]:
    from mpigen.yaml.reader import YamlProblem, read_stream

    try:
        raw = read_stream(text, fast)
    except YamlProblem as exc:
        raise InputError(f"{source}: {exc}") from None
    total = len(raw)
    return [Document(index, data, total) for index, data in enumerate(raw, start=1) if data is not None]
