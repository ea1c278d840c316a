"""A v1alpha2 IntelMPI or MPICH job whose launcher names no network interface for Hydra is warned about
(mpigen.inputs.v030.hydra_iface_warning): without v0.3.0's hosts file the workers cannot resolve the
launcher's name, so the job fails unless the interface is given (tests/e2e/test_e2e_v1alpha2_hydra.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mpigen import Options, compile_job

JOB: dict[str, Any] = {
    "apiVersion": "kubeflow.org/v1alpha2",
    "kind": "MPIJob",
    "metadata": {"name": "pi", "namespace": "ml"},
    "spec": {
        "slotsPerWorker": 1,
        "mpiReplicaSpecs": {
            "Launcher": {
                "replicas": 1,
                "template": {
                    "spec": {"containers": [{"name": "l", "image": "i", "command": ["mpirun", "hostname"]}]}
                },
            },
            "Worker": {"replicas": 2, "template": {"spec": {"containers": [{"name": "w", "image": "i"}]}}},
        },
    },
}
VARIABLES = {"IntelMPI": "I_MPI_HYDRA_IFACE", "MPICH": "HYDRA_IFACE"}


def job(distribution: str | None, **launcher: Any) -> dict[str, Any]:
    document = copy.deepcopy(JOB)
    if distribution:
        document["spec"]["mpiDistribution"] = distribution
    document["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0].update(launcher)
    return document


def iface_warnings(document: dict[str, Any]) -> list[str]:
    result = compile_job(document, Options())
    return [w.message for w in result.warnings if "IFACE" in w.message]


@pytest.mark.parametrize("distribution", sorted(VARIABLES))
def test_a_hydra_launcher_without_an_interface_is_warned(distribution: str) -> None:
    (message,) = iface_warnings(job(distribution))
    assert VARIABLES[distribution] in message and "eth0" in message


@pytest.mark.parametrize("distribution", sorted(VARIABLES))
def test_the_variable_or_iface_on_the_command_silences_it(distribution: str) -> None:
    assert iface_warnings(job(distribution, env=[{"name": VARIABLES[distribution], "value": "eth0"}])) == []
    assert iface_warnings(job(distribution, command=["mpiexec", "-iface", "eth0", "hostname"])) == []


def test_open_mpi_is_not_warned() -> None:
    assert iface_warnings(job(None)) == []
    assert iface_warnings(job("OpenMPI")) == []
