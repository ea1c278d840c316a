"""The API server's pod aliases: `serviceAccount` is read into `serviceAccountName`, as the server does."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import V2BETA1, make_job, pod

from mpigen.compiler import compile_job
from mpigen.inputs.aliases import resolve_aliases


def pod_with(**fields: Any) -> dict[str, Any]:
    """A pod template with pod-level `fields`."""
    template = pod()
    template["spec"].update(fields)
    return template


VERSIONS = ["kubeflow.org/v1alpha2", "kubeflow.org/v1", V2BETA1]


def workers(objects: list[dict[str, Any]]) -> dict[str, Any]:
    (worker,) = [obj for obj in objects if obj["kind"] == "StatefulSet"]
    spec: dict[str, Any] = worker["spec"]["template"]["spec"]
    return spec


@pytest.mark.parametrize("api_version", VERSIONS)
def test_deprecated_service_account_is_copied_into_service_account_name(api_version: str) -> None:
    document = make_job(api_version, worker=pod_with(serviceAccount="runner"))
    compilation = compile_job(document)
    spec = workers(compilation.objects)
    assert spec["serviceAccountName"] == "runner" and "serviceAccount" not in spec
    assert not [w for w in compilation.warnings if "serviceAccount" in w.path]


def test_service_account_name_wins_with_a_warning() -> None:
    document = make_job(V2BETA1, worker=pod_with(serviceAccount="old", serviceAccountName="new"))
    compilation = compile_job(document)
    assert workers(compilation.objects)["serviceAccountName"] == "new"
    (warning,) = [w for w in compilation.warnings if w.path[-1] == "serviceAccount"]
    assert warning.path == ("spec", "mpiReplicaSpecs", "Worker", "template", "spec", "serviceAccount")
    assert '"old" is ignored' in warning.message and '"new"' in warning.message


def test_the_same_value_twice_is_no_warning_and_the_input_is_not_changed() -> None:
    document = make_job(V2BETA1, worker=pod_with(serviceAccount="same", serviceAccountName="same"))
    resolved, warnings = resolve_aliases(document)
    assert warnings == []
    assert document["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["serviceAccount"] == "same"
    assert "serviceAccount" not in resolved["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]


def test_v1alpha1_template() -> None:
    document = {
        "apiVersion": "kubeflow.org/v1alpha1",
        "kind": "MPIJob",
        "metadata": {"name": "a"},
        "spec": {"replicas": 1, "template": pod_with(serviceAccount="runner")},
    }
    resolved, _ = resolve_aliases(document)
    assert resolved["spec"]["template"]["spec"]["serviceAccountName"] == "runner"
