"""The annotations the server reads on a pod template besides AppArmor's (mpigen.checks.pod.apparmor) and
seccomp's (mpigen.checks.pod.seccomp): Kubernetes 1.37 pkg/apis/core/validation ValidatePodSpecificAnnotations,
which ValidatePodTemplateSpec calls for every workload's template as ValidatePodCreate does for a pod.

- `scheduler.alpha.kubernetes.io/tolerations`, unless empty: a JSON list of tolerations, decoded as Go's
  encoding/json decodes it into the internal `[]core.Toleration` (field names matched without regard to
  case, unknown ones ignored, a value of the wrong type refused), each then checked as `spec.tolerations`
  are (ValidateTolerationsInPodAnnotations, ValidateTolerations);
- `controller.kubernetes.io/pod-deletion-cost`: a 32-bit integer written without `+` or leading zeros
  (helper.GetDeletionCostFromPodAnnotations; PodDeletionCost is on by default from 1.22);
- `kubernetes.io/config.mirror`: only with `spec.nodeName`.

The server's words for a list it cannot decode are Go's JSON error; mpigen's say what is wrong in its
own words (the path, and the verdict, are the server's)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from mpigen.checks.pod.field import Key, Violation, invalid
from mpigen.checks.pod.scheduling import toleration
from mpigen.checks.pod.view import Pod, mapping, text

TOLERATIONS = "scheduler.alpha.kubernetes.io/tolerations"
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
MIRROR = "kubernetes.io/config.mirror"
_INT32 = r"-[0-9]+|0|[1-9][0-9]*"
_INT = r"-?[0-9]+"
_INT64 = -(2**63)
# The internal core.Toleration's string fields (no JSON tags: Go's names, matched in upper case).
_FIELDS = {"KEY": "Key", "OPERATOR": "Operator", "VALUE": "Value", "EFFECT": "Effect"}
_SECONDS = "TolerationSeconds"


def pod_annotations(pod: Pod) -> Iterator[Violation]:
    found = mapping(pod.meta.get("annotations"))
    at = (*pod.at, "annotations")
    if MIRROR in found and not text(pod.spec.get("nodeName")):
        yield invalid(
            (*at, Key(MIRROR)), text(found[MIRROR]), "must set spec.nodeName if mirror pod annotation is set"
        )
    listed = text(found.get(TOLERATIONS))
    if listed:
        decoded = _tolerations(listed)
        if isinstance(decoded, str):
            yield invalid(at, TOLERATIONS, decoded)
        else:
            for index, item in enumerate(decoded):
                yield from toleration(item, (*at, TOLERATIONS, index))
    if DELETION_COST in found:
        cost = text(found[DELETION_COST])
        if not re.fullmatch(_INT32, cost) or not -(2**31) <= int(cost) < 2**31:
            yield invalid((*at, Key(DELETION_COST)), cost, "must be a 32bit integer")


# Python's syntax errors and what Go's scanner says at the same character.
_SYNTAX = (
    ("Expecting value", " looking for beginning of value"),
    ("Extra data", " after top-level value"),
    ("Expecting property name", " looking for beginning of object key string"),
    ("Expecting ':'", " after object key"),
    ("Invalid control character", " in string literal"),
)


class _Number(str):
    """A JSON number as written (Go decodes the literal itself into the field's type)."""

    __slots__ = ()


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"invalid character {name[0]!r} looking for beginning of value")


def _tolerations(listed: str) -> list[dict[str, Any]] | str:
    """The tolerations as Go decodes them into []core.Toleration (a toleration as a mapping of the pod
    spec's field names), or why they cannot be."""
    try:
        value = json.loads(listed, parse_float=_Number, parse_int=_Number, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(listed.rstrip()):
            return "unexpected end of JSON input"
        where = next((go for python, go in _SYNTAX if exc.msg.startswith(python)), "")
        return f"invalid character {listed[exc.pos]!r}{where}"
    except ValueError as exc:
        return str(exc)
    if value is None:
        return []
    if not isinstance(value, list):
        return f"json: cannot unmarshal {_kind(value)} into Go value of type []core.Toleration"
    decoded = []
    for item in value:
        if item is not None and not isinstance(item, dict):
            return f"json: cannot unmarshal {_kind(item)} into Go value of type core.Toleration"
        fields = _toleration(item or {})
        if isinstance(fields, str):
            return fields
        decoded.append(fields)
    return decoded


def _toleration(item: dict[str, Any]) -> dict[str, Any] | str:
    fields: dict[str, Any] = {}
    for key, value in item.items():  # a later key of the same field wins, as in Go
        folded = key.lower().upper()
        if folded in _FIELDS:
            name = _FIELDS[folded]
            if value is None:
                continue
            if not isinstance(value, str) or isinstance(value, _Number):
                return _type_error("number" if isinstance(value, _Number) else _kind(value), name, "string")
            fields[name[0].lower() + name[1:]] = value
        elif folded == _SECONDS.upper():
            if value is None:
                continue
            if (
                not isinstance(value, _Number)
                or not re.fullmatch(_INT, value)
                or not _INT64 <= int(value) < -_INT64
            ):
                return _type_error(_kind(value), _SECONDS, "int64")
            fields["tolerationSeconds"] = int(value)
    return fields


def _type_error(kind: str, field: str, go_type: str) -> str:
    return f"json: cannot unmarshal {kind} into Go struct field Toleration.{field} of type {go_type}"


def _kind(value: object) -> str:
    """How Go's UnmarshalTypeError names a JSON value."""
    if isinstance(value, _Number):
        return f"number {value}"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    return "array" if isinstance(value, list) else "object"
