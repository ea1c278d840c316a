"""The pure compiler: names, labels, RBAC scope, defaults, determinism and the Python API."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from jobs import make_job

import mpigen
from mpigen import names


def v2job(workers: int = 3, **spec: Any) -> dict[str, Any]:
    return make_job(workers=workers, **spec)


def by_kind(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {obj["kind"]: obj for obj in objects}


def test_document_order_is_fixed() -> None:
    kinds = [obj["kind"] for obj in mpigen.compile(v2job())]
    assert kinds == ["ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Service", "StatefulSet", "Job"]
    gang = mpigen.compile(v2job(cleanPodPolicy="All"), mpigen.Options(gang_scheduler="volcano"))
    assert [(obj["kind"], obj["metadata"]["name"]) for obj in gang] == [
        ("ServiceAccount", "pi-launcher"),
        ("Role", "pi-launcher"),
        ("RoleBinding", "pi-launcher"),
        ("ServiceAccount", "pi-cleanup"),
        ("Role", "pi-cleanup"),
        ("RoleBinding", "pi-cleanup"),
        ("ConfigMap", "pi-config"),
        ("Service", "pi-worker"),
        ("PodGroup", "pi"),
        ("PodDisruptionBudget", "pi-pdb"),
        ("StatefulSet", "pi-worker"),
        ("Job", "pi-launcher"),
        ("Job", "pi-cleanup"),
    ]


def test_derived_names() -> None:
    assert names.launcher("pi") == "pi-launcher"
    assert names.config_map("pi") == "pi-config"
    assert names.worker_set("pi") == "pi-worker"
    assert names.worker_pods("pi", 3) == ["pi-worker-0", "pi-worker-1", "pi-worker-2"]
    objects = by_kind(mpigen.compile(v2job()))
    assert {obj["metadata"]["name"] for obj in objects.values()} == {"pi-launcher", "pi-config", "pi-worker"}
    assert names.cleanup("pi") == "pi-cleanup" and names.pdb("pi") == "pi-pdb"
    assert all(obj["metadata"]["namespace"] == "ml" for obj in objects.values())


def test_role_is_limited_to_the_jobs_worker_pods() -> None:
    role = by_kind(mpigen.compile(v2job(workers=3)))["Role"]
    pods = ["pi-worker-0", "pi-worker-1", "pi-worker-2"]
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"], "resourceNames": pods},
        {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create"], "resourceNames": pods},
    ]


def test_hostfile_and_kubexec() -> None:
    data = by_kind(mpigen.compile(v2job(workers=2, slotsPerWorker=4)))["ConfigMap"]["data"]
    assert data["hostfile"] == "pi-worker-0 slots=4\npi-worker-1 slots=4\n"
    assert data["kubexec.sh"].startswith("#!/bin/sh\n")
    assert '/opt/kube/kubectl exec "${POD_NAME}" -- /bin/sh -c "$*"\n' in data["kubexec.sh"]


def test_selectors_match_pod_labels() -> None:
    objects = by_kind(mpigen.compile(v2job()))
    sts = objects["StatefulSet"]
    selector = sts["spec"]["selector"]["matchLabels"]
    assert selector == {"group_name": "kubeflow.org", "mpi_job_name": "pi", "mpi_role_type": "worker"}
    assert selector.items() <= sts["spec"]["template"]["metadata"]["labels"].items()
    launcher_labels = objects["Job"]["spec"]["template"]["metadata"]["labels"]
    assert launcher_labels["mpi_role_type"] == "launcher"


def test_v1alpha2_defaults() -> None:
    objects = by_kind(mpigen.compile(v2job()))
    job = objects["Job"]
    assert job["spec"]["backoffLimit"] == 6
    assert "activeDeadlineSeconds" not in job["spec"]
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "OnFailure"
    assert objects["ConfigMap"]["data"]["hostfile"].endswith("slots=1\n")
    assert objects["StatefulSet"]["spec"]["template"]["spec"]["restartPolicy"] == "Always"


def test_no_owner_references() -> None:
    assert all("ownerReferences" not in obj["metadata"] for obj in mpigen.compile(v2job()))


def test_compile_is_pure_and_deterministic() -> None:
    job = v2job()
    before = copy.deepcopy(job)
    first = mpigen.compile(job)
    assert job == before, "compile must not modify its input"
    assert mpigen.compile(job) == first
    reordered = dict(reversed(list(copy.deepcopy(job).items())))
    assert mpigen.compile(reordered) == first


def test_compile_error_carries_every_issue() -> None:
    job = v2job(workers=0, slotsPerWorker=0)
    with pytest.raises(mpigen.CompileError) as info:
        mpigen.compile(job)
    paths = {issue.path for issue in info.value.issues}
    assert ("spec", "slotsPerWorker") in paths
    assert info.value.name == "pi"


def test_compile_rejects_non_mapping() -> None:
    with pytest.raises(mpigen.CompileError):
        mpigen.compile(["not", "a", "job"])


def test_warnings_are_returned_not_printed(capsys: pytest.CaptureFixture[str]) -> None:
    job = v2job()
    job["spec"]["mpiReplicaSpecs"]["Worker"]["restartPolicy"] = "OnFailure"
    result = mpigen.compile_job(job)
    assert [w.path for w in result.warnings] == [("spec", "mpiReplicaSpecs", "Worker", "restartPolicy")]
    assert capsys.readouterr() == ("", "")


def test_without_a_namespace_the_subjects_name_none_and_nothing_warns() -> None:
    """A RoleBinding's ServiceAccount subject with no namespace is read by Kubernetes as the binding's
    own namespace, so `kubectl apply -n X` puts the ServiceAccount, the binding and its subject in X."""
    job = v2job()
    job["spec"]["cleanPodPolicy"] = "Running"
    del job["metadata"]["namespace"]
    result = mpigen.compile_job(job)
    assert result.warnings == []
    bindings = [obj for obj in result.objects if obj["kind"] == "RoleBinding"]
    assert len(bindings) == 2
    for binding in bindings:
        assert "namespace" not in binding["metadata"]
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": binding["roleRef"]["name"]}]


def test_namespace_option_fills_in() -> None:
    job = v2job()
    del job["metadata"]["namespace"]
    objects = mpigen.compile(job, mpigen.Options(namespace="team"))
    assert {obj["metadata"]["namespace"] for obj in objects} == {"team"}
