"""Names and their duplicates: containers (regular and init together) and volumes
(Kubernetes 1.37 pkg/apis/core/validation: validateContainerCommon, validateContainers,
validateInitContainers, ValidateVolumes)."""

from __future__ import annotations

from collections.abc import Iterator

from mpigen.checks.pod import formats
from mpigen.checks.pod.field import Violation, duplicate, invalid, required
from mpigen.checks.pod.view import Pod, mappings, text


def container_names(pod: Pod) -> Iterator[Violation]:
    seen: set[str] = set()
    for field in ("containers", "initContainers"):
        for index, container in enumerate(mappings(pod.spec.get(field))):
            if container is None:
                continue
            name, where = text(container.get("name")), pod.path(field, index, "name")
            if not name:
                yield required(where)
            else:
                yield from (invalid(where, name, msg) for msg in formats.dns1123_label(name))
            if name in seen and (name or field == "containers"):
                yield duplicate(where, name)
            seen.add(name)


def volume_names(pod: Pod) -> Iterator[Violation]:
    seen: set[str] = set()
    for index, volume in enumerate(mappings(pod.spec.get("volumes"))):
        if volume is None:
            continue
        name, where = text(volume.get("name")), pod.path("volumes", index, "name")
        if not name:
            yield required(where)
        else:
            yield from (invalid(where, name, msg) for msg in formats.dns1123_label(name))
        if name in seen:
            yield duplicate(where, name)
        seen.add(name)
