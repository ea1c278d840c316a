"""The objects the JobSet controller creates from a JobSet mpigen writes, named after it: part of the check
that two jobs (or a job and a document passed through) never write the same object (mpigen.pipeline).

JobSet v0.12 (pkg/controllers/jobset_controller.go: GetSubdomain, createHeadlessSvcIfNecessary): a
headless Service named `spec.network.subdomain`, else the JobSet's name.
"""

from __future__ import annotations

from typing import Any

from mpigen.targets.jobset.names import JOBSET_API


def engine_objects(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Service of each JobSet among `objects` (apiVersion, kind, name, namespace only)."""
    found = []
    for obj in objects:
        if (obj.get("apiVersion"), obj.get("kind")) != (JOBSET_API, "JobSet"):
            continue
        meta, network = obj["metadata"], obj["spec"].get("network") or {}
        subdomain = network.get("subdomain")
        name = subdomain if isinstance(subdomain, str) and subdomain else meta["name"]
        found.append(_stub("v1", "Service", name, meta.get("namespace")))
    return found


def _stub(api_version: str, kind: str, name: str, namespace: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if isinstance(namespace, str):
        meta["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}
