"""Every problem of a job is listed: the problems that stop a front early do not hide the others."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import V2BETA1, make_job, pod

from mpigen.compiler import compile_job
from mpigen.errors import CompileError
from mpigen.inputs.repair import valid_name

DUPLICATE_VOLUMES = [{"name": "data", "emptyDir": {}}, {"name": "data", "emptyDir": {}}]


def worker_with_duplicate_volumes() -> dict[str, Any]:
    template = pod()
    template["spec"]["volumes"] = DUPLICATE_VOLUMES
    return template


def issues_of(document: dict[str, Any]) -> list[str]:
    with pytest.raises(CompileError) as caught:
        compile_job(document)
    return [issue.text() for issue in caught.value.issues]


@pytest.mark.parametrize("api_version", ["kubeflow.org/v1", V2BETA1])
def test_unknown_replica_type_and_bad_name_do_not_hide_a_refused_pod(api_version: str) -> None:
    """(In v1alpha2 the unknown replica type is a warning: golden/error-every-problem-behind-unknown-replica-type.)"""
    document = make_job(api_version, name="my_job", worker=worker_with_duplicate_volumes())
    document["spec"]["mpiReplicaSpecs"]["Chief"] = {"replicas": 1}
    issues = issues_of(document)
    assert any(text.startswith("spec.mpiReplicaSpecs.Chief: unknown field") for text in issues)
    assert any(text.startswith('metadata.name: "my_job" is not a valid name') for text in issues)
    (volume,) = [text for text in issues if "volumes[1].name" in text]
    assert 'Duplicate value: "data"' in volume and "my_job-worker" in volume  # the job's own name
    assert len(issues) == len(set(issues)) == 3


def test_other_problems_are_not_looked_behind() -> None:
    """A wrong type is not repaired: what the later checks would say of a guess is not listed."""
    document = make_job(V2BETA1, worker=worker_with_duplicate_volumes(), slotsPerWorker="2")
    issues = issues_of(document)
    assert len(issues) == 1 and issues[0].startswith("spec.slotsPerWorker: expected an integer")


@pytest.mark.parametrize(
    ("name", "expected"),
    [("my_job", "my-job"), ("Train.V2", "train-v2"), ("___", "job"), ("a" * 80, "a" * 45)],
)
def test_valid_name(name: str, expected: str) -> None:
    assert valid_name(name) == expected
