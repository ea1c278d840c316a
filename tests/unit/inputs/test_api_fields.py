"""Did-you-mean help across versions: a v2beta1 field in an older job, and an older field in v2beta1."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import make_job

import mpigen
from mpigen.errors import CompileError
from mpigen.inputs.fields import HOMES, V1, V1ALPHA1, V1ALPHA2, V2BETA1, field_hint


def v1alpha2_job(**spec: Any) -> dict[str, Any]:
    return make_job(workers=1, **spec)


IGNORED = ": left out, as mpi-operator v0.2.0 to v0.3.0 ignored it (its CRD kept unknown fields)"


def compile_warnings(document: dict[str, Any]) -> list[str]:
    """An unknown field in a v1alpha2 job is ignored, as mpi-operator v0.2.0 ignored it, with a warning."""
    from mpigen.compiler import compile_job

    return [issue.text() for issue in compile_job(document).warnings if "unknown field" in issue.message]


def compile_errors(document: dict[str, Any]) -> list[str]:
    with pytest.raises(CompileError) as caught:
        mpigen.compile(document)
    return [issue.text() for issue in caught.value.issues]


@pytest.mark.parametrize(
    ("field", "value", "hint"),
    [
        ("sshAuthMountPath", "/home/mpiuser/.ssh", ("sshAuthMountPath exists only in kubeflow.org/v2beta1: "
         "use apiVersion kubeflow.org/v2beta1 for it")),
        ("runLauncherAsWorker", True, ("runLauncherAsWorker exists only in kubeflow.org/v2beta1: "
         "use apiVersion kubeflow.org/v2beta1 for it")),
        ("mpiImplementation", "Intel", ("mpiImplementation exists only in kubeflow.org/v2beta1: "
         "use apiVersion kubeflow.org/v2beta1 for it")),
        ("gpus", 8, "gpus exists only in kubeflow.org/v1alpha1"),
    ],
)  # fmt: skip
def test_a_v1alpha2_job_with_a_newer_field_is_told_where_it_lives(field: str, value: Any, hint: str) -> None:
    assert compile_warnings(v1alpha2_job(**{field: value})) == [
        f'spec.{field}: unknown field "{field}" ({hint}){IGNORED}'
    ]


def test_the_v1alpha2_enumerations_name_a_value_that_differs_only_in_case() -> None:
    assert compile_errors(v1alpha2_job(cleanPodPolicy="running")) == [
        (
            "spec.cleanPodPolicy: must be one of 'None', 'Running' or 'All', got string \"running\" "
            '(did you mean "Running"?)'
        )
    ]


def test_typos_keep_their_closest_name() -> None:
    assert compile_warnings(v1alpha2_job(cleanPodPolice="All")) == [
        'spec.cleanPodPolice: unknown field "cleanPodPolice" (did you mean "cleanPodPolicy"?)' + IGNORED
    ]


def test_every_home_is_a_real_path_of_a_known_version() -> None:
    for field, homes in HOMES.items():
        assert set(homes) <= {V1ALPHA1, V1ALPHA2, V1, V2BETA1}, field
        for path in homes.values():
            assert path.startswith("spec.") and field in path, (field, path)


def test_a_field_at_home_gets_no_hint() -> None:
    assert field_hint(V2BETA1, "spec.runPolicy", "cleanPodPolicy") is None
    assert field_hint(V1ALPHA2, "spec", "cleanPodPolicy") is None
    # Only spec-level objects are explained; a replica spec's unknown field is left to difflib.
    assert field_hint(V2BETA1, "spec.mpiReplicaSpecs.Worker", "cleanPodPolicy") is None
    assert field_hint(V2BETA1, "spec", "noSuchField") is None
