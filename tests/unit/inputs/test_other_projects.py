"""Another project's MPIJob (kind MPIJob outside Kubeflow's API group) passes through; near-misses do not."""

from __future__ import annotations

import pytest

from mpigen import inputs as api


def mpijob(api_version: str) -> dict[str, object]:
    return {"apiVersion": api_version, "kind": "MPIJob", "metadata": {"name": "x"}, "spec": {}}


@pytest.mark.parametrize(
    "api_version",
    ["hpc.example.com/v1", "mpi.example.org/v1alpha1", "batch.volcano.sh/v1alpha1", "acme.io/v2"],
)
def test_other_groups_pass_through_with_a_warning(api_version: str) -> None:
    document = mpijob(api_version)
    assert api.foreign_mpijob(document) and not api.claims(document)
    warning = api.foreign_warning(document)
    assert warning.severity == "warning" and warning.path == ("apiVersion",)
    assert f'"{api_version.rpartition("/")[0]}" is not Kubeflow\'s API group' in warning.message


@pytest.mark.parametrize(
    "api_version",
    [
        "kubeflow.og/v1",  # a typo of the group
        "kubefow.org/v2beta1",
        "kubeflow.com/v1",
        "Kubeflow.org/v1",
        "mpi.kubeflow.org/v1",  # names Kubeflow
        "kubeflow/v1alpha2",  # no dot: no CRD's group
        "v1",  # no group
        "kubeflow.org/v3",  # Kubeflow's own group, a version mpigen does not compile
    ],
)
def test_near_misses_of_kubeflow_stay_errors(api_version: str) -> None:
    document = mpijob(api_version)
    assert not api.foreign_mpijob(document) and api.claims(document)


def test_other_kinds_of_other_groups_are_not_warned() -> None:
    document = {"apiVersion": "hpc.example.com/v1", "kind": "Simulation"}
    assert not api.foreign_mpijob(document) and not api.claims(document)
