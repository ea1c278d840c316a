"""The string and number formats of Kubernetes validation, with the API server's messages
(k8s.io/apimachinery v0.37 `pkg/util/validation`, `pkg/api/resource`; Kubernetes 1.37). Each returns
the list of problems, empty when the value is valid.

The patterns of the pod rules are kept as strings and matched with `re.match(pattern, value)`: `re`
compiles each on first use and caches it, so a job compiles only the patterns of the rules it reaches
(compiling all of them at import was a few percent of a one-job render)."""

from __future__ import annotations

import functools
import re
from typing import Self

_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL = f"{_LABEL}\\Z"
_DNS1123_SUBDOMAIN = f"{_LABEL}(\\.{_LABEL})*\\Z"
_LABEL_US = "[a-z0-9_]([-a-z0-9_]*[a-z0-9_])?"
_DNS1123_SUBDOMAIN_US = f"{_LABEL_US}(\\.{_LABEL_US})*\\Z"
_QUALIFIED = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z"
_LABEL_VALUE = r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z"
_PORT_CHARS = r"[-a-z0-9]+\Z"
_HAS_LETTER = r".*[a-z]"
_ENV_NAME = r"[-._a-zA-Z][-._a-zA-Z0-9]*\Z"
_HTTP_HEADER = r"[-A-Za-z0-9]+\Z"

LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character"
)
SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character"
)
INT32_MAX = 2**31 - 1


def max_len(limit: int) -> str:
    return f"must be no more than {limit} characters"


def range_error(low: int, high: int) -> str:
    return f"must be between {low} and {high}, inclusive"


@functools.lru_cache(maxsize=1024)
def dns1123_label(value: str) -> tuple[str, ...]:
    errs = [max_len(63)] if len(value) > 63 else []
    if not re.match(_DNS1123_LABEL, value):
        errs.append("must not contain dots" if re.match(_DNS1123_SUBDOMAIN, value) else LABEL_MSG)
    return tuple(errs)


@functools.lru_cache(maxsize=1024)
def dns1123_subdomain(value: str) -> tuple[str, ...]:
    errs = [max_len(253)] if len(value) > 253 else []
    if not re.match(_DNS1123_SUBDOMAIN, value):
        errs.append(SUBDOMAIN_MSG)
    return tuple(errs)


def dns1123_subdomain_underscore(value: str) -> tuple[str, ...]:
    errs = [max_len(253)] if len(value) > 253 else []
    if not re.match(_DNS1123_SUBDOMAIN_US, value):
        errs.append(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', "
            "and must start and end with an alphanumeric character"
        )
    return tuple(errs)


_QUALIFIED_MSG = (
    "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character with an optional DNS subdomain prefix and '/'"
)
_ENV_MSG = (
    "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must "
    "not start with a digit"
)


@functools.lru_cache(maxsize=4096)
def qualified_name(value: str) -> tuple[str, ...]:
    """`[prefix/]name`: label keys, annotation keys, resource names (IsQualifiedName)."""
    parts = value.split("/")
    if len(parts) > 2:
        return (_QUALIFIED_MSG,)
    errs: list[str] = []
    name = parts[-1]
    if len(parts) == 2:
        if not parts[0]:
            errs.append("prefix part must be non-empty")
        else:
            errs += [f"prefix part {msg}" for msg in dns1123_subdomain(parts[0])]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + max_len(63))
    if name and not re.match(_QUALIFIED, name):
        errs.append(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
            "an alphanumeric character"
        )
    return tuple(errs)


@functools.lru_cache(maxsize=4096)
def label_value(value: str) -> tuple[str, ...]:
    errs = [max_len(63)] if len(value) > 63 else []
    if not re.match(_LABEL_VALUE, value):
        errs.append(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
            "must start and end with an alphanumeric character"
        )
    return tuple(errs)


def port_name(value: str) -> tuple[str, ...]:
    errs = [max_len(15)] if len(value) > 15 else []
    if not re.match(_PORT_CHARS, value):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.match(_HAS_LETTER, value):
        errs.append("must contain at least one letter (a-z)")
    if "--" in value:
        errs.append("must not contain consecutive hyphens")
    if value[:1] == "-" or value[-1:] == "-":
        errs.append("must not begin or end with a hyphen")
    return tuple(errs)


def port_number(value: int) -> tuple[str, ...]:
    return () if 1 <= value <= 65535 else (range_error(1, 65535),)


_NOT_RELAXED_ENV = r"[^ -<>-~]"  # anything but printable ASCII other than "="


@functools.lru_cache(maxsize=1024)
def env_name(value: str, relaxed: bool) -> tuple[str, ...]:
    """IsRelaxedEnvVarName (RelaxedEnvironmentVariableValidation: on by default from Kubernetes 1.32),
    else IsEnvVarName."""
    if relaxed:
        if re.search(_NOT_RELAXED_ENV, value):
            return (
                "a valid environment variable name must consist only of printable ASCII characters other than '='",
            )
        return ()
    return (() if re.match(_ENV_NAME, value) else (_ENV_MSG,)) + chdir_prefix(value)


_CONFIG_KEY = r"[-._a-zA-Z0-9]+\Z"


def config_map_key(value: str) -> tuple[str, ...]:
    errs = [max_len(253)] if len(value) > 253 else []
    if not re.match(_CONFIG_KEY, value):
        errs.append("a valid config key must consist of alphanumeric characters, '-', '_' or '.'")
    return tuple(errs) + chdir_prefix(value)


def chdir_prefix(value: str) -> tuple[str, ...]:
    if value in (".", ".."):
        return (f"must not be '{value}'",)
    return ("must not start with '..'",) if value.startswith("..") else ()


def http_header_name(value: str) -> tuple[str, ...]:
    return (
        ()
        if re.match(_HTTP_HEADER, value)
        else ("a valid HTTP header must consist of alphanumeric characters or '-'",)
    )


def ip_address(value: str) -> tuple[str, ...]:
    """IsValidIPForLegacyField without a legacy allowance: a plain IPv4 or IPv6 address."""
    import ipaddress  # deferred: only for templates with dnsConfig or hostAliases: not on every job's path

    try:
        ipaddress.ip_address(value)
    except ValueError:
        return ("must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",)
    if "." in value and any(len(o) > 1 and o[0] == "0" for o in value.split(".")):
        return ("must not have leading 0s",)
    return ()


# resource.Quantity (apimachinery v0.37 pkg/api/resource/quantity.go: parseQuantityString, suffixer).
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_GO_QUANTITY = r"[+-]?[0-9]*(\.[0-9]*)?(?P<suffix>[eEinumkKMGTP]*[-+]?[0-9]*)\Z"
QUANTITY_MSG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


class Exact(tuple[int, int]):
    """A quantity's exact value as (numerator, denominator > 0): what `resource.Quantity` holds, with
    integers only (fractions.Fraction would cost its import, and decimal's, on every render)."""

    __slots__ = ()

    def __new__(cls, numerator: int, denominator: int = 1) -> Self:
        return super().__new__(cls, (numerator, denominator))

    def __lt__(self, other: tuple[int, ...]) -> bool:
        return self[0] * other[1] < other[0] * self[1]

    def __gt__(self, other: tuple[int, ...]) -> bool:
        return self[0] * other[1] > other[0] * self[1]

    def same(self, other: Exact) -> bool:
        return self[0] * other[1] == other[0] * self[1]

    def ceil(self) -> int:
        """Quantity.Value(): rounded up to a whole number."""
        return -(-self[0] // self[1])

    def milli_ceil(self) -> int:
        """Quantity.MilliValue(): thousandths, rounded up."""
        return -(-self[0] * 1000 // self[1])


ZERO = Exact(0)


@functools.lru_cache(maxsize=1024, typed=True)  # typed: True, 1 and 1.0 are different values here
def parse_quantity(value: object) -> Exact | None:
    """The value the API server reads from a quantity (a JSON string or number), None where it refuses one."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    text = value.strip() if isinstance(value, str) else repr(value)
    match = re.match(_GO_QUANTITY, text)
    if not text or not match:
        return None
    suffix = match["suffix"]
    number_text = text[: len(text) - len(suffix)]
    whole, _, fraction = number_text.lstrip("+-").partition(".")
    numerator, denominator = _whole_number(whole + fraction), 10 ** len(fraction)
    numerator = -numerator if number_text.startswith("-") else numerator
    if suffix in _BINARY:
        return Exact(numerator * 2 ** _BINARY[suffix], denominator)
    if suffix in _DECIMAL:
        exponent = _DECIMAL[suffix]
    elif len(suffix) > 1 and suffix[0] in "eE" and re.fullmatch(r"[-+]?[0-9]+", suffix[1:]):
        exponent = _whole_number(suffix[1:].lstrip("+-")) * (-1 if suffix[1] == "-" else 1)
        if abs(exponent) >= 1000:
            return None  # beyond what the server's int64-scaled quantities hold
    else:
        return None
    if exponent >= 0:
        return Exact(numerator * 10**exponent, denominator)
    return Exact(numerator, denominator * 10**-exponent)


def _whole_number(digits: str) -> int:
    """The number ASCII `digits` write, however many: the server reads quantities of any length, and
    Python's int() refuses more than 4,300 digits at a time (sys.get_int_max_str_digits). Long ones
    are read in halves, which keeps a megabyte of digits to about a second."""
    if len(digits) <= 4000:
        return int(digits or "0")
    low = len(digits) // 2
    scale: int = 10**low
    return _whole_number(digits[:-low]) * scale + _whole_number(digits[-low:])


def quantity_text(value: object) -> str:
    """A quantity as the server prints it in a message (its canonical form, close enough: the input)."""
    return value.strip() if isinstance(value, str) else repr(value)


def canonical_quantity(value: object) -> str | None:
    """A quantity as `Quantity.String()` writes it (CanonicalizeBytes), None where the server refuses
    the value: binary suffixes keep a power of 1024 (below 1024, or not whole, written as decimal SI),
    decimal values keep an exponent that is a multiple of 3, written with an SI suffix or `e<n>`."""
    exact = parse_quantity(value)
    if exact is None:
        return None
    numerator, denominator = exact
    if numerator == 0:
        return "0"
    text = value.strip() if isinstance(value, str) else repr(value)
    suffix = re.match(_GO_QUANTITY, text)["suffix"]  # type: ignore[index]  # parse_quantity matched it
    if suffix in _BINARY and abs(numerator) >= 1024 * denominator and numerator % denominator == 0:
        whole, power = numerator // denominator, 0
        while whole % 1024 == 0 and power < 6:
            whole, power = whole // 1024, power + 1
        return f"{whole}{('', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei')[power]}"
    scale = 0  # numerator / denominator == mantissa * 10**scale; the denominator is a power of 10
    while denominator % 10 == 0:
        denominator //= 10
        scale -= 1
    mantissa = numerator
    while mantissa % 10 == 0:
        mantissa //= 10
        scale += 1
    exponent = scale - scale % 3
    mantissa *= 10 ** (scale - exponent)
    named = {v: k for k, v in _DECIMAL.items()}
    exponential = suffix not in _BINARY and suffix not in _DECIMAL
    if exponential or exponent not in named:
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    return f"{mantissa}{named[exponent]}"
