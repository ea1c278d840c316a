"""Objects the run targets' engines create from the objects mpigen writes, named after them: part of the
check that two jobs (or a job and a document passed through) never write the same object.

- JobSet v0.12 (pkg/controllers/jobset_controller.go: GetSubdomain, createHeadlessSvcIfNecessary): a
  headless Service named `spec.network.subdomain`, else the JobSet's name.
- Volcano v1.10 (pkg/controllers/job/plugins): the `svc` plugin a Service `<job>`, a ConfigMap
  `<job>-svc` and, without `--disable-network-policy`, a NetworkPolicy `<job>`; the `ssh` plugin a Secret
  `<job>-ssh` (svc.go cmName, createServiceIfNotExist, createNetworkPolicyIfNotExist; ssh.go secretName).
"""

from __future__ import annotations

from typing import Any

JOBSET_GROUP = "jobset.x-k8s.io"
VOLCANO_GROUP = "batch.volcano.sh"


def _stub(api_version: str, kind: str, name: str, namespace: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if isinstance(namespace, str):
        meta["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}


def _flag(args: Any, flag: str) -> bool:
    """A Volcano plugin argument set to true (`--flag` or `--flag=true`)."""
    return isinstance(args, list) and any(arg in (flag, f"{flag}=true") for arg in args)


def implied(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The objects (apiVersion, kind, name, namespace only) an engine creates for `obj`."""
    api_version, kind, meta = obj.get("apiVersion"), obj.get("kind"), obj.get("metadata")
    spec = obj.get("spec")
    if not (isinstance(api_version, str) and isinstance(meta, dict) and isinstance(spec, dict)):
        return []
    name, namespace = meta.get("name"), meta.get("namespace")
    if not isinstance(name, str) or not name:
        return []
    group = api_version.rpartition("/")[0]
    if (group, kind) == (JOBSET_GROUP, "JobSet"):
        network = spec.get("network")
        subdomain = network.get("subdomain") if isinstance(network, dict) else None
        return [
            _stub("v1", "Service", subdomain if isinstance(subdomain, str) and subdomain else name, namespace)
        ]
    if (group, kind) != (VOLCANO_GROUP, "Job") or not isinstance(plugins := spec.get("plugins"), dict):
        return []
    found = []
    if "svc" in plugins:
        found += [_stub("v1", "Service", name, namespace), _stub("v1", "ConfigMap", f"{name}-svc", namespace)]
        if not _flag(plugins["svc"], "--disable-network-policy"):
            found.append(_stub("networking.k8s.io/v1", "NetworkPolicy", name, namespace))
    if "ssh" in plugins:
        found.append(_stub("v1", "Secret", f"{name}-ssh", namespace))
    return found
