"""Kubernetes resource quantities (`4`, `"1500m"`, `"2Gi"`, `"1e3"`) read as exact numbers, and written
as apimachinery's `resource.Quantity` writes them.

v1alpha1 `replicas` sizing reads units per worker from the processing resource's limit, as
`resource.Quantity.AsInt64` does in mpi-operator v0.2.0. A PodGroup's `minResources` (v0.8.2
`calPGMinResource`) is a sum of products of quantities, serialised in Go's canonical form: each value
keeps the format of the quantity it started from (`Mul` keeps it; `Add` keeps the left operand's unless
that is zero), and `String()` writes the shortest exact mantissa with a suffix: `1536Mi`, `21`, `500m`, `12k`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fractions import Fraction

_QUANTITY = re.compile(r"(?P<num>[+-]?(?:\d+\.?\d*|\.\d+))(?P<suffix>[a-zA-Z]*|[eE][+-]?\d+)\Z")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}  # powers of 10


def parse_quantity(value: object) -> Fraction | None:
    """The exact value of a quantity, or None when it is not one."""
    # deferred: fractions (and the decimal it imports) only for a quantity to add or compare: a v1alpha1
    # job's whole number of units (`whole_units`) needs neither
    from fractions import Fraction

    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(value)
    if not isinstance(value, str):
        return None
    match = _QUANTITY.match(value.strip())
    if not match:
        return None
    number = Fraction(match["num"])
    suffix = match["suffix"]
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix in _DECIMAL:
        return number * Fraction(10) ** _DECIMAL[suffix]
    if suffix[:1] in ("e", "E"):
        exponent = int(suffix[1:])
        if abs(exponent) > 30:
            return None
        return number * Fraction(10) ** exponent
    return None


def whole_units(value: object) -> int | None:
    """The quantity as a whole number of units, or None if it is fractional or not a quantity."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    digits = value.strip() if isinstance(value, str) else ""
    if digits.isascii() and digits.isdigit():  # ASCII digits only: "٣".isdigit() too
        return int(digits)
    quantity = parse_quantity(value)
    if quantity is None or quantity.denominator != 1:
        return None
    return int(quantity)


BINARY_SI, DECIMAL_SI, DECIMAL_EXPONENT = "BinarySI", "DecimalSI", "DecimalExponent"
_DECIMAL_SUFFIX = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIX = {0: "", 1: "Ki", 2: "Mi", 3: "Gi", 4: "Ti", 5: "Pi", 6: "Ei"}


def quantity_format(value: object) -> str:
    """The format Go's ParseQuantity records: by the suffix (`Ki`.. binary, `e3` exponent, else decimal)."""
    if isinstance(value, str):
        match = _QUANTITY.match(value.strip())
        suffix = match["suffix"] if match else ""
        if suffix in _BINARY:
            return BINARY_SI
        if suffix[:1] in ("e", "E") and suffix[1:]:
            return DECIMAL_EXPONENT
    return DECIMAL_SI


def _decimal(value: Fraction, fmt: str) -> str:
    # Go rounds values below its smallest scale up to nano units.
    scaled = value * 10**9
    mantissa = -((-scaled.numerator) // scaled.denominator)
    exponent = -9
    while mantissa and mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    while exponent % 3:
        mantissa *= 10
        exponent -= 1
    if fmt == DECIMAL_SI and exponent in _DECIMAL_SUFFIX:
        return f"{mantissa}{_DECIMAL_SUFFIX[exponent]}"
    return f"{mantissa}e{exponent}" if exponent else str(mantissa)


def format_quantity(value: Fraction, fmt: str) -> str:
    """`value` as Go's `Quantity.String()` writes it in format `fmt` (CanonicalizeBytes)."""
    if value == 0:
        return "0"
    if fmt == BINARY_SI and abs(value) >= 1024 and value.denominator == 1:
        number, power = int(value), 0
        while number % 1024 == 0 and power < 6:
            number //= 1024
            power += 1
        return f"{number}{_BINARY_SUFFIX[power]}"
    return _decimal(value, DECIMAL_EXPONENT if fmt == DECIMAL_EXPONENT else DECIMAL_SI)


def canonical_quantity(value: object) -> str:
    """A quantity as the API server stores it (what the operator's copy of a ResourceList shows)."""
    parsed = parse_quantity(value)
    if parsed is None:
        raise ValueError(f"not a quantity: {value!r}")
    return format_quantity(parsed, quantity_format(value))


class QuantitySum:
    """Sums of quantities per resource name, with Go's format rules for `Mul` and `Add`."""

    def __init__(self) -> None:
        self.totals: dict[str, tuple[Fraction, str]] = {}

    def add(self, name: str, quantity: object, times: int) -> None:
        parsed = parse_quantity(quantity)
        if parsed is None:
            return
        value, fmt = parsed * times, quantity_format(quantity)
        if name in self.totals:
            total, total_fmt = self.totals[name]
            value, fmt = total + value, (fmt if total == 0 else total_fmt)
        self.totals[name] = (value, fmt)

    def result(self) -> dict[str, str]:
        return {name: format_quantity(value, fmt) for name, (value, fmt) in sorted(self.totals.items())}
