"""The pod template's labels and annotations (Kubernetes 1.37 pkg/apis/core/validation:
ValidatePodTemplateSpec; apimachinery ValidateLabels, ValidateAnnotations: keys are qualified names,
annotation keys compared in lower case, all annotations together at most 256 KiB). The server names
these fields `template.labels` and `template.annotations` (ObjectMeta is embedded), and so do these."""

from __future__ import annotations

from collections.abc import Iterator

from mpigen.checks.pod import formats
from mpigen.checks.pod.field import Path, Violation, invalid, too_long
from mpigen.checks.pod.scheduling import labels
from mpigen.checks.pod.view import Pod, mapping

ANNOTATIONS_MAX_BYTES = 256 * 1024


def template_labels(pod: Pod) -> Iterator[Violation]:
    yield from labels(pod.meta.get("labels"), (*pod.at, "labels"))


def template_annotations(pod: Pod) -> Iterator[Violation]:
    yield from annotation_map(pod.meta.get("annotations"), (*pod.at, "annotations"))


def annotation_map(values: object, at: Path) -> Iterator[Violation]:
    """ValidateAnnotations; errors name the map."""
    found = mapping(values)
    for key in found:
        yield from (invalid(at, key, msg) for msg in formats.qualified_name(str(key).lower()))
    size = sum(len(str(k).encode()) + len(str(v).encode()) for k, v in found.items())
    if size > ANNOTATIONS_MAX_BYTES:
        yield too_long(at, ANNOTATIONS_MAX_BYTES)
