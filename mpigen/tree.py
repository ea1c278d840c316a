"""JSON trees (the mappings, lists and scalars a YAML or JSON document reads into): copies. Pure.

`copy.deepcopy` would do, but it keeps a memo of every object it meets and loads `copy` and `weakref`
on every start: a document tree shares nothing and holds nothing but dicts, lists and immutable
scalars, so a plain walk copies it faster and with nothing to import.
"""

from __future__ import annotations

from typing import Any, TypeVar

__all__ = ["copy", "without_nulls"]

T = TypeVar("T")


def copy(value: T) -> T:
    """A copy of a JSON tree: new dicts and lists all the way down, the scalars (immutable) shared."""
    if isinstance(value, dict):
        return {key: copy(item) for key, item in value.items()}  # type: ignore[return-value]
    if isinstance(value, list):
        return [copy(item) for item in value]  # type: ignore[return-value]
    return value


def without_nulls(value: Any) -> Any:
    """A copy of a JSON tree without its `null`s: a mapping's null-valued keys are left out (lists keep
    their items, a null item included)."""
    if isinstance(value, dict):
        return {key: without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [without_nulls(item) for item in value]
    return value
