"""The pure compiler: names, labels, RBAC scope, defaults, determinism and the Python API."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from jobs import COMMAND, V1, V1ALPHA2, V2BETA1, make_job, pod

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


def test_the_public_types_are_values() -> None:
    """Options and Issue are NamedTuples: immutable, hashable, compared by value, with `_replace`,
    `_fields` and `_asdict`; `Options.replace` refuses a name that is no field, as the constructor does.
    CompileError and Compilation compare by their fields."""
    options = mpigen.Options(namespace="ml")
    changed = options.replace(gpus_per_node=4)
    assert changed == options._replace(gpus_per_node=4) != options
    assert (changed.namespace, changed.gpus_per_node) == ("ml", 4)
    assert mpigen.Options._fields[:2] == ("gpus_per_node", "processing_units_per_node")
    assert mpigen.Options._field_defaults["gpus_per_node"] == 8
    assert hash(options) == hash(mpigen.Options(namespace="ml"))
    with pytest.raises(AttributeError):
        options.namespace = "other"  # type: ignore[misc]
    with pytest.raises(TypeError, match="no field gpus"):
        options.replace(gpus=4)
    with pytest.raises(TypeError):
        mpigen.Options(gpus=4)  # type: ignore[call-arg]
    issue = mpigen.Issue(("spec",), "bad")
    assert issue._asdict() == {"path": ("spec",), "message": "bad", "severity": "error"}
    assert issue._replace(severity="warning") == mpigen.Issue(("spec",), "bad", "warning")
    error = mpigen.CompileError([issue], name="train")
    assert error == mpigen.CompileError([issue], "MPIJob", "train", [])
    assert error != mpigen.CompileError([issue], "MPIJob", "other", [])
    assert (error.issues, error.kind, error.name, error.warnings) == ([issue], "MPIJob", "train", [])
    assert str(error) == "MPIJob/train: spec: bad" and repr(error).startswith("CompileError(issues=[Issue(")
    compiled = mpigen.compile_job(make_job(V2BETA1))
    assert compiled == mpigen.compile_job(make_job(V2BETA1))
    assert compiled.options == mpigen.Options() and compiled.warnings == []
    assert compiled != mpigen.compile_job(make_job(V2BETA1), mpigen.Options(namespace="ml"))


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


# A value the user wrote is kept, or replaced with a warning naming it -----------------------------


def _objects(job: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    from mpigen.compiler import compile_job

    done = compile_job(job)
    warnings = [f"{'.'.join(map(str, w.path))}: {w.message}" for w in done.warnings]
    return {f"{o['kind']}/{o['metadata']['name']}": o for o in done.objects}, warnings


def _pod(objects: dict[str, dict[str, Any]], key: str) -> dict[str, Any]:
    template: dict[str, Any] = objects[key]["spec"]["template"]
    return template


@pytest.mark.parametrize("api_version", [V1ALPHA2, V1, V2BETA1])
def test_a_templates_own_standard_labels_are_kept_with_a_warning(api_version: str) -> None:
    own = {
        "app.kubernetes.io/name": "trainer",
        "app.kubernetes.io/instance": "exp-7",
        "app.kubernetes.io/component": "gpu",
        "app.kubernetes.io/managed-by": "argocd",
        "team": "ml",
    }
    worker = {"metadata": {"labels": dict(own)}, **pod("worker")}
    objects, warnings = _objects(make_job(api_version, worker=worker))
    labels = _pod(objects, "StatefulSet/pi-worker")["metadata"]["labels"]
    assert {key: labels[key] for key in own} == own
    assert objects["StatefulSet/pi-worker"]["metadata"]["labels"]["app.kubernetes.io/instance"] == "pi"
    selector = objects["StatefulSet/pi-worker"]["spec"]["selector"]["matchLabels"]
    assert all(labels[key] == value for key, value in selector.items())
    named = [w for w in warnings if "app.kubernetes.io" in w]
    assert len(named) == 4 and all(
        "Worker.template.metadata.labels.app.kubernetes.io/" in w for w in named
    ), warnings


def test_templates_without_standard_labels_get_mpigens() -> None:
    objects, warnings = _objects(make_job(V2BETA1))
    assert (
        _pod(objects, "StatefulSet/pi-worker")["metadata"]["labels"]["app.kubernetes.io/managed-by"]
        == "mpigen"
    )
    assert not [w for w in warnings if "labels" in w]


@pytest.mark.parametrize("api_version", [V1ALPHA2, V1, V2BETA1])
def test_a_template_metadata_name_is_not_copied(api_version: str) -> None:
    worker = {"metadata": {"name": "my-pod"}, **pod("worker")}
    launcher = {"metadata": {"name": "my-launcher"}, **pod("launcher", command=COMMAND)}
    objects, _ = _objects(make_job(api_version, worker=worker, launcher=launcher))
    assert "name" not in _pod(objects, "StatefulSet/pi-worker")["metadata"]
    assert "name" not in _pod(objects, "Job/pi-launcher")["metadata"]


@pytest.mark.parametrize("api_version", [V1ALPHA2, V1, V2BETA1])
def test_a_worker_naming_its_own_service_account_keeps_its_token(api_version: str) -> None:
    worker = pod("worker")
    worker["spec"]["serviceAccountName"] = "trainer"
    objects, _ = _objects(make_job(api_version, worker=worker))
    spec = _pod(objects, "StatefulSet/pi-worker")["spec"]
    assert spec["serviceAccountName"] == "trainer" and "automountServiceAccountToken" not in spec
    objects, _ = _objects(make_job(api_version))
    assert _pod(objects, "StatefulSet/pi-worker")["spec"]["automountServiceAccountToken"] is False


@pytest.mark.parametrize("api_version", [V1, V2BETA1])
def test_a_template_replica_index_label_is_not_given_to_every_worker(api_version: str) -> None:
    worker = {"metadata": {"labels": {names.REPLICA_INDEX_LABEL: "3"}}, **pod("worker")}
    objects, warnings = _objects(make_job(api_version, worker=worker))
    assert names.REPLICA_INDEX_LABEL not in _pod(objects, "StatefulSet/pi-worker")["metadata"]["labels"]
    assert any(names.REPLICA_INDEX_LABEL in w and "not copied" in w for w in warnings), warnings


def test_a_launchers_own_hostname_is_replaced_with_a_warning() -> None:
    launcher = pod("launcher", command=COMMAND)
    launcher["spec"]["hostname"] = "head"
    objects, warnings = _objects(make_job(V2BETA1, launcher=launcher))
    assert _pod(objects, "Job/pi-launcher")["spec"]["hostname"] == "pi-launcher"
    assert any(
        w.startswith("spec.mpiReplicaSpecs.Launcher.template.spec.hostname:") and '"head" is replaced' in w
        for w in warnings
    ), warnings


@pytest.mark.parametrize("api_version", [V1, V2BETA1])
def test_min_resources_carry_only_what_the_pods_ask_for(api_version: str) -> None:
    from mpigen.compiler import compile_job

    worker = pod("worker", resources={"limits": {"nvidia.com/gpu": 1}})
    launcher = pod("launcher", command=COMMAND, resources={"requests": {"cpu": "1"}})
    # v1: a Worker with no replicas; v2beta1: minAvailable 1, the gang the launcher alone
    job = make_job(
        api_version,
        0 if api_version == V1 else 2,
        worker=worker,
        launcher=launcher,
        annotations={"mpigen.dev/gang-scheduler": "volcano"},
    )
    if api_version == V2BETA1:
        job["spec"]["runPolicy"] = {"schedulingPolicy": {"minAvailable": 1}}
    group = next(o for o in compile_job(job).objects if o["kind"] == "PodGroup")
    assert group["spec"]["minResources"] == {"cpu": "1"}
