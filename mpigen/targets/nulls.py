"""No `null` in a custom resource: server-side apply (kubectl `--server-side`, Flux, Argo CD's
ServerSideApply) refuses a null where a custom resource's schema expects a value, and the API server drops
a null of a field that is not nullable anyway (apiextensions pruning). A null the user wrote in a pod
template (`command:` with nothing after it) means "not set", so it is left out of the JobSets, Volcano
Jobs, PodGroups and Workloads mpigen writes. Built-in kinds keep what the user wrote: their typed
decoding reads a null as unset, and their rendered bytes stay as they were.
"""

from __future__ import annotations

from typing import Any

# API groups whose kinds mpigen writes as the user wrote them (typed built-ins).
TYPED_GROUPS = frozenset({"", "apps", "batch", "rbac.authorization.k8s.io", "policy", "networking.k8s.io"})


def is_custom(obj: dict[str, Any]) -> bool:
    """A kind whose group is not one of the typed built-ins mpigen writes (JobSet, Volcano's kinds,
    PodGroups, Workloads)."""
    api_version = obj.get("apiVersion")
    return isinstance(api_version, str) and api_version.rpartition("/")[0] not in TYPED_GROUPS


def _without(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _without(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without(item) for item in value]
    return value


def without_nulls(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`objects`, each custom resource among them without a null mapping value at any depth."""
    return [_without(obj) if is_custom(obj) else obj for obj in objects]
