"""The objects Volcano's job plugins create from a Volcano Job mpigen writes, named after it: part of the
check that two jobs (or a job and a document passed through) never write the same object (mpigen.pipeline).

Volcano v1.14.1 (pkg/controllers/job/plugins): the `svc` plugin a Service `<job>`, a ConfigMap `<job>-svc`
and, without `--disable-network-policy`, a NetworkPolicy `<job>`; the `ssh` plugin a Secret `<job>-ssh`
(svc.go cmName, createServiceIfNotExist, createNetworkPolicyIfNotExist; ssh.go secretName).
"""

from __future__ import annotations

from typing import Any

VOLCANO_JOB = ("batch.volcano.sh/v1alpha1", "Job")


def engine_objects(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the plugins of each Volcano Job among `objects` create (apiVersion, kind, name, namespace only)."""
    found = []
    for obj in objects:
        if (obj.get("apiVersion"), obj.get("kind")) != VOLCANO_JOB:
            continue
        name, namespace = obj["metadata"]["name"], obj["metadata"].get("namespace")
        plugins = obj["spec"].get("plugins") or {}
        if "svc" in plugins:
            found += [
                _stub("v1", "Service", name, namespace),
                _stub("v1", "ConfigMap", f"{name}-svc", namespace),
            ]
            if not _flag(plugins["svc"], "--disable-network-policy"):
                found.append(_stub("networking.k8s.io/v1", "NetworkPolicy", name, namespace))
        if "ssh" in plugins:
            found.append(_stub("v1", "Secret", f"{name}-ssh", namespace))
    return found


def _flag(args: Any, flag: str) -> bool:
    """A Volcano plugin argument set to true (`--flag` or `--flag=true`)."""
    return isinstance(args, list) and any(arg in (flag, f"{flag}=true") for arg in args)


def _stub(api_version: str, kind: str, name: str, namespace: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if isinstance(namespace, str):
        meta["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}
