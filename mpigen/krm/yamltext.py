"""The ResourceList as YAML text: read it back with comments kept, write it with items spliced in.

The input is vetted by `mpigen.documents` (size, alias bombs, depth, duplicate
keys) and MPIJobs are compiled from that data, as `render` reads them. A list with nothing to compile
comes back byte for byte. Otherwise every item that is kept is copied from the input text as it came
(comments, quoting, layout) when the items are laid out as kyaml writes them (a block sequence, each
item starting a line with `- `, no aliases); the rest of the list (header, comments around the items,
`functionConfig`, `results`) goes through ruamel.yaml's round trip, which also takes the whole list
when the layout is another (kyaml's: 2-space indentation, compact sequences, nulls as `null`). Each
generated object is written by `mpigen.emit`, render's own emitter (fast; every string a YAML 1.1 or
1.2 reader could mistake is quoted), and spliced in as an item.

Nothing here knows MPIJobs: `mpigen.krm.protocol` says which items are replaced by which objects.
"""

from __future__ import annotations

import functools
import io
import itertools
from typing import Any

from mpigen.krm import STDIN, NotAResourceList

PLACEHOLDER = "mpigen-generated-"


def round_trip_load(text: str) -> Any:
    """A tree whose untouched nodes keep their comments and quoting when dumped."""
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


def write_resource_list(
    text: str,
    plain: dict[str, Any],
    replacements: dict[int | None, list[dict[str, Any]]],
    results: list[dict[str, Any]],
) -> str:
    """The output ResourceList: the input with the items at the positions of `replacements` replaced
    by their objects (None: appended, the `functionConfig` removed) and `results` added.

    Items laid out as kyaml writes them (a block sequence, each item starting a line with `- `) are
    cut out of the text and put back as they came, byte for byte; ruamel.yaml's round trip reads and
    writes only what is left (fast: it is pure Python). Other layouts go through it whole."""
    token = _token(plain)
    cut = _cut_items(text, token)
    tree = round_trip_load(cut[0] if cut else text)
    texts = dict(cut[1]) if cut else {}
    _replace_items(tree, replacements, token, texts)
    with_results(tree, results)
    return _splice(dump(tree), texts)


def dump(tree: Any) -> str:
    buffer = io.StringIO()
    _yaml().dump(tree, buffer)
    return buffer.getvalue()


def _replace_items(tree: Any, replacements: dict[int | None, list[dict[str, Any]]], token: str, texts: dict[str, str]) -> None:
    """Put each replaced item's objects (as placeholders, their text in `texts`) in its place in `tree`;
    the objects under None (a generator's) go last, and the `functionConfig` goes."""
    from ruamel.yaml.comments import CommentedSeq

    from mpigen.emit import to_yaml

    numbers = itertools.count(len(texts))

    def generated(objects: list[dict[str, Any]]) -> list[str]:
        names = [f"{token}{next(numbers)}" for _ in objects]
        texts.update((name, _as_item(to_yaml([obj]))) for name, obj in zip(names, objects, strict=True))
        return names

    old = tree.get("items") or []
    new = CommentedSeq()
    for position, node in enumerate(old):
        objects = replacements.get(position)
        if objects is None:
            new.append(node)
        else:
            if isinstance(node, str):
                texts.pop(node, None)  # the job's own text, cut out of the input
            new.extend(generated(objects))
    if None in replacements:
        new.extend(generated(replacements[None]))
        del tree["functionConfig"]
    if isinstance(old, CommentedSeq):
        new.ca.comment, new.ca.end = old.ca.comment, old.ca.end  # before the first item, after the last
    if "items" in tree:
        tree["items"] = new
    else:
        tree.insert(min(2, len(tree)), "items", new)


def _cut_items(text: str, token: str) -> tuple[str, dict[str, str]] | None:
    """`text` with each item of `items` cut down to a placeholder line, and each item's text (from its
    `- ` to the next item, comments and blank lines included); None unless kyaml's layout is met."""
    import yaml

    if any(mark in text for mark in ("\r", "\x85", "\u2028", "\u2029")) or _has_aliases(text):
        return None  # other line breaks; an alias in one item may name an anchor in another
    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:  # empty documents around the list: let the round trip say what it makes of it
        return None
    if not isinstance(root, yaml.MappingNode) or root.flow_style:
        return None
    keys = [key.value for key, _ in root.value]
    items = root.value[keys.index("items")][1] if "items" in keys else None
    if not isinstance(items, yaml.SequenceNode) or items.flow_style or not items.value:
        return None
    lines = text.split("\n")
    following = keys.index("items") + 1
    end = (
        root.value[following][0].start_mark.line if following < len(keys) else len(lines) - (lines[-1] == "")
    )
    bounds = [*(item.start_mark.line for item in items.value), end]
    laid_out = all(
        item.start_mark.column == 2 and lines[item.start_mark.line][:2] == "- " for item in items.value
    )
    markers = any(line.rstrip() in ("---", "...") for line in lines[bounds[0] : end])
    if not laid_out or markers or any(a >= b for a, b in itertools.pairwise(bounds)):
        return None
    names = [f"{token}{n}" for n in range(len(items.value))]
    skeleton = [*lines[: bounds[0]], *(f"- {name}" for name in names), *lines[end:]]
    return "\n".join(skeleton), {
        name: "\n".join(lines[a:b]) for name, (a, b) in zip(names, itertools.pairwise(bounds), strict=True)
    }


def _has_aliases(text: str) -> bool:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return any(isinstance(event, yaml.AliasEvent) for event in yaml.parse(text, Loader=loader))


def _as_item(document: str) -> str:
    """A YAML document written as an item of a top-level block sequence: `- ` and indented by two."""
    lines = document.removesuffix("\n").split("\n")
    return "- " + "\n".join([lines[0], *(f"  {line}" if line else line for line in lines[1:])])


def _token(plain: dict[str, Any]) -> str:
    """A placeholder prefix that no input can hold: it names a digest of the input itself."""
    import hashlib
    import json

    digest = hashlib.sha256(json.dumps(plain, sort_keys=True).encode()).hexdigest()[:24]
    return f"{PLACEHOLDER}{digest}-"


def _splice(text: str, texts: dict[str, str]) -> str:
    """Replace each placeholder item (`- <placeholder>` at the start of a line: `items` is a block
    sequence of the top-level mapping, in compact layout) with its text."""
    import re

    from mpigen.errors import InternalError

    placed = set()

    def item(match: re.Match[str]) -> str:
        if match.group(1) not in texts:
            return match.group(0)
        placed.add(match.group(1))
        return texts[match.group(1)]

    spliced = re.sub(rf"^- ({PLACEHOLDER}[0-9a-f]+-[0-9]+)$", item, text, flags=re.MULTILINE)
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
    from ruamel.yaml.representer import RoundTripRepresenter

    class Representer(RoundTripRepresenter):
        """Nulls as `null`, as kyaml and libyaml write them (ruamel's round trip writes nothing)."""

        def represent_none(self, data: Any) -> Any:
            return self.represent_scalar("tag:yaml.org,2002:null", "null")

    Representer.add_representer(type(None), Representer.represent_none)
    return Representer


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.Representer = _representer()
    yaml.preserve_quotes = True
    yaml.width = 1 << 16  # never fold long strings
    yaml.indent(mapping=2, sequence=2, offset=0)  # kyaml's layout
    return yaml
