"""The YAML of one object exactly as `mpigen.yaml.dump`'s PyYAML dumper writes it, without PyYAML, or None. Pure.

Importing PyYAML costs a one-job render a third of its start-up, so objects are first written here.
This writer takes what builders make and scalars whose style it can tell for certain: strings libyaml
writes plain, single-quoted or as a literal block (`|`, `|-`), integers, finite floats, booleans and
null. Anything else (a float YAML 1.1 would not read back as one, a string libyaml would double-quote, a literal with a leading space or trailing blank
lines, a key too long to be a simple key, a line long enough to be folded) gives None, and the caller
writes that object with PyYAML instead.

The style rules are libyaml's (emitter.c: yaml_emitter_analyze_scalar and
yaml_emitter_select_scalar_style) for the styles `mpigen.yaml.dump` asks for: plain where allowed, quoted
where a YAML 1.1 reader, kubectl's go-yaml v2 (mpigen.yaml.scalars) or a YAML 1.2 one would take the
plain text for something else, `|` for text over lines. `tests/unit/yaml/test_yaml_fast.py` compares this writer with PyYAML's on the golden outputs
and on generated strings.
"""

from __future__ import annotations

import re
from typing import Any

from mpigen.reference import stand_in
from mpigen.yaml.scalars import TAG, resolve_plain, yaml11_tag

# Strings that some YAML reader Kubernetes tooling uses (go-yaml, YAML 1.2 core) takes for a number,
# boolean or null although PyYAML's own YAML 1.1 rules would leave them plain: mpigen quotes them too.
# (kustomize kyaml/yaml/compatibility.go keeps such values quoted for the same reason.)
AMBIGUOUS = re.compile(
    r"""(?x)
    [yYnN]
    | [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
    | [-+]?0[xX][0-9a-fA-F_]+ | 0[oO][0-7_]+ | [-+]?0[bB][01_]+ | [-+]?[0-9][0-9_]*
    | [-+]?\.(inf|Inf|INF) | \.(nan|NaN|NAN)
    | ~ | null | Null | NULL
    | (true|True|TRUE|false|False|FALSE|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF)
    """
)
# Plain for certain, whatever libyaml's analysis: no indicator, space or special character.
_SIMPLE = re.compile(r"[A-Za-z_/][A-Za-z0-9_./=+-]*\Z")
_TIMESTAMP = re.compile(
    r"""(?x)
    [0-9]{4}-[0-9]{2}-[0-9]{2}$
    | [0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?
      (?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?$"""
)


def ambiguous(text: str) -> bool:
    """A string that kubectl (go-yaml v2) or another reader in AMBIGUOUS would not read back as this string
    if it were written plain: always quoted."""
    return AMBIGUOUS.fullmatch(text) is not None or resolve_plain(text) != _STR


_FIRST_INDICATORS = frozenset("#,[]{}&*!|>'\"%@`")
_STR = TAG + "str"
_FLOAT = TAG + "float"
_MAX_WIDTH = 30_000  # libyaml folds plain and quoted lines past 65,536 columns (a quote counts twice)
_MAX_INDENT = 200  # PyYAML's emitter recurses: much deeper, it fails (it is given no such object)
_MAX_KEY = 120  # libyaml writes a key of more than 128 bytes as a complex key (`? key`)


class _Hard(Exception):
    """An object for PyYAML to write."""


@stand_in
def dump(value: Any) -> str | None:
    """`yaml.dump(value, Dumper=mpigen.yaml.dump's dumper, default_flow_style=False, sort_keys=False,
    allow_unicode=True, width=1 << 16)`, or None when this writer cannot tell."""
    out: list[str] = []
    try:
        if type(value) is dict and value:
            _mapping(value, 0, out, "")
        elif type(value) is list and value:
            _sequence(value, 0, out, "")
        else:
            return None
    except _Hard:
        return None
    return "".join(out)


def _mapping(mapping: dict[str, Any], indent: int, out: list[str], first: str) -> None:
    """A block mapping at `indent`; its first key follows `first` (a `- ` already written), the others
    start their own line."""
    if indent > _MAX_INDENT:
        raise _Hard
    pad = " " * indent
    prefix = first
    for key, value in mapping.items():
        if type(key) is not str or "\n" in key or len(key.encode("utf-8")) > _MAX_KEY:
            raise _Hard
        out.append(prefix)
        out.append(_scalar_text(key))
        out.append(":")
        prefix = pad
        kind = type(value)
        if kind is dict and value:
            out.append("\n")
            _mapping(value, indent + 2, out, " " * (indent + 2))
        elif kind is list and value:
            out.append("\n")
            _sequence(value, indent, out, pad)  # a sequence in a mapping is not indented
        else:
            out.append(" ")
            _value(value, indent, out)


def _sequence(sequence: list[Any], indent: int, out: list[str], first: str) -> None:
    if indent > _MAX_INDENT:
        raise _Hard
    pad = " " * indent
    prefix = first
    for item in sequence:
        out.append(prefix)
        out.append("- ")
        prefix = pad
        kind = type(item)
        if kind is dict and item:
            _mapping(item, indent + 2, out, "")
        elif kind is list and item:
            _sequence(item, indent + 2, out, "")
        else:
            _value(item, indent, out)


def _value(value: Any, indent: int, out: list[str]) -> None:
    """A scalar or an empty collection, then the end of its line."""
    kind = type(value)
    if kind is str:
        if "\n" in value:
            out.append(_literal(value, indent + 2))
            return
        out.append(_scalar_text(value))
    elif kind is bool:
        out.append("true" if value else "false")
    elif kind is int:
        out.append(str(value))
    elif kind is float:
        out.append(_float_text(value))
    elif value is None:
        out.append("null")
    elif kind is dict:
        out.append("{}")
    elif kind is list:
        out.append("[]")
    else:
        raise _Hard
    out.append("\n")


def _float_text(value: float) -> str:
    """A finite float as PyYAML's SafeRepresenter writes it (`repr`, lower case, `1e+20` as `1.0e+20`),
    plain where that reads back as a float (which YAML 1.1's float pattern does not promise)."""
    text = repr(value).lower()
    if "." not in text and "e" in text:
        text = text.replace("e", ".0e", 1)
    if yaml11_tag(text) != _FLOAT:
        raise _Hard  # inf, nan, or a text YAML 1.1 would read as something else
    return text


def _scalar_text(text: str) -> str:
    """A one-line string: plain, or single-quoted where libyaml would quote it so."""
    if len(text) + text.count("'") > _MAX_WIDTH:
        raise _Hard
    if _SIMPLE.match(text):
        plain = True
    else:
        plain = _plain_allowed(text)
    if plain and not ambiguous(text) and yaml11_tag(text) == _STR and not _timestamp_like(text):
        return text
    return "'" + text.replace("'", "''") + "'"


def _timestamp_like(text: str) -> bool:
    """PyYAML's dumper resolves YAML 1.1 timestamps (mpigen's reader does not): those are quoted."""
    return text[:1].isdigit() and _TIMESTAMP.match(text) is not None


def _printable(text: str) -> bool:
    """libyaml's printable characters (U+000A, U+0020..U+007E, U+00A0..U+D7FF, U+E000..U+FFFD but
    U+FEFF), within those Python calls printable; others make libyaml double-quote the string."""
    return text.isprintable() and (text.isascii() or max(text) <= "\ufffd")


def _plain_allowed(text: str) -> bool:
    """libyaml's block_plain_allowed for a one-line string; a string it would double-quote is hard."""
    if not _printable(text):
        raise _Hard
    if not text or text[0] == " " or text[-1] == " " or text[:3] in ("---", "..."):
        return False
    first = text[0]
    followed_by_space = len(text) == 1 or text[1] == " "
    if first in _FIRST_INDICATORS or (first in "?:-" and followed_by_space):
        return False
    return not (": " in text or text[-1] == ":" or " #" in text)


def _literal(text: str, indent: int) -> str:
    """A string over lines as a literal block scalar (`|` or `|-`), its lines indented by `indent`."""
    if (
        text[0] in " \n"
        or text.endswith("\n\n")
        or " \n" in text
        or text[-1] == " "
        or not _printable(text.replace("\n", " "))
    ):
        raise _Hard  # an indentation hint, `|+`, or a style libyaml would not choose
    pad = " " * indent
    lines = text.split("\n")
    if lines[-1] == "":
        header = "|\n"
        lines.pop()
    else:
        header = "|-\n"
    return header + "".join(f"{pad}{line}\n" if line else "\n" for line in lines)
