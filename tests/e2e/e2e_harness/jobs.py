"""Jobs: the MPIJob inputs the e2e tests render with mpigen (inputs only; manifests come from mpigen).

v1alpha1 uses one container template for the launcher and the workers (the launcher keeps the
command; the workers get `sleep 365d`); v1alpha2 has a Launcher and a Worker replica spec.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Job = dict[str, Any]


def _container(command: Sequence[str], **extra: Any) -> dict[str, Any]:
    return {"name": "mpi", "image": "example.com/mpi:e2e", "command": list(command), **extra}


def v1alpha1_gpus(name: str, command: Sequence[str], gpus: int = 4, gpus_per_node: int = 2) -> Job:
    """Sized by `gpus`: gpus / gpusPerNode workers with gpusPerNode slots each (GPU limits only)."""
    return {
        "apiVersion": "kubeflow.org/v1alpha1",
        "kind": "MPIJob",
        "metadata": {"name": name, "namespace": "e2e"},
        "spec": {
            "gpus": gpus,
            "gpusPerNode": gpus_per_node,
            "template": {"spec": {"containers": [_container(command)]}},
        },
    }


def v1alpha1_replicas(name: str, command: Sequence[str], replicas: int = 3, cpus: str = "2") -> Job:
    """Sized by `replicas` with processingResourceType cpu: slots = the container's cpu limit."""
    limits = {"resources": {"limits": {"cpu": cpus}}}
    return {
        "apiVersion": "kubeflow.org/v1alpha1",
        "kind": "MPIJob",
        "metadata": {"name": name, "namespace": "e2e"},
        "spec": {
            "replicas": replicas,
            "processingResourceType": "cpu",
            "template": {"spec": {"containers": [_container(command, **limits)]}},
        },
    }


def v1alpha2(name: str, command: Sequence[str], workers: int = 3, slots: int = 2) -> Job:
    """Launcher and Worker replica specs, `slotsPerWorker` slots on each of `workers` workers."""
    return {
        "apiVersion": "kubeflow.org/v1alpha2",
        "kind": "MPIJob",
        "metadata": {"name": name, "namespace": "e2e"},
        "spec": {
            "slotsPerWorker": slots,
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": {"spec": {"containers": [_container(command)]}}},
                "Worker": {
                    "replicas": workers,
                    "template": {"spec": {"containers": [_container(["sleep", "365d"])]}},
                },
            },
        },
    }


def v1(name: str, command: Sequence[str], workers: int = 2, slots: int = 2) -> Job:
    """kubeflow.org/v1 (training-operator): as v1alpha2, with the run policy's clean-up and no worker command."""
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "MPIJob",
        "metadata": {"name": name, "namespace": "e2e"},
        "spec": {
            "slotsPerWorker": slots,
            "runPolicy": {"cleanPodPolicy": "Running"},
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": {"spec": {"containers": [_container(command)]}}},
                "Worker": {
                    "replicas": workers,
                    "template": {"spec": {"containers": [{"name": "mpi", "image": "example.com/mpi:e2e"}]}},
                },
            },
        },
    }


def v2beta1(
    name: str,
    command: Sequence[str],
    implementation: str = "OpenMPI",
    workers: int = 2,
    slots: int = 2,
    user: int | None = 1000,
    ssh_auth_mount_path: str | None = "/home/mpiuser/.ssh",
) -> Job:
    """kubeflow.org/v2beta1 as mpi-operator's examples write it: the launcher runs `command`, each worker
    `sshd -De` (with the image's `~/.sshd_config` when not root), both as `user` (None: the image's root);
    `ssh_auth_mount_path` None leaves the API's default (/root/.ssh)."""
    security = {} if user is None else {"securityContext": {"runAsUser": user}}
    sshd = ["/usr/sbin/sshd", "-De"] + ([] if user is None else ["-f", "/home/mpiuser/.sshd_config"])
    spec: dict[str, Any] = {
        "slotsPerWorker": slots,
        "mpiImplementation": implementation,
        "mpiReplicaSpecs": {
            "Launcher": {
                "replicas": 1,
                "template": {"spec": {"containers": [_container(command, **security)]}},
            },
            "Worker": {
                "replicas": workers,
                "template": {"spec": {"containers": [_container(sshd, **security)]}},
            },
        },
    }
    if ssh_auth_mount_path is not None:
        spec["sshAuthMountPath"] = ssh_auth_mount_path
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": name, "namespace": "e2e"},
        "spec": spec,
    }
