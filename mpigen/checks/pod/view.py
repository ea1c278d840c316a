"""The pod template being checked, as every check sees it: its spec and metadata, where it sits in its
object, and the Kubernetes version whose rules apply. Pure."""

from __future__ import annotations

from typing import Any

from mpigen.checks.pod.field import Path

CONTAINER_LISTS = ("containers", "initContainers")


class Pod:
    """One pod template: its spec and metadata, its path inside its object (e.g. ("spec", "template")),
    and the Kubernetes version whose rules apply."""

    __slots__ = ("_containers", "at", "memo", "meta", "spec", "version")

    def __init__(
        self, spec: dict[str, Any], meta: dict[str, Any], at: Path, version: tuple[int, int]
    ) -> None:
        self.spec = spec
        self.meta = meta
        self.at = at
        self.version = version
        self._containers: list[tuple[Path, dict[str, Any]]] | None = None
        self.memo: dict[
            str, Any
        ] = {}  # what one check works out and another needs (mpigen.checks.pod.volumes)

    def path(self, *parts: str | int) -> Path:
        """A path under the pod spec: `pod.path("containers", 0)` -> ("spec", "template", "spec", "containers", 0)."""
        return (*self.at, "spec", *parts)

    def containers(self) -> list[tuple[Path, dict[str, Any]]]:
        """Each container mapping with its path, regular containers first (the server's order); listed
        once per template, since most checks walk them."""
        if self._containers is None:
            self._containers = [
                (self.path(field, index), container)
                for field in CONTAINER_LISTS
                for index, container in enumerate(mappings(self.spec.get(field)))
                if container is not None
            ]
        return self._containers


def mappings(value: object) -> list[dict[str, Any] | None]:
    """The items of a list field, None for an item that is not a mapping (the schema check reports it)."""
    if not isinstance(value, list):
        return []
    return [item if isinstance(item, dict) else None for item in value]


def text(value: object) -> str:
    """A string field as Go reads it: a missing or null field is the empty string."""
    return value if isinstance(value, str) else ""


def mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def number(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
