"""The YAML most jobs are written in, read without PyYAML: the parser events libyaml would give, or None. Pure.

Importing PyYAML costs a one-job render a third of its start-up, so a short stream is first tried
here. This reader takes block style only, the way people and kubectl write manifests: block mappings
and sequences (a sequence may sit at its key's indentation, a mapping may start on an entry's line),
plain and one-line quoted scalars, literal block scalars (`|`, `|-`, `|+`), one-line flow sequences of
scalars, `{}`, comments, and `---` between documents. On anything else (tabs, flow style over more
than one line, anchors, aliases, tags, folded scalars, directives, escapes other than `\\\\ \\" \\n \\t`,
a character YAML would look at twice) and on anything libyaml would refuse, it gives up and returns
None, and the caller reads the stream with libyaml instead: this reader only ever decides that a
stream is simple, never what a hard one means.

Its events are libyaml's, positions included, for every stream it takes: `tests/unit/yaml/test_yaml_fast.py`
compares the two on the golden inputs, the examples and generated streams. The events are read by
`mpigen.yaml.reader`, which resolves scalars and builds documents from either reader alike.
"""

from __future__ import annotations

from mpigen.reference import stand_in

MAX_CHARACTERS = (
    128 * 1024
)  # longer streams go to libyaml: past about this size, reading them here costs more than importing PyYAML


class Mark:
    __slots__ = ("column", "line")

    def __init__(self, line: int, column: int) -> None:
        self.line = line
        self.column = column


class Event:
    __slots__ = ("implicit", "start_mark", "value")
    tag = None
    anchor = None

    def __init__(
        self, start_mark: Mark | None, value: str | None = None, implicit: tuple[bool, bool] = (True, False)
    ) -> None:
        self.start_mark = start_mark
        self.value = value
        self.implicit = implicit


# The names mpigen.yaml.reader looks up, as in yaml.events.
class ScalarEvent(Event):
    __slots__ = ()


class AliasEvent(Event):  # never given: a stream with aliases is libyaml's
    __slots__ = ()


class MappingStartEvent(Event):
    __slots__ = ()


class MappingEndEvent(Event):
    __slots__ = ()


class SequenceStartEvent(Event):
    __slots__ = ()


class SequenceEndEvent(Event):
    __slots__ = ()


class DocumentStartEvent(Event):
    __slots__ = ()


class DocumentEndEvent(Event):
    __slots__ = ()


class StreamEndEvent(Event):
    __slots__ = ()


_PLAIN = (True, False)
_QUOTED = (False, True)
# A plain scalar may not start with these (`-` may, before anything but a space; `?` and `:` may too,
# but are left to libyaml).
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_ESCAPES = {"\\": "\\", '"': '"', "n": "\n", "t": "\t"}
# libyaml takes a key only if its `:` is at most 1,024 characters past the key's start (a simple key).
_MAX_KEY = 1000


class _Hard(Exception):
    """Not a stream this reader takes."""


@stand_in
def parse(text: str) -> list[Event] | None:
    """libyaml's events for `text` (StreamStart left out), or None when the stream is not one this
    reader takes."""
    if len(text) > MAX_CHARACTERS or not text.replace("\n", " ").isprintable():
        return None  # tabs, CR, controls, NEL, U+2028, a byte order mark, lone surrogates...
    try:
        return _Parser(text.split("\n")).events()
    except _Hard:
        return None


class _Block:
    """An open block collection."""

    __slots__ = ("indent", "mapping")

    def __init__(self, indent: int, mapping: bool) -> None:
        self.indent = indent
        self.mapping = mapping


class _Parser:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.out: list[Event] = []
        self.stack: list[_Block] = []
        # A value still to come: after `key:` or `-` at the end of a line, the mark just past the
        # indicator (where libyaml puts the empty scalar if no nested block follows) and the
        # indentation a nested block must exceed.
        self.pending: Mark | None = None
        self.pending_indent = 0
        self.pending_mapping = False

    def events(self) -> list[Event]:
        lines = self.lines
        out = self.out
        count = len(lines)
        number = 0
        in_document = False
        explicit = False  # the document opened with `---` and holds nothing yet
        while number < count:
            line = lines[number]
            content = line.lstrip(" ")
            if not content or content[0] == "#":
                number += 1
                continue
            indent = len(line) - len(content)
            if indent == 0 and (content[:3] in ("---", "...") or content[0] == "%"):
                after = content[3:]
                if content[:3] != "---" or (
                    after and (after[0] != " " or after.lstrip(" ")[:1] not in ("", "#"))
                ):
                    raise _Hard  # `...`, a directive, or content on the `---` line
                if in_document:
                    self._end_document(Mark(number, 0), explicit)
                out.append(DocumentStartEvent(Mark(number, 0)))
                in_document = explicit = True
                number += 1
                continue
            if not in_document:
                out.append(DocumentStartEvent(Mark(number, indent)))
                in_document = True
            elif not explicit and not self.stack:
                raise _Hard  # a second node at the top of one document
            explicit = False
            number = self._line(number, indent, content)
        if in_document:
            self._end_document(self._stream_end(), explicit)
        out.append(StreamEndEvent(None))
        return out

    def _stream_end(self) -> Mark:
        lines = self.lines
        last = len(lines) - 1
        return Mark(last, 0) if lines[last] == "" else Mark(last + 1, 0)

    def _end_document(self, next_token: Mark, empty: bool) -> None:
        if empty:  # `---` and nothing under it: a null document
            self.out.append(ScalarEvent(next_token, "", _PLAIN))
        self._close(-1, None)
        self.out.append(DocumentEndEvent(None))

    def _close(self, indent: int, entry: bool | None) -> None:
        """Settle a pending value, then end the collections a line at `indent` leaves (a sequence at
        the line's own indentation ends too, unless the line is one of its entries)."""
        stack = self.stack
        out = self.out
        if self.pending is not None:
            out.append(ScalarEvent(self.pending, "", _PLAIN))
            self.pending = None
        while stack and (
            stack[-1].indent > indent or (stack[-1].indent == indent and not stack[-1].mapping and not entry)
        ):
            out.append(MappingEndEvent(None) if stack.pop().mapping else SequenceEndEvent(None))

    # One line of block content: an entry of a sequence or of a mapping ---------------------------

    def _line(self, number: int, indent: int, content: str) -> int:
        stack = self.stack
        entry = content == "-" or content[:2] == "- "
        nested = self.pending is not None and (
            indent > self.pending_indent or (entry and self.pending_mapping and indent == self.pending_indent)
        )
        if nested or not stack:  # the value of the key or entry above, or the document's top node
            self.pending = None
            self._open(number, indent, not entry)
        else:
            self._close(indent, entry)
            if not stack or stack[-1].indent != indent or stack[-1].mapping == entry:
                raise _Hard  # a second top node, or an indentation no open collection has
        if entry:
            return self._entry(number, indent, content)
        return self._key_value(number, indent, content)

    def _open(self, number: int, indent: int, mapping: bool) -> None:
        if len(self.stack) >= 60:
            raise _Hard  # deep nesting: libyaml's events carry the refusal
        self.stack.append(_Block(indent, mapping))
        self.out.append((MappingStartEvent if mapping else SequenceStartEvent)(Mark(number, indent)))

    def _entry(self, number: int, indent: int, content: str) -> int:
        """`- ...` at `indent`: the entry's value, on this line or nested below it."""
        rest = content[1:].lstrip(" ")
        if not rest or rest[0] == "#":
            self._expect(Mark(number, indent + 1), indent, False)
            return number + 1
        column = len(self.lines[number]) - len(rest)
        if rest[0] == "-" and (len(rest) == 1 or rest[1] == " "):
            raise _Hard  # `- - x`
        if self._is_key(rest):  # `- key: value`: a mapping that starts on the entry's line
            self._open(number, column, True)
            return self._key_value(number, column, rest)
        return self._value(number, column, rest, indent)

    def _key_value(self, number: int, indent: int, content: str) -> int:
        """`key: value` at `indent`."""
        out = self.out
        if content[0] in "'\"":
            key, end = self._quoted(content)
            out.append(ScalarEvent(Mark(number, indent), key, _QUOTED))
            if content[end : end + 1] != ":" or content[end + 1 : end + 2] not in ("", " "):
                raise _Hard
            colon = end
            if colon > _MAX_KEY:
                raise _Hard
        else:
            colon = content.find(": ")
            if colon < 0:
                if content[-1] != ":":
                    raise _Hard  # a bare scalar where a key belongs, or a plain scalar over lines
                colon = len(content) - 1
            key = content[:colon].rstrip(" ")
            if not key or not self._plain_start(key) or " #" in key or colon > _MAX_KEY:
                raise _Hard
            out.append(ScalarEvent(Mark(number, indent), key, _PLAIN))
        rest = content[colon + 1 :].lstrip(" ")
        if not rest or rest[0] == "#":
            self._expect(Mark(number, indent + colon + 1), indent, True)
            return number + 1
        column = len(self.lines[number]) - len(rest)
        return self._value(number, column, rest, indent)

    def _expect(self, mark: Mark, indent: int, mapping: bool) -> None:
        self.pending = mark
        self.pending_indent = indent
        self.pending_mapping = mapping

    def _is_key(self, content: str) -> bool:
        if content[0] in "'\"":
            _, end = self._quoted(content)
            return content[end : end + 1] == ":"
        colon = content.find(": ")
        hash_ = content.find(" #")
        if colon >= 0:
            return hash_ < 0 or colon < hash_
        return content[-1] == ":" and hash_ < 0

    # Values ----------------------------------------------------------------------------------------

    def _value(self, number: int, column: int, text: str, parent: int) -> int:
        """A value that starts at `column` of line `number`, in a collection indented `parent`: the
        number of the line after it."""
        out = self.out
        mark = Mark(number, column)
        first = text[0]
        if first in "'\"":
            value, end = self._quoted(text)
            self._line_end(text[end:])
            out.append(ScalarEvent(mark, value, _QUOTED))
            return number + 1
        if first == "|":
            return self._literal(number, mark, text, parent)
        if first in "[{":
            self._flow(number, column, text)
            return number + 1
        if not self._plain_start(text):
            raise _Hard
        comment = text.find(" #")
        value = (text if comment < 0 else text[:comment]).rstrip(" ")
        if ": " in value or value[-1] == ":":
            raise _Hard  # `a: b: c`
        out.append(ScalarEvent(mark, value, _PLAIN))
        return number + 1

    @staticmethod
    def _plain_start(text: str) -> bool:
        first = text[0]
        if first in _INDICATORS:
            return first == "-" and len(text) > 1 and text[1] != " "
        return True

    @staticmethod
    def _line_end(rest: str) -> None:
        """Nothing but a comment may follow a value on its line."""
        if rest and (rest[0] != " " or rest.lstrip(" ")[:1] not in ("", "#")):
            raise _Hard

    @staticmethod
    def _quoted(text: str) -> tuple[str, int]:
        """A one-line quoted scalar at the start of `text`: its value, and where it ends in `text`."""
        quote = text[0]
        if quote == "'":
            parts = []
            start = 1
            while True:
                end = text.find("'", start)
                if end < 0:
                    raise _Hard  # over lines
                parts.append(text[start:end])
                if text[end + 1 : end + 2] != "'":
                    return "'".join(parts), end + 1
                start = end + 2
        out = []
        start = 1
        while True:
            end = text.find('"', start)
            slash = text.find("\\", start)
            if end < 0:
                raise _Hard
            if 0 <= slash < end:
                escaped = _ESCAPES.get(text[slash + 1 : slash + 2])
                if escaped is None:
                    raise _Hard
                out.append(text[start:slash])
                out.append(escaped)
                start = slash + 2
                continue
            out.append(text[start:end])
            return "".join(out), end + 1

    def _flow(self, number: int, column: int, text: str) -> None:
        """`[a, "b", c]` or `{a: 1, b: "c"}` on one line: a flow collection of scalars."""
        out = self.out
        mapping = text[0] == "{"
        close = "}" if mapping else "]"
        out.append((MappingStartEvent if mapping else SequenceStartEvent)(Mark(number, column)))
        position = self._skip(text, 1)
        if text[position : position + 1] != close:
            while True:
                start = position
                position = self._flow_scalar(number, column, text, position, ":" if mapping else close)
                if mapping:
                    if position - start > _MAX_KEY:
                        raise _Hard
                    if text[position : position + 2] != ": ":
                        raise _Hard  # `{a}`, `{a:b}`: libyaml's to read
                    position = self._flow_scalar(number, column, text, self._skip(text, position + 1), close)
                separator = text[position : position + 1]
                if separator == close:
                    break
                if separator != ",":
                    raise _Hard  # over lines, or something this reader does not take
                position = self._skip(text, position + 1)
                if text[position : position + 1] in (close, ""):
                    raise _Hard  # `[a, ]`, or over lines: libyaml's to judge
        self._line_end(text[position + 1 :])
        out.append(MappingEndEvent(None) if mapping else SequenceEndEvent(None))

    @staticmethod
    def _skip(text: str, position: int) -> int:
        while text[position : position + 1] == " ":
            position += 1
        return position

    def _flow_scalar(self, number: int, column: int, text: str, position: int, end: str) -> int:
        """A scalar inside a flow collection, from `position`: where the spaces after it end."""
        if position >= len(text):
            raise _Hard
        mark = Mark(number, column + position)
        if text[position] in "'\"":
            value, length = self._quoted(text[position:])
            self.out.append(ScalarEvent(mark, value, _QUOTED))
            return self._skip(text, position + length)
        stop = position
        while stop < len(text) and text[stop] not in ",:]}":
            stop += 1
        value = text[position:stop].rstrip(" ")
        if (
            not value
            or not self._plain_start(value)
            or any(c in value for c in "#[]{}")
            or text[stop : stop + 1] not in (",", end)
        ):
            raise _Hard
        self.out.append(ScalarEvent(mark, value, _PLAIN))
        return stop

    def _literal(self, number: int, mark: Mark, text: str, parent: int) -> int:
        """`|`, `|-` or `|+` and the lines under it: the number of the line after them."""
        chomp = text[1:2] if text[1:2] in ("-", "+") else ""
        self._line_end(text[1 + len(chomp) :])
        lines = self.lines
        count = len(lines)
        current = number + 1
        while current < count and lines[current] == "":
            current += 1
        breaks = current - number - 1  # empty lines before the first line of content
        if current == count:
            raise _Hard
        first = lines[current]
        indent = len(first) - len(first.lstrip(" "))
        if indent <= parent or indent == len(first):
            raise _Hard  # an empty scalar, or leading lines of spaces: libyaml's to measure
        content: list[str] = []
        blanks = 0
        last = current
        while current < count:
            line = lines[current]
            spaces = len(line) - len(line.lstrip(" "))
            if spaces == len(line) and spaces <= indent:
                blanks += 1
            elif spaces < indent:
                break
            else:
                content.extend([""] * blanks)
                blanks = 0
                content.append(line[indent:])
                last = current
            current += 1
        value = "\n" * breaks + "\n".join(content)
        if last < count - 1:  # a line break ends the last line of content
            if chomp != "-":
                value += "\n"
            if chomp == "+":  # and the empty lines after it, each ended by a line break
                value += "\n" * (current - last - 1 - (1 if current == count else 0))
        self.out.append(ScalarEvent(mark, value, _QUOTED))
        return current
