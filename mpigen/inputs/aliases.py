"""Server aliases: pod template fields the API server copies into another before it validates a pod.

A deprecated field that the server reads as an alias is accepted as the server accepts it, never
refused with a message the server does not give. Kubernetes 1.37 `pkg/apis/core/v1/defaults.go`
(SetDefaults_PodSpec): `serviceAccount` (DeprecatedServiceAccount) fills `serviceAccountName` when that
is empty, and is then set to `serviceAccountName`'s value, so the two never disagree when validation
runs (`ValidatePodSpec`'s "must be the same as serviceAccountName" cannot fire for a defaulted pod).
mpigen writes the one field, `serviceAccountName`, into its templates, and the launcher's RBAC binds
to it, as the operator's Role binding would after the server's defaulting.
"""

from __future__ import annotations

from typing import Any

from mpigen import tree
from mpigen.errors import Issue, Path, shown

DEPRECATED, CURRENT = "serviceAccount", "serviceAccountName"


def _template_paths(document: dict[str, Any]) -> list[Path]:
    """The pod templates of an MPIJob of any version: v1alpha1's `spec.template`, the replica specs'."""
    spec = document.get("spec")
    if not isinstance(spec, dict):
        return []
    paths: list[Path] = [("spec", "template")] if isinstance(spec.get("template"), dict) else []
    replicas = spec.get("mpiReplicaSpecs")
    if isinstance(replicas, dict):
        paths += [
            ("spec", "mpiReplicaSpecs", role, "template")
            for role, replica in replicas.items()
            if isinstance(replica, dict) and isinstance(replica.get("template"), dict)
        ]
    return paths


def _pod_at(document: dict[str, Any], path: Path) -> dict[str, Any] | None:
    node: Any = document
    for key in (*path, "spec"):
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


def resolve_aliases(document: dict[str, Any]) -> tuple[dict[str, Any], list[Issue]]:
    """`document` with each template's `serviceAccount` moved into `serviceAccountName` (a copy, when
    any template has one), and a warning where the two disagree (the server keeps `serviceAccountName`)."""
    found = [
        path
        for path in _template_paths(document)
        if isinstance((_pod_at(document, path) or {}).get(DEPRECATED), str)
    ]
    if not found:
        return document, []
    document = tree.copy(document)
    warnings = []
    for path in found:
        pod = _pod_at(document, path)
        assert pod is not None
        old = pod.pop(DEPRECATED)
        current = pod.get(CURRENT)
        if not current:
            if old:
                pod[CURRENT] = old
        elif old and old != current:
            message = (
                f"{shown(old)} is ignored: the API server keeps serviceAccountName {shown(str(current))} "
                "and copies it into this deprecated alias"
            )
            warnings.append(Issue((*path, "spec", DEPRECATED), message, "warning"))
    return document, warnings
