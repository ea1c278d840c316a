"""Object sizes: every built object must fit what etcd stores and the API server accepts. Pure.

etcd refuses a request over its `--max-request-bytes` (1.5 MiB by default) and the API server a request
body over 3 MiB, so an object larger than 1.5 MiB can never be created. mpigen's own growth (the
hostfile and the Role, one line per worker) is checked on the plan before anything is built
(mpigen.targets.operator.limits); what the user writes into the pod templates (100,000 containers, a megabyte of
`args`) can only be measured once built. The size measured is the object's compact JSON: the API
server's stored encoding (protobuf) is smaller, so what passes here passes there. Client-side `kubectl
apply` also stores that JSON in an annotation, and an object's annotations may hold at most 256 KiB.

When an object is too large, the message names the field that makes it so: starting at the object,
it follows the largest field for as long as that field holds more than half of its parent, and stops
at a list of many similar items (reported with their count) or at a single large value. A field of a
pod template is reported at its place in the input job when it is there too.
"""

from __future__ import annotations

import json
from typing import Any

from mpigen import names
from mpigen.errors import Issue, Path, format_path
from mpigen.plan import JobPlan

OBJECT_MAX_BYTES = 1536 * 1024  # etcd's default --max-request-bytes, the practical limit of one object
REQUEST_MAX_BYTES = 3 * 1024 * 1024  # the API server's limit on one request body
# apimachinery pkg/api/validation/objectmeta.go: TotalAnnotationSizeLimitB, keys and values together.
ANNOTATIONS_MAX_BYTES = 256 * 1024
# kubectl apply (client-side): the object's JSON (Go encoding/json, a final newline) under this key.
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
# Go's encoding/json writes `<`, `>`, `&` as \u003c, \u003e, \u0026 (5 bytes more than the character)
# and U+2028, U+2029 as \u2028, \u2029 (3 bytes more than their UTF-8).
# What `"annotations":{}` adds to an object's metadata in that JSON (with its comma).
EMPTY_ANNOTATIONS = len('"annotations":{},')
_GO_ESCAPED = {"<": 5, ">": 5, "&": 5, "\u2028": 3, "\u2029": 3}


def json_size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def go_json_bytes(value: object) -> int:
    """Bytes of `value` as Go's encoding/json writes it compactly (what kubectl stores)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return len(text.encode()) + sum(extra * text.count(char) for char, extra in _GO_ESCAPED.items())


def last_applied_bytes(skeleton: dict[str, Any], growth: int = 0) -> int:
    """The annotations' size once client-side `kubectl apply` adds its own: `skeleton` (the object
    with its growing strings left empty) as JSON plus `growth` (those strings' JSON-escaped bytes), a
    newline, the key, and the annotations the object already has (also inside the JSON). kubectl
    v0.37.2 pkg/util/apply.go GetModifiedConfiguration encodes the object with its annotations set to
    an empty map when it has none, so the JSON holds `"annotations":{}`."""
    meta = skeleton.get("metadata")
    own = (meta.get("annotations") if isinstance(meta, dict) else None) or {}
    existing = sum(len(str(key).encode()) + len(str(value).encode()) for key, value in own.items())
    encoded = go_json_bytes(skeleton) + (0 if own else EMPTY_ANNOTATIONS)
    return existing + len(LAST_APPLIED) + encoded + growth + 1


def largest_field(obj: Any, size: int) -> tuple[Path, int]:
    """The path of the field that holds most of `obj` (of `size` bytes), and that field's size."""
    path: list[str | int] = []
    node = obj
    while isinstance(node, (dict, list)) and node:
        children = node.items() if isinstance(node, dict) else enumerate(node)
        key, child_size = max(((key, json_size(child)) for key, child in children), key=lambda pair: pair[1])
        if 2 * child_size <= size:
            break  # no single field dominates: this one is what is large
        path.append(key)
        node, size = node[key], child_size
    return tuple(path), size


def _items(value: Any) -> str:
    return f" ({len(value):,} items)" if isinstance(value, (list, dict)) else ""


def _at(obj: Any, path: Path) -> Any:
    for part in path:
        obj = obj[part]
    return obj


def _input_path(job: Any, template: Path | None, path: Path) -> Path:
    """Where a field of a built pod template (`spec.template...`) sits in the input job, if it does."""
    if template is None or path[:2] != ("spec", "template"):
        return ()
    mapped = template + path[2:]
    try:
        _at(job, mapped)
    except (KeyError, IndexError, TypeError):
        return template  # the field is mpigen's addition, or moved: point at the template
    return mapped


def check_object_sizes(objects: list[dict[str, Any]], plan: JobPlan | None, job: Any) -> list[Issue]:
    """One issue per object larger than etcd stores or client-side `kubectl apply` can annotate, naming
    the field that makes it large (`plan` None: a TrainJob's objects, every one measured, the fields named
    in the built object)."""
    templates: dict[tuple[str, str], Path | None] = {}
    computed: set[tuple[str, str]] = set()
    if plan is not None:
        templates = {
            ("Job", names.launcher(plan.name)): plan.template_paths.get("launcher"),
            ("StatefulSet", names.worker_set(plan.name)): plan.template_paths.get("worker"),
        }
        # The targets computed these two before they were built (they grow with the worker count).
        computed = {("ConfigMap", names.config_map(plan.name)), ("Role", names.launcher(plan.name))}
    issues = []
    for obj in objects:
        if (obj["kind"], obj["metadata"]["name"]) in computed:
            continue
        size = json_size(obj)
        kind, name = obj["kind"], obj["metadata"]["name"]
        if size > OBJECT_MAX_BYTES:
            limit = (
                f"over the {OBJECT_MAX_BYTES:,} (1.5 MiB) etcd stores per object (and the API server takes "
                f"at most {REQUEST_MAX_BYTES // (1024 * 1024)} MiB per request)"
            )
        elif last_applied_bytes(obj) > ANNOTATIONS_MAX_BYTES:
            size = last_applied_bytes(obj)
            limit = (
                f"with the last-applied-configuration annotation client-side `kubectl apply` adds, over the "
                f"{ANNOTATIONS_MAX_BYTES:,} (256 KiB) of annotations the API server accepts"
            )
        else:
            continue
        path, part = largest_field(obj, json_size(obj))
        message = (
            f"too large: the {kind} {name} would be {size:,} bytes, {limit}; "
            f"its {format_path(path) or 'content'} holds {part:,} bytes{_items(_at(obj, path))}"
        )
        issues.append(Issue(_input_path(job, templates.get((kind, name)), path), message))
    return issues
