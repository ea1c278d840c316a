"""Documents: turn the bytes of one input (a file or stdin) into JSON-like documents, safely. Pure.

YAML is read as Kubernetes reads it (YAML 1.1 scalars, as sigs.k8s.io/yaml does; dates stay strings)
by `mpigen.yaml.reader`, which bounds depth, alias expansion, values and documents while it reads. Here
the bytes are bounded too (size, UTF-8), and every refusal names the input.
"""

from __future__ import annotations

import re
from typing import Any

from mpigen.errors import ComparedByFields
from mpigen.yaml.reader import YamlProblem, read_stream

MAX_INPUT_BYTES = 16 * 1024 * 1024
# What one call of render or validate reads, over all its inputs together: the memory a call takes
# grows with these (about 1 KiB a document rendered), so a call is bounded, not only each input.
MAX_CALL_BYTES = 64 * 1024 * 1024
MAX_CALL_DOCUMENTS = 100_000
MAX_CALL_VALUES = 8_000_000


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
_MPIJOB_KIND = r"""(?i)\bkind['"]?\s*:\s*['"]?mpijob\b"""


def may_hold_mpijob(text: str) -> bool:
    """Whether a text names an MPIJob kind anywhere (a cheap test before a file is refused)."""
    return re.search(_MPIJOB_KIND, text) is not None


class Document(ComparedByFields):
    """One non-empty document of an input, with its 1-based position in the stream (of `total`)."""

    __slots__ = ("data", "index", "total")

    def __init__(self, index: int, data: Any, total: int = 1) -> None:
        self.index = index
        self.data = data
        self.total = total

    _compared = ("index", "data", "total")


# Byte-order marks kubectl does not read: it decodes a file's bytes as UTF-16 when they start with a
# UTF-16 byte-order mark, else as UTF-8 (a UTF-8 mark dropped): kubectl pkg resource/visitor.go
# FileVisitor.Visit, golang.org/x/text unicode.BOMOverride. Looked for before UTF-16's, which they start with.
_UTF32_MARKS = (
    (b"\xff\xfe\x00\x00", "utf-32-le", "UTF-32 (little-endian)"),
    (b"\x00\x00\xfe\xff", "utf-32-be", "UTF-32 (big-endian)"),
)


def decode(data: bytes, source: str, limit: int = MAX_INPUT_BYTES) -> str:
    """The text of an input's bytes, read as kubectl reads a file: UTF-8 (a byte-order mark dropped), or
    UTF-16 when a UTF-16 byte-order mark says so; UTF-32 is refused by name (kubectl misreads it)."""
    if len(data) > limit:
        raise InputError(f"{source}: input is larger than {limit // (1024 * 1024)} MiB")
    for mark, codec, name in _UTF32_MARKS:
        if data.startswith(mark):
            text = data[4:].decode(codec, "replace")
            raise InputError(
                f"{source}: the file is {name}, which kubectl does not read; save it as UTF-8",
                may_hold_mpijob(text),
            )
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")  # the mark gives the byte order and is dropped
        except UnicodeDecodeError as exc:
            raise InputError(
                f"{source}: not valid UTF-16 (byte {exc.start})",
                may_hold_mpijob(data.decode("utf-16", "replace")),
            ) from None
    try:
        # A UTF-8 mark is dropped, as the utf-8-sig codec drops it (without importing that codec);
        # the byte of an error counts from after the mark, as that codec counts it.
        return (data[3:] if data.startswith(b"\xef\xbb\xbf") else data).decode("utf-8")
    except UnicodeDecodeError as exc:
        # the text is looked at as Latin-1 (every byte a character) to know whether it names an MPIJob
        raise InputError(
            f"{source}: not valid UTF-8 (byte {exc.start})", may_hold_mpijob(data.decode("latin-1"))
        ) from None


def value_count(data: Any) -> int:
    """How many values reading `data` counts, as mpigen.yaml.reader counts them as it reads: one per parser
    event, so a mapping or list its start and end, a mapping each key and value, a scalar one."""
    count, stack = 0, [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            count += 2 + len(value)
            stack.extend(value.values())
        elif isinstance(value, list):
            count += 2
            stack.extend(value)
        else:
            count += 1
    return count


def count_values(documents: list[Document]) -> int:
    """How many values the documents hold (value_count of each)."""
    return sum(value_count(doc.data) for doc in documents)


def past_call_bound(used: tuple[int, int, int]) -> str:
    """What a call's inputs, `used` = (bytes, documents, values) so far, hold past its bound ("" if nothing)."""
    size, documents, values = used
    if size > MAX_CALL_BYTES:
        return f"more than {MAX_CALL_BYTES // (1024 * 1024)} MiB"
    if documents > MAX_CALL_DOCUMENTS:
        return f"more than {MAX_CALL_DOCUMENTS:,} documents"
    if values > MAX_CALL_VALUES:
        return f"more than {MAX_CALL_VALUES:,} values"
    return ""


def load_documents(text: str, source: str, fast: bool = True) -> list[Document]:
    """Every non-empty document of a YAML (or JSON) stream, checked to be plain JSON-like data
    (`fast`: as mpigen.yaml.reader.read_stream takes it)."""
    try:
        return _load_documents(text, source, fast)
    except InputError as exc:
        raise InputError(str(exc), may_hold_mpijob(text)) from None


def _load_documents(text: str, source: str, fast: bool) -> list[Document]:
    try:
        raw = read_stream(text, fast)
    except YamlProblem as exc:
        raise InputError(f"{source}: {exc}") from None
    total = len(raw)
    return [Document(index, data, total) for index, data in enumerate(raw, start=1) if data is not None]
