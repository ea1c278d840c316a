"""One key order for every object a target builds (shared by the targets).

`canonical` gives every generated object the same key order, so output is stable whatever order the
input used: `apiVersion, kind, metadata` at the top, `name` (and in metadata `namespace`) first in
every mapping, everything else sorted as `kubectl get -o yaml` sorts it. List order is never changed:
containers, env and command order mean something.
"""

from __future__ import annotations

from typing import Any

_TOP = {"apiVersion": 0, "kind": 1, "metadata": 2}
_INNER = {"name": 0, "namespace": 1}


def _ordered(value: dict[str, Any], rank: dict[str, int]) -> list[str]:
    return sorted(value, key=lambda key: (rank.get(key, len(rank)), key))


def _inner_order(value: dict[str, Any]) -> list[str]:
    """`_ordered(value, _INNER)`, without a key function for every key (most mappings have neither)."""
    keys = sorted(value)
    if "name" not in value and "namespace" not in value:
        return keys
    return [key for key in _INNER if key in value] + [key for key in keys if key not in _INNER]


def _canonical(value: Any) -> Any:
    if isinstance(value, dict):
        return _mapping(value, _inner_order(value))
    if isinstance(value, list):
        return _sequence(value)
    return value


# The two below look at an item's type before recursing: most items are strings and numbers, and a
# call for each of them was most of the time spent building many jobs.
def _mapping(value: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    out = {}
    for key in keys:
        item = value[key]
        if isinstance(item, dict):
            item = _mapping(item, _inner_order(item))
        elif isinstance(item, list):
            item = _sequence(item)
        out[key] = item
    return out


def _sequence(value: list[Any]) -> list[Any]:
    return [_canonical(item) if isinstance(item, dict | list) else item for item in value]


def canonical(obj: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of a Kubernetes object in mpigen's fixed key order."""
    return _mapping(obj, _ordered(obj, _TOP))
