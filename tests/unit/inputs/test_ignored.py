"""Fields the operator ignored: left out with a warning in v1alpha1 and v1alpha2, errors in v1 and v2beta1."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import V1, V1ALPHA2, V2BETA1, make_job, pod

from mpigen.compiler import compile_job
from mpigen.errors import CompileError

WORKER = ("spec", "mpiReplicaSpecs", "Worker", "template", "spec")


def with_misplaced_fields(api_version: str) -> dict[str, Any]:
    worker = pod(securityContext={"fsGroup": 1000})
    worker["spec"]["imagePullPolicy"] = "Always"
    return make_job(api_version, worker=worker)


def test_v1alpha2_leaves_them_out_with_a_warning_saying_where_they_belong() -> None:
    compilation = compile_job(with_misplaced_fields(V1ALPHA2))
    warnings = {w.path: w.message for w in compilation.warnings if "unknown field" in w.message}
    assert warnings == {
        (*WORKER, "imagePullPolicy"): 'unknown field "imagePullPolicy" (a container field: '
        "containers[*].imagePullPolicy): left out, as mpi-operator v0.2.0 to v0.3.0 ignored it (its CRD kept "
        "unknown fields)",
        (*WORKER, "containers", 0, "securityContext", "fsGroup"): 'unknown field "fsGroup" (a pod field: '
        "spec.securityContext.fsGroup): left out, as mpi-operator v0.2.0 to v0.3.0 ignored it (its CRD kept "
        "unknown fields)",
    }
    (workers,) = [obj for obj in compilation.objects if obj["kind"] == "StatefulSet"]
    spec = workers["spec"]["template"]["spec"]
    assert "imagePullPolicy" not in spec and "fsGroup" not in spec["containers"][0]["securityContext"]


@pytest.mark.parametrize("api_version", [V1, V2BETA1])
def test_structural_crds_keep_refusing_them(api_version: str) -> None:
    with pytest.raises(CompileError) as caught:
        compile_job(with_misplaced_fields(api_version))
    unknown = [issue for issue in caught.value.issues if "unknown field" in issue.message]
    assert {issue.path[-1] for issue in unknown} == {"imagePullPolicy", "fsGroup"}
    assert all(issue.severity == "error" for issue in unknown)


def test_a_wrong_type_stays_an_error_in_v1alpha2() -> None:
    with pytest.raises(CompileError) as caught:
        compile_job(make_job(V1ALPHA2, slotsPerWorker="2", extra_field=1))
    assert [issue.path for issue in caught.value.issues] == [("spec", "slotsPerWorker")]
    assert [w.path for w in caught.value.warnings] == [("spec", "extra_field")]
