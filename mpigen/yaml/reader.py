"""YAML reading: the text of a YAML (or JSON) stream to plain JSON-like documents, one event at a time. Pure.

libyaml's parser (PyYAML's CParser) is a state machine: it never recurses, whatever the input. PyYAML's
composer and constructor do, in C where no recursion limit applies, so a few thousand `[` crash the
process (SIGSEGV). Here documents are built from the parser's events with an explicit stack instead, so
every bound holds before anything deeper is read:

- nesting deeper than `MAX_DEPTH` is refused at the event that opens the level too many;
- aliases are counted as what they expand to, and more than `MAX_ALIAS_VALUES` values brought in by
  aliases (a "billion laughs" bomb) are refused; plain values are bounded by the input size only;
- only the YAML Kubernetes reads (sigs.k8s.io/yaml, go-yaml v2): the core tags `!!str`, `!!int`,
  `!!float`, `!!bool`, `!!null`, `!!map`, `!!seq`, plain scalars resolved as go-yaml v2 resolves them
  (mpigen.yaml.scalars: `12:30` and dates are strings, `y` and `n` booleans, `0o17` and `1e3` numbers),
  merge keys (`<<: *defaults`, a merge key only in key position); any other tag (`!!timestamp`,
  `!!binary`, `!!set`, `!!omap`, `!!python/...`, `!custom`) is refused;
- integers outside int64 and numbers JSON cannot carry (`.nan`, `.inf`, `1e999`) are refused;
- mapping keys are strings, each at most once (a key after a merge key overrides a merged one, as YAML
  and go-yaml agree; a key before `<<` that the merge also sets is refused, as they do not).

Every refusal is a `YamlProblem` with the position (line, column) and the field path where it is known.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from mpigen.errors import format_path, shown
from mpigen.yaml import _fast_read as yamlfast
from mpigen.yaml.scalars import CORE, construct, resolve_plain, tag_name

MAX_DEPTH = 64
MAX_ALIAS_VALUES = 1_000_000
MAX_VALUES = 4_000_000  # parser events: scalars, keys, mappings, sequences (about 2.5 s)
MAX_DOCUMENTS = 100_000
# The longest stream the fast reader takes (mpigen.yaml._fast_read); a longer one is read by libyaml.
FAST_MAX_CHARACTERS = yamlfast.MAX_CHARACTERS

_TAG = "tag:yaml.org,2002:"
_STR = _TAG + "str"
_MERGE = _TAG + "merge"


def fast_events(text: str) -> tuple[list[Any], Any] | None:
    """libyaml's events for `text` (StreamStart left out) read by the fast reader, with the module of
    their classes; None when it declines the stream (read it with libyaml's CParser)."""
    events = yamlfast.parse(text)
    return None if events is None else (events, yamlfast)


class YamlProblem(Exception):
    """Input that is not the YAML mpigen reads; `str()` is the one-line message, position first."""


class Position(NamedTuple):
    """Where in the text, as YAML errors give it."""

    line: int  # 1-based
    column: int  # 1-based

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}"


def _position(mark: Any) -> Position:
    return Position(mark.line + 1, mark.column + 1)


class _Frame:
    """One open mapping or sequence."""

    __slots__ = ("anchor", "key", "merges", "size", "start", "value")

    def __init__(self, value: Any, anchor: str | None, start: Any) -> None:
        self.value = value
        self.key: Any = _NO_KEY  # mappings: the key whose value comes next
        self.merges: list[Any] | None = None
        self.size = 1
        self.anchor = anchor
        self.start = start


_NO_KEY = object()
_MERGE_KEY = object()


# What libyaml (and go-yaml) count as a line break: LF, CR, CRLF, NEL, LINE and PARAGRAPH SEPARATOR.
_BREAK = "\r\n|[\r\n\x85\u2028\u2029]"  # errors only: compiled on first use (re's cache)


def _refuse_deep_nesting(text: str, mark: Any) -> None:
    """libyaml 0.2.6 refuses nesting past 1,000 levels while it scans ahead, before this reader sees
    the event that opens level 65; read the text up to that point again, so the refusal is this
    reader's own, with its position and field path, whichever libyaml PyYAML bundles."""
    start = 0
    breaks = re.finditer(_BREAK, text)
    for _ in range(mark.line):  # libyaml's line, counted as libyaml counts them
        found = next(breaks, None)
        if found is None:
            break
        start = found.end()
    read_stream(text[: start + mark.column])
    raise YamlProblem(f"{_position(mark)}: nesting is deeper than {MAX_DEPTH} levels")


def read_stream(text: str, fast: bool = True) -> list[Any]:
    """Every document of the stream (None for an empty one), or YamlProblem. `fast`: try
    mpigen.yaml._fast_read first (False: the caller reads so much that libyaml, imported once, is faster)."""
    events = yamlfast.parse(text) if fast else None
    if events is not None:  # the stream is simple: its events without PyYAML, whose import is slow
        return _Reader(iter(events).__next__, yamlfast).documents()
    # deferred: PyYAML (its import is a third of a start-up) only for a stream mpigen.yaml._fast_read cannot
    # read
    import yaml

    try:
        loader = _loader_class()(text)
    except UnicodeEncodeError as exc:  # a lone surrogate: only a caller of this function can pass one
        raise YamlProblem(f"character {exc.start + 1}: not a Unicode character (a lone surrogate)") from None
    try:
        return _Reader(loader.get_event, yaml.events).documents()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{_position(mark)}: " if mark else ""
        if mark and "maximum nesting depth" in str(exc.problem):
            _refuse_deep_nesting(text, mark)
        raise YamlProblem(f"{where}{exc.problem or exc.context}") from None
    except yaml.reader.ReaderError as exc:
        # libyaml counts bytes of UTF-8, PyYAML's own reader characters
        position = exc.position
        if getattr(yaml, "CSafeLoader", None) is not None:
            position = len(text.encode("utf-8", "surrogatepass")[:position].decode("utf-8", "ignore"))
        ends = [found.end() for found in re.compile(_BREAK).finditer(text, 0, position)]
        line = len(ends) + 1
        column = position - (ends[-1] if ends else 0) + 1
        code = exc.character if isinstance(exc.character, int) else ord(exc.character[:1] or "\0")
        what = f"character U+{code:04X}"
        raise YamlProblem(f"line {line}, column {column}: {what} is not allowed in YAML") from None
    except yaml.YAMLError as exc:
        raise YamlProblem(" ".join(str(exc).split())) from None
    finally:
        loader.dispose()


def _loader_class() -> Any:
    """libyaml's parser (PyYAML's own without libyaml); only its events are read."""
    # deferred: PyYAML only for a stream mpigen.yaml._fast_read cannot read
    import yaml

    return getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader


class _Reader:
    """Documents from the parser's events, with an explicit stack (see the module docstring)."""

    def __init__(self, get_event: Any, events: Any) -> None:
        self.get_event = get_event
        self.events = events  # the module of the event classes: yaml.events or mpigen.yaml._fast_read
        self.root: list[Any] = []
        self.stack: list[_Frame] = []
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.aliased = 0

    def documents(self) -> list[Any]:
        ev = self.events
        scalar, alias = ev.ScalarEvent, ev.AliasEvent
        mapping_start, sequence_start = ev.MappingStartEvent, ev.SequenceStartEvent
        collection_end = (ev.MappingEndEvent, ev.SequenceEndEvent)
        documents: list[Any] = []
        root: list[Any] = []
        stack = self.stack
        get_event = self.get_event
        plain: dict[str, Any] = {}  # plain scalars already resolved: most repeat (keys, small numbers)
        values = 0
        while True:
            event = get_event()
            kind = type(event)
            values += 1
            if values > MAX_VALUES:
                self._fail(event, f"too large (more than {MAX_VALUES:,} values)")
            if kind is scalar:
                if event.tag is None and event.anchor is None and stack:
                    # the common case, kept short: an untagged scalar in a collection
                    text = event.value
                    if not event.implicit[0]:
                        value = text
                    elif (value := plain.get(text, _NO_KEY)) is _NO_KEY:
                        value = self._scalar(event)
                        # `<<` means a merge key in key position only: never cached by its text
                        if len(plain) < 65536 and len(text) < 256 and text != "<<":
                            plain[text] = value
                    frame = stack[-1]
                    if type(frame.value) is list:
                        frame.value.append(value)
                        frame.size += 1
                        continue
                    key = frame.key
                    if key is not _NO_KEY and key is not _MERGE_KEY:
                        frame.value[key] = value
                        frame.key = _NO_KEY
                        frame.size += 1
                        continue
                    self._add(value, 1, event)
                else:
                    self._add(self._scalar(event), 1, event)
            elif kind is mapping_start or kind is sequence_start:
                self._open(event, kind is mapping_start)
            elif kind in collection_end:
                frame = stack.pop()
                value = self._close(frame)
                if frame.anchor is not None:
                    self.anchors[frame.anchor] = (value, frame.size)
                self._add(value, frame.size, frame.start, anchored=True)
            elif kind is alias:
                self._alias(event)
            elif kind is ev.DocumentStartEvent:
                if len(documents) >= MAX_DOCUMENTS:
                    self._fail(event, f"more than {MAX_DOCUMENTS:,} YAML documents")
                self.anchors = {}
                self.root = root = []
            elif kind is ev.DocumentEndEvent:
                documents.append(root[0] if root else None)
            elif kind is ev.StreamEndEvent:
                return documents

    # Values --------------------------------------------------------------------------------------

    def _add(self, value: Any, size: int, event: Any, anchored: bool = False) -> None:
        """Put a finished value where it belongs: the document, a sequence, or a mapping's key or value."""
        if not anchored and getattr(event, "anchor", None) is not None:
            self.anchors[event.anchor] = (value, size)
        if not self.stack:
            self.root.append(value)
            return
        frame = self.stack[-1]
        frame.size += size
        if type(frame.value) is list:
            frame.value.append(value)
        elif frame.key is _NO_KEY:
            self._key(frame, value, event)
        elif frame.key is _MERGE_KEY:
            self._merge(frame, value, event)
        else:
            frame.value[frame.key] = value
            frame.key = _NO_KEY

    def _key(self, frame: _Frame, key: Any, event: Any) -> None:
        if key is _MERGE_KEY:
            if frame.merges is not None:
                self._fail(event, 'duplicate key "<<"')
            frame.merges = []
            frame.key = _MERGE_KEY
            return
        if type(key) is not str:
            if isinstance(key, (dict, list)):
                self._fail(event, "mapping keys must be strings")
            raw = getattr(event, "value", None)
            literal = "null" if key is None else str(key).lower() if isinstance(key, bool) else str(key)
            self._fail(
                event,
                f"mapping key {literal} is not a string (quote it: {shown(raw if isinstance(raw, str) else literal)})",
            )
        if key in frame.value:
            self._fail(event, f"duplicate key {shown(key)}")
        frame.key = key

    def _merge(self, frame: _Frame, value: Any, event: Any) -> None:
        sources = value if type(value) is list else [value]
        if not all(type(source) is dict for source in sources):
            self._fail(event, "a merge key (<<) takes a mapping or a list of mappings")
        for key in frame.value:  # the keys written before `<<`
            if any(key in source for source in sources):
                # YAML says the mapping's own key wins; go-yaml v2 (kubectl) lets a later merge replace it
                self._fail(
                    event,
                    f"key {shown(key)} comes before the merge key (<<) that also sets it, which kubectl reads as the merged value and YAML as the key's own: write the key after <<",
                )
        assert frame.merges is not None
        frame.merges.extend(sources)
        frame.key = _NO_KEY

    def _close(self, frame: _Frame) -> Any:
        if frame.merges:
            merged: dict[str, Any] = {}
            for source in frame.merges:  # the first mapping that holds a key gives it
                for key, item in source.items():
                    merged.setdefault(key, item)
            merged.update(frame.value)  # keys of the mapping itself win
            return merged
        return frame.value

    def _open(self, event: Any, mapping: bool) -> None:
        expected = _TAG + ("map" if mapping else "seq")
        if event.tag not in (None, "!", expected):
            self._fail(
                event,
                f"tag {tag_name(event.tag)} is not supported on a {'mapping' if mapping else 'sequence'}{CORE}",
            )
        if len(self.stack) >= MAX_DEPTH:
            self._fail(event, f"nesting is deeper than {MAX_DEPTH} levels")
        if self.stack and self.stack[-1].key is _NO_KEY and type(self.stack[-1].value) is dict:
            self._fail(event, "mapping keys must be strings")
        self.stack.append(_Frame({} if mapping else [], event.anchor, event))

    def _alias(self, event: Any) -> None:
        found = self.anchors.get(event.anchor)
        if found is None:
            open_anchor = any(frame.anchor == event.anchor for frame in self.stack)
            self._fail(
                event,
                f"alias *{event.anchor} "
                + ("refers to a node that holds it" if open_anchor else "names no anchor before it"),
            )
        value, size = found  # type: ignore[misc]
        self.aliased += size
        if self.aliased > MAX_ALIAS_VALUES:
            self._fail(
                event, f"too large (more than {MAX_ALIAS_VALUES} values once YAML aliases are expanded)"
            )
        self._add(value, size, event, anchored=True)

    def _scalar(self, event: Any) -> Any:
        tag = event.tag
        value = event.value
        if tag is None or tag == "!":
            tag = resolve_plain(value) if tag is None and event.implicit[0] else _STR
        if tag == _MERGE:  # `<<` as a key merges; anywhere else it is the string
            return (
                _MERGE_KEY
                if self.stack and self.stack[-1].key is _NO_KEY and type(self.stack[-1].value) is dict
                else value
            )
        try:
            return construct(tag, value, explicit=event.tag is not None)
        except ValueError as exc:
            self._fail(event, str(exc))

    # Messages ------------------------------------------------------------------------------------

    def _fail(self, event: Any, message: str) -> Any:
        path = self._path()
        where = f"{_position(event.start_mark)}: " + (f"{path}: " if path else "")
        raise YamlProblem(where + message)

    def _path(self) -> str:
        parts: list[str | int] = []
        for frame in self.stack:
            if type(frame.value) is list:
                parts.append(len(frame.value))
            elif isinstance(frame.key, str):
                parts.append(frame.key)
            else:
                break
        if len(parts) > 16:  # deep nesting: the way in is enough
            return format_path(tuple(parts[:16])) + "…"
        return format_path(tuple(parts))
