"""Reading a ResourceList: its text, its header as data, and its items read only as far as needed.

The input is vetted by `mpigen.yaml.load` (UTF-8, alias bombs, depth, duplicate keys) as `render`
reads YAML, once per thing read: the list outside its items, and each item read as data. A list laid
out as kyaml writes it is cut into its items (`mpigen.krm.layout`) and an item is read as data only
when it may be an MPIJob or when the list holds a job; any other list is read whole, as before.
"""

from __future__ import annotations

from typing import Any

from mpigen.krm import MAX_LIST_BYTES, STDIN, NotAResourceList, layout
from mpigen.yaml.load import InputError, decode, load_documents
from mpigen.yaml.reader import FAST_MAX_CHARACTERS

try:  # the built-in BLAKE2 that hashlib itself offers, without loading OpenSSL (hashlib's start-up)
    from _blake2 import blake2b
except ImportError:  # an interpreter without it
    from hashlib import blake2b

API_VERSION = "config.kubernetes.io/v1"
# Earlier versions of the ResourceList, as older kustomize and kpt sent them; the shape is the same.
LEGACY_API_VERSIONS = ("config.kubernetes.io/v1beta1", "config.kubernetes.io/v1alpha1")
KIND = "ResourceList"
PLACEHOLDER = "mpigen-generated-"

# `cat job.yaml | mpigen`: with no arguments and piped input mpigen is a KRM function; say what was meant.
RENDER_HINT = "; to compile MPIJob files, use mpigen render (cat job.yaml | mpigen render)"
NO_INPUT = (
    "mpigen: no input: `mpigen` with no arguments (and `mpigen krm`) reads a KRM ResourceList on stdin,"
    " as kustomize and kpt send it; see `mpigen --help` and `mpigen krm --help`"
)

_UNREAD = object()


class Listing:
    """One ResourceList as read. `header` is the list's data; read whole, its `items` are the items'
    data, else `cut` holds the items' texts, each read as data on demand (`item`)."""

    __slots__ = ("_items", "cut", "header", "heads", "text", "token")

    def __init__(
        self,
        text: str,
        header: dict[str, Any],
        token: str,  # a placeholder prefix no input holds: it names a digest of the input
        cut: layout.Cut | None = None,
        heads: list[tuple[Any, Any] | str | None] | None = None,
        items: list[Any] | None = None,
    ) -> None:
        self.text = text
        self.header = header
        self.token = token
        self.cut = cut
        self.heads: list[tuple[Any, Any] | str | None] = [] if heads is None else heads
        self._items: list[Any] = [] if items is None else items

    def __len__(self) -> int:
        return len(self._items)

    def head(self, position: int) -> dict[str, Any] | None:
        """The item's apiVersion and kind, enough for `mpigen.inputs.claims`; None when only its data can tell."""
        found = self.heads[position] if self.cut is not None else None
        if not isinstance(found, tuple):  # not a mapping, or only its data can tell
            return None
        api_version, kind = found
        return {"apiVersion": api_version, "kind": kind}

    def item(self, position: int) -> Any:
        """The item's data (read now if it was not)."""
        if self._items[position] is _UNREAD:
            assert self.cut is not None
            try:
                self._items[position] = layout.load_item(
                    self.cut.as_document(position), STDIN, _fast(self.text)
                )
            except layout.NotCut:  # read the list whole: its reading words the problem
                self._read_whole()
        return self._items[position]

    def items(self) -> list[Any]:
        for position in range(len(self)):
            self.item(position)
        return self._items

    def _read_whole(self) -> None:
        whole = read_whole(self.text)
        self.header, self.cut, self._items = whole.header, None, whole._items


def read_resource_list(data: bytes) -> Listing:
    """The ResourceList of `data`, vetted (bounded, as `render` reads YAML) before anything else parses
    it. Raises NotAResourceList."""
    try:
        text = decode(data, STDIN, MAX_LIST_BYTES)
    except InputError as exc:
        raise NotAResourceList(f"mpigen: {exc}") from None
    try:
        return _read_cut(text)
    except layout.NotCut:
        return read_whole(text)


def read_whole(text: str) -> Listing:
    try:
        documents = load_documents(text, STDIN)
    except InputError as exc:
        raise NotAResourceList(f"mpigen: {exc}") from None
    if not documents:
        raise NotAResourceList(NO_INPUT)
    if len(documents) > 1:
        raise NotAResourceList(
            f"mpigen: {STDIN}: expected one ResourceList, found {len(documents)} YAML documents" + RENDER_HINT
        )
    header = documents[0].data
    _check_shape(header)
    return Listing(text, header, _token(text), items=list(header.get("items") or []))


def _read_cut(text: str) -> Listing:
    """The list cut into its items, proved by reading the rest as data with one placeholder item and by
    parsing each item. Raises NotCut."""
    token = _token(text)
    if token in text:
        raise layout.NotCut("the placeholder is in the text")
    cut = layout.cut(text)
    try:
        documents = load_documents(cut.skeleton(token), STDIN)
    except InputError:
        raise layout.NotCut("the text outside the items") from None
    header = documents[0].data if len(documents) == 1 else None
    if not isinstance(header, dict) or header.get("items") != [token]:
        raise layout.NotCut("the cut is not the items")
    fast = _fast(text)
    heads = [layout.head(cut.item(position), fast) for position in range(len(cut))]
    _check_shape(header)
    return Listing(text, header, token, cut, heads, [_UNREAD] * len(cut))


def _fast(text: str) -> bool:
    """Whether the list is short enough for its items to be read without PyYAML (mpigen.yaml.reader.fast_events):
    reading a long list, libyaml, imported once, is faster."""
    return len(text) <= FAST_MAX_CHARACTERS


def _token(text: str) -> str:
    digest = blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()
    return f"{PLACEHOLDER}{digest}-"


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
