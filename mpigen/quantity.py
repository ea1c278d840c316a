"""Kubernetes resource quantities (`4`, `"1500m"`, `"2Gi"`, `"1e3"`) read as exact numbers.

mpigen only needs to know whether a limit is a whole number of units (v1alpha1 `replicas` sizing reads
units per worker from the processing resource's limit, as `resource.Quantity.AsInt64` does in
mpi-operator v0.2.0).
"""

from __future__ import annotations

import re
from fractions import Fraction

_QUANTITY = re.compile(r"(?P<num>[+-]?(?:\d+\.?\d*|\.\d+))(?P<suffix>[a-zA-Z]*|[eE][+-]?\d+)\Z")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}


def parse_quantity(value: object) -> Fraction | None:
    """The exact value of a quantity, or None when it is not one."""
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
        return number * _DECIMAL[suffix]
    if suffix[:1] in ("e", "E"):
        exponent = int(suffix[1:])
        if abs(exponent) > 30:
            return None
        return number * Fraction(10) ** exponent
    return None


def whole_units(value: object) -> int | None:
    """The quantity as a whole number of units, or None if it is fractional or not a quantity."""
    quantity = parse_quantity(value)
    if quantity is None or quantity.denominator != 1:
        return None
    return int(quantity)
