"""YAML scalars as Kubernetes reads them: `kubectl` reads YAML with sigs.k8s.io/yaml (go-yaml v2), then sends
JSON. Pure.

`resolve_plain(text)` is the tag go-yaml v2 gives a plain scalar (resolve.go: the words it looks up, Go's
`strconv.ParseInt`/`ParseUint` with base prefixes after removing every `_`, its float pattern), which is not
PyYAML's YAML 1.1: `12:30` is a string (no base 60), `0o17`, `0X1F`, `08`, `1e3`, `+.5`, `1.e3` are
numbers, `y`, `n`, `Y`, `N` are booleans. `construct(tag, text)` turns a scalar of a core tag into the value
the API server receives, or raises ValueError with the message to show where kubectl's reading is unsafe:
integers outside int64 (kubectl sends them as inexact floats, or as uint64 no Kubernetes field holds),
numbers JSON cannot carry (`.nan`, `.inf`: kubectl fails) or too large for a float64 (`1e999`, which
kubectl quietly sends as the string "1e999"). A float with an integral value in int64 is the integer it is
(kubectl's JSON writes `1.0` as `1`, which the API server reads as an integer). Any tag but the core ones
is refused. `yaml11_tag(text)` is PyYAML's YAML 1.1 reading, which the writer also quotes against.
`tests/unit/yaml/test_goyaml.py` holds `resolve_plain` and `construct` to the real sigs.k8s.io/yaml.
"""

from __future__ import annotations

import math
import re

from mpigen.errors import shown

TAG = "tag:yaml.org,2002:"
CORE = " (Kubernetes reads the core tags only: !!str, !!int, !!float, !!bool, !!null, !!map, !!seq)"
_INT64 = (-(2**63), 2**63 - 1)
_STR, _INT, _FLOAT, _BOOL, _NULL, _MERGE = (
    TAG + name for name in ("str", "int", "float", "bool", "null", "merge")
)

# go-yaml v2 resolve.go: the words it looks up, for a plain scalar whose first character may start one.
_WORDS: dict[str, tuple[str, object]] = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), (_BOOL, True)),
    **dict.fromkeys(
        ("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), (_BOOL, False)
    ),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), (_NULL, None)),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), (_FLOAT, math.nan)),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), (_FLOAT, math.inf)),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), (_FLOAT, -math.inf)),
}
_LOOKED_UP = frozenset(
    "yYnNtTfFoO~+-.0123456789"
)  # go-yaml's resolveTable: no other first character resolves
_NUMBER_START = frozenset("+-.0123456789")
# Go's strconv.ParseInt(text, 0, 64) / ParseUint syntax once `_` is gone: a sign (ParseInt only), a base prefix.
_GO_INT = re.compile(r"([-+]?)(0[bB][01]+|0[oO][0-7]+|0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)\Z")
_GO_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")  # go-yaml's yamlStyleFloat
# What Go's ParseFloat takes of a text that starts with `.`: underscores only between digits (underscoreOK).
_DOT_FLOAT = r"\.[0-9_]+([eE][-+]?[0-9_]+)?\Z"
_MISPLACED_UNDERSCORE = r"(?<![0-9])_|_(?![0-9])"
_DIGITS = r"[-+]?[0-9]+\Z"
_BASES = {"b": 2, "B": 2, "o": 8, "O": 8, "x": 16, "X": 16}
_MAX_DIGITS = 72  # beyond any 64-bit integer in any base: such a text is never handed to `int()`


def resolve_plain(text: str) -> str:
    """The tag go-yaml v2 gives a plain (unquoted, untagged) scalar; `<<` is the merge tag (a merge key
    only in key position, which the caller decides)."""
    if text == "<<":
        return _MERGE
    return _read(text)[0]


def _read(text: str) -> tuple[str, object]:
    """go-yaml v2's tag and value of a plain scalar (the value a Python int or float, or the text)."""
    first = text[:1]
    if first and first not in _LOOKED_UP:
        return _STR, text
    found = _WORDS.get(text)
    if found is not None:
        return found
    if first not in _NUMBER_START:
        return _STR, text
    if first == ".":  # Go's ParseFloat on the text as written
        if re.match(_DOT_FLOAT, text) and not re.search(_MISPLACED_UNDERSCORE, text):
            return _float(text.replace("_", ""))
        return _STR, text
    plain = text.replace("_", "")
    match = _GO_INT.match(plain)
    if match and len(plain) <= _MAX_DIGITS:
        sign, digits = match.groups()
        base = _BASES.get(digits[1:2], 8 if digits[:1] == "0" and len(digits) > 1 else 10)
        number = int(digits[2:] if base != 10 and digits[1:2] in _BASES else digits, base)
        return _INT, -number if sign == "-" else number
    if _GO_FLOAT.match(plain):
        return _float(plain)
    return _STR, text


def _float(text: str) -> tuple[str, object]:
    number = float(text)
    return (_FLOAT, number) if math.isfinite(number) else (_FLOAT, math.inf)


# YAML 1.1's implicit types of a plain scalar, as PyYAML's SafeLoader resolves them, but for timestamps.
_BOOL_WORDS = frozenset(
    (
        "yes",
        "Yes",
        "YES",
        "no",
        "No",
        "NO",
        "true",
        "True",
        "TRUE",
        "false",
        "False",
        "FALSE",
        "on",
        "On",
        "ON",
        "off",
        "Off",
        "OFF",
    )
)
_NULL_WORDS = frozenset(("~", "null", "Null", "NULL"))
_YAML11_FLOAT = re.compile(
    r"""[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?$
    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?$
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*$
    |[-+]?\.(?:inf|Inf|INF)$
    |\.(?:nan|NaN|NAN)$""",
    re.VERBOSE,
)
_YAML11_INT = re.compile(
    r"""[-+]?0b[0-1_]+$
    |[-+]?0[0-7_]+$
    |[-+]?(?:0|[1-9][0-9_]*)$
    |[-+]?0x[0-9a-fA-F_]+$
    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+$""",
    re.VERBOSE,
)


def yaml11_tag(text: str) -> str:
    """The tag PyYAML's YAML 1.1 resolver gives a plain scalar (timestamps aside): the writer quotes what
    it would misread too."""
    if not text:
        return TAG + "null"
    # PyYAML matches with `$`, which also matches before a final line break (a plain scalar has none)
    word = text[:-1] if text[-1] == "\n" and len(text) > 1 else text
    first = text[0]
    if first in _NUMBER_START:
        if _YAML11_FLOAT.match(text):
            return TAG + "float"
        if _YAML11_INT.match(text):
            return TAG + "int"
    elif word in _NULL_WORDS and first in "~nN":
        return TAG + "null"
    elif word in _BOOL_WORDS:
        return TAG + "bool"
    elif word == "<<":
        return TAG + "merge"
    elif word == "=":
        return TAG + "value"
    return TAG + "str"


def tag_name(tag: str) -> str:
    return shown("!!" + tag.removeprefix(TAG) if tag.startswith(TAG) else tag)


_NOUNS = {_INT: "an integer", _FLOAT: "a number", _BOOL: "a boolean", _NULL: "null"}


def construct(tag: str, text: str, explicit: bool = False) -> object:
    """The value the API server receives for a scalar whose tag is `tag` (resolved, or `explicit` as
    written: go-yaml reads the text as a plain scalar and takes it only if that gives the tag, or an
    integer for !!float)."""
    if tag in (_STR, TAG + "value"):
        return text
    if tag not in _NOUNS:
        raise ValueError(f"tag {tag_name(tag)} is not supported{CORE}")
    found, value = _read(text)
    if found == _INT:
        if not _INT64[0] <= value <= _INT64[1]:  # type: ignore[operator]
            raise ValueError(f"{shown(text)} is outside the 64-bit integers Kubernetes reads")
    elif found == _FLOAT:
        value = _number(text, value)  # type: ignore[arg-type]
    if found == tag or (tag == _FLOAT and found == _INT):
        return value
    raise ValueError(f"{shown(text)} is not {_NOUNS[tag]}")


def _number(text: str, number: float) -> float | int:
    if math.isnan(number) or (math.isinf(number) and text.lstrip("+-")[:1] == "."):
        raise ValueError(f"{shown(text)} is not a number JSON or Kubernetes can carry")
    digits = text.replace("_", "")
    if re.match(_DIGITS, digits):  # a decimal integer go-yaml read as a float (`08`, or too long for int64)
        exact = int(digits) if len(digits) <= _MAX_DIGITS else None
        if exact is None or not _INT64[0] <= exact <= _INT64[1] or float(exact) != exact:
            raise ValueError(f"{shown(text)} is outside the 64-bit integers Kubernetes reads")
        return exact
    if math.isinf(number):
        raise ValueError(
            f"{shown(text)} is too large for a number (kubectl would send the string {shown(text)}; quote it if that is meant)"
        )
    if number.is_integer() and _INT64[0] <= number <= _INT64[1]:
        return int(number)  # what the API server reads of kubectl's JSON for it
    return number
