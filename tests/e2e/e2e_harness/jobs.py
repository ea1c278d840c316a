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
