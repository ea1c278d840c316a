"""A field error as the API server words it (k8s.io/apimachinery `pkg/util/validation/field`, v0.37):
`spec.template.spec.containers[0].name: Invalid value: "a_b": <detail>`. Pure data."""

from __future__ import annotations

import json
from collections.abc import Iterable

Path = tuple[str | int, ...]


class Key(str):
    """A map key in a path that no field name announces (field.Path.Key: `resources[storage]`,
    `options[kubernetes.io/x]`, `template.annotations[container.apparmor.security.beta.kubernetes.io/main]`);
    server_path writes it in brackets."""

    __slots__ = ()


class Violation:
    """One refusal: where (a path inside the object, as the server walks it), and the server's words
    (`Invalid value: "a_b": ...`, `Required value`, `Unsupported value: ...`). A plain slotted class:
    a NamedTuple's creation would cost a fifth of a millisecond of every render's start-up."""

    __slots__ = ("body", "path")

    def __init__(self, path: Path, body: str) -> None:
        self.path = path
        self.body = body

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Violation) and (self.path, self.body) == (other.path, other.body)

    def __hash__(self) -> int:
        return hash((self.path, self.body))

    def __repr__(self) -> str:
        return f"Violation({self.path!r}, {self.body!r})"


def server_path(path: Path) -> str:
    """`spec.containers[0].resources.limits[nvidia.com/gpu]` (field.Path: an index or a map key in brackets)."""
    out = ""
    keyed = False
    for part in path:
        if isinstance(part, int | Key) or keyed:
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
        keyed = part in _MAPS
    return out


# Fields whose children are map keys, not field names (the server writes them as `[key]`).
_MAPS = frozenset({"limits", "requests", "nodeSelector", "overhead"})


def go_value(value: object) -> str:
    """A value as field.Invalid prints it: strings quoted, numbers and booleans bare."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def invalid(path: Path, value: object, detail: str) -> Violation:
    return Violation(path, f"Invalid value: {go_value(value)}: {detail}")


def required(path: Path, detail: str = "") -> Violation:
    return Violation(path, f"Required value: {detail}" if detail else "Required value")


def not_supported(path: Path, value: object, choices: Iterable[str]) -> Violation:
    listed = ", ".join(json.dumps(c) for c in choices)
    return Violation(path, f"Unsupported value: {go_value(value)}: supported values: {listed}")


def duplicate(path: Path, value: object) -> Violation:
    return Violation(path, f"Duplicate value: {go_value(value)}")


def not_found(path: Path, value: object) -> Violation:
    return Violation(path, f"Not found: {go_value(value)}")


def forbidden(path: Path, detail: str) -> Violation:
    return Violation(path, f"Forbidden: {detail}")


def too_long(path: Path, limit: int) -> Violation:
    return Violation(path, f"Too long: may not be more than {limit} bytes")


def too_many(path: Path, count: int, limit: int) -> Violation:
    return Violation(path, f"Too many: {count}: must have at most {limit} items")
