"""Hardening of the containers mpigen adds to a job (never the user's own): Pod Security "restricted"
security contexts, modest requests and limits, a writable `/tmp` for a read-only root, and a service
account token mounted only into the containers that call the API.

Pod Security Standards, restricted (kubernetes.io/docs/concepts/security/pod-security-standards,
enforced by k8s.io/pod-security-admission/policy): `allowPrivilegeEscalation: false`, every capability
dropped, `runAsNonRoot: true`, seccomp `RuntimeDefault`. Each container states all of it itself, so
it holds whatever the pod-level context the user wrote says. The helper images (kubectl-delivery:
alpine with kubectl) run as root by default; they run here as `nobody` (65534, in alpine's and
Debian's passwd), by number so that the kubelet can check `runAsNonRoot` without reading the image.
"""

from __future__ import annotations

from typing import Any

# alpine's and Debian's `nobody`: a numeric, non-root user the helper images know.
HELPER_USER = 65534
TMP_VOLUME = "mpi-job-tmp"
TMP_PATH = "/tmp"
API_TOKEN_VOLUME = "mpi-job-api-token"
API_TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
# What the kubelet's own service account volume projects (pkg/serviceaccount: kube-api-access-*).
TOKEN_EXPIRATION_SECONDS = 3607

HELPER_RESOURCES = {
    "requests": {"cpu": "10m", "memory": "32Mi", "ephemeral-storage": "16Mi"},
    "limits": {"cpu": "500m", "memory": "128Mi", "ephemeral-storage": "64Mi"},
}


def restricted_security_context(user: int | None = HELPER_USER, *, read_only: bool = True) -> dict[str, Any]:
    """A container securityContext that meets Pod Security restricted on its own. `user` None leaves
    the user to the pod (whose context then names a non-root one)."""
    context: dict[str, Any] = {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "readOnlyRootFilesystem": read_only,
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    if user is not None:
        context.update(runAsUser=user, runAsGroup=user)
    return context


def helper_resources(given: dict[str, Any] | None = None, *, ephemeral: bool = True) -> dict[str, Any]:
    """Requests and limits for a helper container: `given` (an operator's fixed resources) as it is,
    completed with the modest defaults for what it leaves out; without the ephemeral-storage defaults
    when `ephemeral` is False (a JobSet that Kueue admits: a ClusterQueue that does not cover
    ephemeral-storage would never admit a pod that asks for it)."""
    given = given or {}
    defaults = {
        kind: {
            key: value
            for key, value in HELPER_RESOURCES[kind].items()
            if ephemeral or key != "ephemeral-storage"
        }
        for kind in ("limits", "requests")
    }
    return {kind: {**defaults[kind], **(given.get(kind) or {})} for kind in ("limits", "requests")}


def tmp_volume() -> dict[str, Any]:
    return {"name": TMP_VOLUME, "emptyDir": {"sizeLimit": HELPER_RESOURCES["limits"]["ephemeral-storage"]}}


def tmp_mount() -> dict[str, str]:
    return {"name": TMP_VOLUME, "mountPath": TMP_PATH}


def home_env() -> dict[str, str]:
    """kubectl keeps its discovery cache under $HOME, which must be writable: the `/tmp` emptyDir."""
    return {"name": "HOME", "value": TMP_PATH}


def api_token_volume() -> dict[str, Any]:
    """The service account token, CA and namespace, as the kubelet projects them when the pod's
    `automountServiceAccountToken` is on; here mounted only into the containers that call the API."""
    namespace = {"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}
    sources = [
        {"serviceAccountToken": {"path": "token", "expirationSeconds": TOKEN_EXPIRATION_SECONDS}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [namespace]}},
    ]
    return {"name": API_TOKEN_VOLUME, "projected": {"defaultMode": 0o444, "sources": sources}}


def api_token_mount() -> dict[str, Any]:
    return {"name": API_TOKEN_VOLUME, "mountPath": API_TOKEN_PATH, "readOnly": True}


def harden(
    container: dict[str, Any],
    user: int | None = HELPER_USER,
    *,
    read_only: bool = True,
    ephemeral: bool = True,
) -> dict[str, Any]:
    """`container` (one of mpigen's) with the restricted context and requests and limits (`ephemeral`:
    as helper_resources)."""
    container["securityContext"] = restricted_security_context(user, read_only=read_only)
    container["resources"] = helper_resources(container.get("resources"), ephemeral=ephemeral)
    return container
