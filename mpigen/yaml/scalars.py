"""YAML scalars as Kubernetes reads them (sigs.k8s.io/yaml: YAML 1.1, values JSON can carry). Pure.

`construct(tag, text)` turns a scalar of a core tag into its value, or raises ValueError with the
message to show. Integers are 64-bit (longer digit strings are never handed to `int()`, which would
refuse past 4,300 digits or take seconds); numbers JSON cannot carry (`.nan`, `.inf`, `1.0e+999`) are
refused; any tag but the core ones is refused.
"""

from __future__ import annotations

import math
import re

from mpigen.errors import shown

TAG = "tag:yaml.org,2002:"
CORE = " (Kubernetes reads the core tags only: !!str, !!int, !!float, !!bool, !!null, !!map, !!seq)"
_INT64 = (-(2**63), 2**63 - 1)
_BOOLS = {"yes": True, "no": False, "true": True, "false": False, "on": True, "off": False, "y": True, "n": False}
_NULLS = ("", "~", "null", "Null", "NULL")


# YAML 1.1's implicit types of a plain scalar, as PyYAML's SafeLoader resolves them (Kubernetes' reader,
# go-yaml v2, agrees on every value it can carry), but for timestamps, which Kubernetes reads as strings.
_BOOL_WORDS = frozenset(("yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF"))
_NUMBER_START = frozenset("0123456789+-.")
_NULL_WORDS = frozenset(("~", "null", "Null", "NULL"))
_FLOAT = re.compile(
    r"""[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?$
    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?$
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*$
    |[-+]?\.(?:inf|Inf|INF)$
    |\.(?:nan|NaN|NAN)$""",
    re.VERBOSE,
)
_INT = re.compile(
    r"""[-+]?0b[0-1_]+$
    |[-+]?0[0-7_]+$
    |[-+]?(?:0|[1-9][0-9_]*)$
    |[-+]?0x[0-9a-fA-F_]+$
    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+$""",
    re.VERBOSE,
)


def resolve_plain(text: str) -> str:
    """The tag of a plain (unquoted, untagged) scalar."""
    if not text:
        return TAG + "null"
    # PyYAML matches with `$`, which also matches before a final line break (a plain scalar has none)
    word = text[:-1] if text[-1] == "\n" and len(text) > 1 else text
    first = text[0]
    if first in _NUMBER_START:
        if _FLOAT.match(text):
            return TAG + "float"
        if _INT.match(text):
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


def construct(tag: str, text: str, explicit: bool = False) -> object:
    """The value of a scalar whose tag is `tag` (resolved, or `explicit` as written)."""
    kind = tag.removeprefix(TAG) if tag.startswith(TAG) else None
    if kind in ("str", "value"):  # `=` (YAML 1.1's value key) is a plain string to Kubernetes
        return text
    if kind == "int":
        return to_int(text)
    if kind == "float":
        return to_float(text)
    if kind == "bool":
        found = _BOOLS.get(text.lower())
        if found is None:
            raise ValueError(f"{shown(text)} is not a boolean")
        return found
    if kind == "null":
        if explicit and text not in _NULLS:
            raise ValueError(f"{shown(text)} is not null")
        return None
    raise ValueError(f"tag {tag_name(tag)} is not supported{CORE}")


def _signed(text: str) -> tuple[int, str]:
    digits = text.replace("_", "")
    if digits[:1] in ("+", "-"):
        return (-1 if digits[0] == "-" else 1), digits[1:]
    return 1, digits


def to_int(text: str) -> int:
    sign, digits = _signed(text)
    if len(digits) > 72:  # beyond any int64 in any base (binary takes 64 digits): never parse it
        raise ValueError(f"{shown(text)} is outside the 64-bit integers Kubernetes reads")
    try:
        if digits[:2] in ("0b", "0x"):
            number = int(digits, 0)
        elif ":" in digits:  # sexagesimal, YAML 1.1: 1:30 is 90
            number = 0
            for part in digits.split(":"):
                number = number * 60 + int(part)
        elif digits[:1] == "0" and len(digits) > 1:  # octal, YAML 1.1: 017 is 15
            number = int(digits, 8)
        else:
            number = int(digits)
    except ValueError:
        raise ValueError(f"{shown(text)} is not an integer") from None
    number *= sign
    if not _INT64[0] <= number <= _INT64[1]:
        raise ValueError(f"{shown(text)} is outside the 64-bit integers Kubernetes reads")
    return number


def to_float(text: str) -> float:
    sign, digits = _signed(text.lower())
    try:
        if ":" in digits:
            number = 0.0
            for part in digits.split(":"):
                number = number * 60 + float(part)
        else:
            number = math.inf if digits in (".inf", ".nan") else float(digits)
    except ValueError:
        raise ValueError(f"{shown(text)} is not a number") from None
    if not math.isfinite(number):
        raise ValueError(f"{shown(text)} is not a number JSON or Kubernetes can carry")
    return sign * number
