"""kyaml's layout: a ResourceList's text cut into its items, so that items which pass through are never read.

kustomize and kpt write the list as kyaml does: a block mapping whose `items:` is a block sequence with
each item starting a line with `- `. `cut` finds those lines with a regular expression and proves the cut
right with the fast reader (mpigen.yaml.reader.fast_events; libyaml's C parser where that declines), building no objects but events: the text outside the
items, with one placeholder item, must read as a list whose items are exactly that placeholder, and each
item's text must parse on its own as a sequence of one item (a cut inside a quoted scalar or a flow
collection leaves a text that does not). Items indented under `items:` (as go-yaml v3 writes them) are
cut alike. Anything else (JSON, flow style, other line breaks) is left to the whole-list reading. So is a list whose items are read as data (it holds a
job) when an item's alias names an anchor outside the item: that item does not read on its own. A list
with no job is written back as it came, so its aliases mean what they meant.

For each item, `head` reads only its first events, until its top-level `apiVersion` and `kind`: enough
to tell an MPIJob (and a near-miss) from what passes through. An item is read as data (`load_item`,
vetted as `render` vets a document) only when it may be an MPIJob, or when the list holds a job and
every item must be named and checked for collisions. A list of already compiled objects is parsed once
in C and written back byte for byte.
"""

from __future__ import annotations

import re
from typing import Any

from mpigen.yaml.load import InputError, load_documents
from mpigen.yaml.reader import fast_events

# The top-level `items:` key with a block value; an item's first line; the first line at column 0 that
# can belong to no item (a key of the list after `items`, a document marker). Each is matched from the
# \n before the line (a literal the regular expression engine finds fast; `^` is tried everywhere).
_ITEMS_KEY = re.compile(r"(?:\A|\n)items:[ \t]*(?:#[^\n]*)?\n")
_ITEM_START = re.compile(r"\n-(?=[ \t\n])")
_BLOCK_END = re.compile(r"\n(?![-# \t\n])|\n(?=-[^ \t\n])")
# Items indented under `items:` (go-yaml v3 and others write `items:\n    - apiVersion: ...`): the first
# item's indentation, and the first line at column 0 that is not a comment ends the sequence.
_FIRST_ITEM = re.compile(r"(?:[ \t]*(?:#[^\n]*)?\n)*( *)-(?=[ \t\n])")
_INDENTED_BLOCK_END = r"\n(?=[^ \t\n#])"
# Line breaks other than \n that YAML knows. \r (CRLF files) is left to the whole-list reading; the
# others only where no line can start at column 0 after them (the cut reads lines at column 0 alone).
# (A character class first: the engine scans for it fast.)
OTHER_BREAKS = "[\r\x85\u2028\u2029](?:(?<=\r)|(?![ \t\n\x85\u2028\u2029]))"

UNKNOWN = "unknown"  # a head that cannot be told from the first events: the item is read as data
ALIAS = "alias"  # an item that is only a YAML alias (`- *a`) of a node elsewhere in the list


class NotCut(Exception):
    """The text is not laid out as kyaml writes it (or a cut cannot be proved): read the list whole."""


class Cut:
    """The list's text in three parts: `before` (the header and `items:`), each item's text (its head
    comments, its `- ` line and what follows up to the next item's head comments), and `after` (the
    comments after the last item and everything from the key that follows `items` to the end). Head
    comments are the comment lines just above an item's `- `, indented no further than it: they go
    with that item, and those after the last item stay with the list."""

    __slots__ = ("bounds", "dashes", "indent", "text")

    def __init__(self, text: str, bounds: tuple[int, ...], dashes: tuple[int, ...], indent: int = 0) -> None:
        self.text = text
        self.bounds = (
            bounds  # item i is text[bounds[i]:bounds[i + 1]]; the last bound is where `after` starts
        )
        self.dashes = dashes  # where item i's `-` is
        self.indent = indent  # the column of every item's `-`

    @property
    def before(self) -> str:
        return self.text[: self.bounds[0]]

    @property
    def after(self) -> str:
        return self.text[self.bounds[-1] :]

    def __len__(self) -> int:
        return len(self.dashes)

    def item(self, position: int) -> str:
        return self.text[self.bounds[position] : self.bounds[position + 1]]

    def as_document(self, position: int) -> str:
        """Item `position`'s text with its `-` made a space: the item as a document of its own, at the
        same lines and columns."""
        start, dash = self.bounds[position], self.dashes[position]
        return self.text[start:dash] + " " + self.text[dash + 1 : self.bounds[position + 1]]

    def skeleton(self, placeholder: str) -> str:
        """The list with one placeholder item in place of the items."""
        return f"{self.before}{' ' * self.indent}- {placeholder}\n{self.after}"


def cut(text: str) -> Cut:
    """The items' bounds, from the text alone; `head` and the skeleton's reading prove them. Raises NotCut."""
    if ("\r" in text) if text.isascii() else re.search(OTHER_BREAKS, text):
        raise NotCut("a line break other than \\n before column 0")
    key = _ITEMS_KEY.search(text)
    if key is None:
        raise NotCut("no block `items:` key")
    first = _FIRST_ITEM.match(text, key.end())
    indent = len(first.group(1)) if first else 0
    if indent:
        end_match = re.compile(_INDENTED_BLOCK_END).search(text, key.end() - 1)
        start = re.compile(r"\n" + " " * indent + r"-(?=[ \t\n])")
    else:
        end_match, start = _BLOCK_END.search(text, key.end() - 1), _ITEM_START
    end = end_match.start() + 1 if end_match else len(text)
    dashes = tuple(match.end() - 1 for match in start.finditer(text, key.end() - 1, end))
    if not dashes:
        raise NotCut("no block sequence of items")
    lines = tuple(dash - indent for dash in dashes)
    bounds = (
        *(_head_comments(text, line, key.end(), indent) for line in lines),
        _head_comments(text, end, dashes[-1] + 1, indent),
    )
    return Cut(text, bounds, dashes, indent)


def _head_comments(text: str, line: int, floor: int, indent: int) -> int:
    """Where the run of comment lines at most `indent` columns in just above the line starting at `line`
    starts (not above `floor`). Blank lines are not taken: after a `|+` scalar they are part of its value."""
    start = line
    while start > floor:
        previous = text.rfind("\n", 0, start - 1) + 1
        if previous < floor or text[previous : previous + indent + 1].lstrip(" ")[:1] != "#":
            break
        start = previous
    return start


def head(item: str, fast: bool) -> tuple[Any, Any] | str | None:
    """The top-level (apiVersion, kind) of one item's text (values as written: a missing one is None);
    None for an item that is not a mapping; UNKNOWN when the first events cannot tell (a key that is
    not a plain string, `<<`, an explicit tag, a repeated key). The rest of the text is parsed too
    (the fast reader, mpigen.yaml.reader.fast_events, if `fast` and it takes the item, else libyaml: no objects), so an item that is
    not YAML raises NotCut. `fast` is for a short list: a long one is parsed faster by libyaml, whose
    import it pays once."""
    read = fast_events(item) if fast else None  # the whole item, or None: then libyaml's
    if read is not None:
        events, classes = read
        get_event = iter(events).__next__
        get_event()  # document
        get_event()  # sequence
        return _head(get_event, classes)
    # deferred: PyYAML and libyaml's parser (their import is a third of a start-up) only for an item
    # mpigen.yaml._fast_read cannot read
    import yaml
    from yaml._yaml import CParser

    parser = CParser(item)
    try:
        for _ in range(3):  # stream, document, sequence
            parser.get_event()
        found = _head(parser.get_event, yaml)
        parser.raw_parse()  # the rest of the item: valid YAML, one item
    except yaml.YAMLError as exc:
        raise NotCut(str(exc)) from None
    return found


def _head(get_event: Any, events: Any) -> tuple[Any, Any] | str | None:
    """From an item's first mapping event on; `events`: the module of the event classes."""
    event = get_event()
    if not isinstance(event, events.MappingStartEvent):
        if isinstance(event, events.AliasEvent):  # no tag; only the whole list says what it stands for
            return ALIAS
        return UNKNOWN if event.tag is not None else None
    if event.tag is not None:
        return UNKNOWN
    values: dict[str, Any] = {}
    while len(values) < 2:
        key = get_event()
        if isinstance(key, events.MappingEndEvent):
            break
        if (
            not isinstance(key, events.ScalarEvent)
            or key.tag is not None
            or key.value == "<<"
            or key.value in values
        ):
            return UNKNOWN
        value = get_event()
        if key.value in ("apiVersion", "kind"):
            if not isinstance(value, events.ScalarEvent) or value.tag is not None:
                return UNKNOWN
            values[key.value] = value.value
        elif isinstance(value, (events.MappingStartEvent, events.SequenceStartEvent)):
            _skip(get_event, events)
    return values.get("apiVersion"), values.get("kind")


def _skip(get_event: Any, events: Any) -> None:
    """Consume the events of the collection just started."""
    depth = 1
    while depth:
        event = get_event()
        if isinstance(event, (events.MappingStartEvent, events.SequenceStartEvent)):
            depth += 1
        elif isinstance(event, (events.MappingEndEvent, events.SequenceEndEvent)):
            depth -= 1


def load_item(item: str, source: str, fast: bool) -> Any:
    """One item (`Cut.as_document`) read as data, as `render` reads a document (mpigen.yaml.load:
    bounded, duplicate keys refused, YAML 1.1 scalars). Raises NotCut on any problem, for the
    whole-list reading to word it."""
    try:
        documents = load_documents(item, source, fast)
    except InputError as exc:
        raise NotCut(str(exc)) from None
    if len(documents) != 1:
        raise NotCut("an item that is not one document")
    return documents[0].data
