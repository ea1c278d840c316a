"""The pod template's labels and annotations (Kubernetes 1.37 pkg/apis/core/validation:
ValidatePodTemplateSpec; apimachinery ValidateLabels, ValidateLabelSelector, ValidateAnnotations: keys are qualified names,
annotation keys compared in lower case, all annotations together at most 256 KiB). The server names
these fields `template.labels` and `template.annotations` (ObjectMeta is embedded), and so do these."""

from __future__ import annotations

from collections.abc import Iterator

from mpigen.checks.pod import formats
from mpigen.checks.pod.field import Path, Violation, forbidden, invalid, required, too_long
from mpigen.checks.pod.view import Pod, mapping, mappings, text

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


def labels(values: object, at: Path) -> Iterator[Violation]:
    """ValidateLabels: every key a qualified name, every value a label value; errors name the map."""
    for key, value in mapping(values).items():
        yield from (invalid(at, key, msg) for msg in formats.qualified_name(str(key)))
        if isinstance(value, str):
            yield from (invalid(at, value, msg) for msg in formats.label_value(value))


SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def label_selector(selector: object, at: Path) -> Iterator[Violation]:
    """ValidateLabelSelector, invalid label values refused (as on every create)."""
    if not isinstance(selector, dict):
        return
    yield from labels(selector.get("matchLabels"), (*at, "matchLabels"))
    for index, rq in enumerate(mappings(selector.get("matchExpressions"))):
        where = (*at, "matchExpressions", index)
        rq = rq or {}
        operator, values = text(rq.get("operator")), rq.get("values") or []
        if operator in ("In", "NotIn"):
            if not values:
                yield required((*where, "values"), "must be specified when `operator` is 'In' or 'NotIn'")
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                yield forbidden(
                    (*where, "values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
                )
        else:
            yield invalid((*where, "operator"), operator, "not a valid selector operator")
        key = text(rq.get("key"))
        yield from (invalid((*where, "key"), key, msg) for msg in formats.qualified_name(key))
        for j, value in enumerate(values if isinstance(values, list) else []):
            if isinstance(value, str):
                yield from (invalid((*where, "values", j), value, msg) for msg in formats.label_value(value))
