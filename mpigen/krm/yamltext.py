"""The ResourceList's YAML text: kept items as they came, generated objects spliced in, the rest round-tripped.

Each generated object is written by `mpigen.yaml.dump`, render's own emitter (fast; every string a YAML 1.1
or 1.2 reader could mistake is quoted), as an item in kyaml's layout. A list cut into its items
(`mpigen.krm.layout`) is written as text: the kept items' texts as they came (comments, quoting,
layout), byte for byte, and the text around them as it came too, unless `results` must be added or the
`functionConfig` dropped: then only that text, with one placeholder item, goes through ruamel.yaml's
round trip (pure Python, slow, but it keeps comments). A list read whole (another layout) goes through
the round trip whole, with kyaml's layout (2-space indentation, compact sequences, nulls as `null`).

Nothing here knows MPIJobs: `mpigen.krm.protocol` says which items are replaced by which objects.
"""

from __future__ import annotations

import functools
import io
import itertools
import re
from typing import Any

from mpigen.errors import InternalError
from mpigen.krm import STDIN, NotAResourceList
from mpigen.krm.layout import Cut
from mpigen.yaml.dump import to_yaml, to_yaml_items
from mpigen.yaml.load import load_documents


def round_trip_load(text: str) -> Any:
    """A tree whose untouched nodes keep their comments and quoting when dumped."""
    # deferred: ruamel.yaml only when the list's own text is round-tripped to keep its comments, not for
    # a cut list that takes its objects and results as text
    from ruamel.yaml.error import YAMLError

    try:
        tree = _yaml().load(text)
    except YAMLError as exc:  # a construct PyYAML accepted and ruamel does not
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        what = " ".join(filter(None, (getattr(exc, "context", None), getattr(exc, "problem", None))))
        raise NotAResourceList(f"mpigen: {STDIN}: {where}{what or exc}") from None
    tree.fa.set_block_style()  # a JSON (flow) list is written back in block style, where items can go
    return tree


Replacements = dict[int | None, list[dict[str, Any]]]  # item position (None: appended) -> its objects


def write_cut(
    cut: Cut,
    token: str,
    replacements: Replacements,
    results: list[dict[str, Any]],
    drop_config: bool,
    appendable: bool = False,
) -> str:
    """A list cut into its items, with the items at the positions of `replacements` replaced by their
    objects (None: appended), `results` added and, with `drop_config`, the `functionConfig` dropped.
    `appendable`: the list has no `results` of its own and its text ends in its top-level block
    mapping, so the results can follow it as text."""
    pieces: list[str] = []
    for position in range(len(cut)):
        objects = replacements.get(position)
        pieces.append(
            _line_ended(cut.item(position))
            if objects is None
            else _indented(_items_text(objects), cut.indent)
        )
    pieces.append(_indented(_items_text(replacements.get(None, [])), cut.indent))
    items = "".join(pieces)
    if not results and not drop_config:
        return cut.before + items + cut.after
    if appendable and not drop_config:
        # The results as one more top-level key after everything else: no round trip of the list, whose
        # comments (hundreds of thousands of lines after the items) ruamel.yaml reads in quadratic time.
        return _line_ended(cut.before + items + cut.after) + dump({"results": results})
    tree = round_trip_load(cut.skeleton(token + "0"))
    if drop_config:
        del tree["functionConfig"]
    with_results(tree, results)
    return _splice(dump(tree), token, {token + "0": items.removesuffix("\n")})


def write_whole(
    text: str, token: str, replacements: Replacements, results: list[dict[str, Any]], drop_config: bool
) -> str:
    """A list in another layout, through ruamel.yaml's round trip whole; generated objects are spliced in
    as text. A list with no comment to keep (no `#` anywhere: JSON, most flow YAML) is written from its
    data by render's emitter instead: the round trip of a large list takes minutes."""
    if "#" not in text:
        return _write_data(text, replacements, results, drop_config)
    tree = round_trip_load(text)
    texts = _replace_items(tree, replacements, token)
    if drop_config:
        del tree["functionConfig"]
    with_results(tree, results)
    return _splice(dump(tree), token, texts)


def _write_data(
    text: str, replacements: Replacements, results: list[dict[str, Any]], drop_config: bool
) -> str:
    (document,) = load_documents(text, STDIN)  # the reader has read it as one mapping already
    data = dict(document.data)
    items: list[Any] = []
    for position, item in enumerate(data.get("items") or []):
        objects = replacements.get(position)
        items.extend([item] if objects is None else objects)
    items.extend(replacements.get(None, []))
    if "items" in data or items:
        data["items"] = items
    if drop_config:
        data.pop("functionConfig", None)
    existing = data.get("results")
    if isinstance(existing, list):
        data["results"] = existing + results
    elif results:
        data["results"] = results
    return to_yaml([data])


def dump(tree: Any) -> str:
    buffer = io.StringIO()
    _yaml().dump(tree, buffer)
    return buffer.getvalue()


def _replace_items(tree: Any, replacements: Replacements, token: str) -> dict[str, str]:
    """Put each replaced item's objects in its place in `tree` as placeholders (the objects under None
    last); their texts, by placeholder."""
    # deferred: ruamel.yaml only when the list's own text is round-tripped to keep its comments, not for
    # a cut list that takes its objects and results as text
    from ruamel.yaml.comments import CommentedSeq

    texts: dict[str, str] = {}
    numbers = itertools.count()

    def generated(objects: list[dict[str, Any]]) -> list[str]:
        names = [f"{token}{next(numbers)}" for _ in objects]
        texts.update(
            (name, _items_text([obj]).removesuffix("\n")) for name, obj in zip(names, objects, strict=True)
        )
        return names

    old = tree.get("items") or []
    new = CommentedSeq()
    for position, node in enumerate(old):
        objects = replacements.get(position)
        new.extend([node] if objects is None else generated(objects))
    new.extend(generated(replacements.get(None, [])))
    if isinstance(old, CommentedSeq):
        new.ca.comment, new.ca.end = old.ca.comment, old.ca.end  # before the first item, after the last
    if "items" in tree:
        tree["items"] = new
    else:
        tree.insert(min(2, len(tree)), "items", new)
    return texts


def _items_text(objects: list[dict[str, Any]]) -> str:
    """Objects written by render's emitter as items of a top-level block sequence."""
    return to_yaml_items(objects)


def _indented(text: str, indent: int) -> str:
    """Items written at column 0, moved to the column of the list's own items (empty lines left empty:
    inside a literal they stay empty lines)."""
    if not indent:
        return text
    return re.sub(r"^(?=.)", " " * indent, text, flags=re.MULTILINE)


def _line_ended(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def _splice(text: str, token: str, texts: dict[str, str]) -> str:
    """Replace each placeholder item (`- <placeholder>` at the start of a line: `items` is a block
    sequence of the top-level mapping, in compact layout) with its text."""
    placed = set()

    def item(match: re.Match[str]) -> str:
        if match.group(1) not in texts:
            return match.group(0)
        placed.add(match.group(1))
        return texts[match.group(1)]

    spliced = re.sub(rf"^- ({re.escape(token)}[0-9]+)$", item, text, flags=re.MULTILINE)
    if len(placed) != len(texts):
        raise InternalError(f"{len(texts) - len(placed)} items could not be placed in the ResourceList")
    return spliced


def with_results(tree: Any, results: list[dict[str, Any]]) -> None:
    existing = tree.get("results")
    if isinstance(existing, list):
        existing.extend(results)
    elif results:
        tree["results"] = results


@functools.cache
def _representer() -> Any:
    # deferred: ruamel.yaml only when the list's own text is round-tripped to keep its comments, not for
    # a cut list that takes its objects and results as text
    from ruamel.yaml.representer import RoundTripRepresenter

    class Representer(RoundTripRepresenter):
        """Nulls as `null`, as kyaml and libyaml write them (ruamel's round trip writes nothing)."""

        def represent_none(self, data: Any) -> Any:
            return self.represent_scalar("tag:yaml.org,2002:null", "null")

    Representer.add_representer(type(None), Representer.represent_none)
    return Representer


def _yaml() -> Any:
    # deferred: ruamel.yaml only when the list's own text is round-tripped to keep its comments, not for
    # a cut list that takes its objects and results as text
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.Representer = _representer()
    yaml.preserve_quotes = True
    yaml.width = 1 << 16  # never fold long strings
    yaml.indent(mapping=2, sequence=2, offset=0)  # kyaml's layout
    return yaml
