"""What a static compile adds so the job runs without the operator (docs/runtime.md)."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner
from jobs import V1ALPHA1, make_job, pod

import mpigen
from mpigen.cli import cli
from mpigen.options import Options


def v2job(policy: str | None = None, worker_pod: dict[str, Any] | None = None) -> dict[str, Any]:
    worker = pod("worker")
    worker["spec"].update(worker_pod or {})
    return make_job(worker=worker, **({"cleanPodPolicy": policy} if policy else {}))


def v1job() -> dict[str, Any]:
    return make_job(V1ALPHA1, workers=None, gpus=16)


def find(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    matches = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(matches) == 1, f"{kind}/{name}: {len(matches)} found"
    return matches[0]


def pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = obj["spec"]["template"]["spec"]
    return spec


def matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return selector.items() <= labels.items()


@pytest.mark.parametrize(
    "options", [Options(), Options(gang_scheduler="volcano"), Options(gang_scheduler="scheduler-plugins")]
)
@pytest.mark.parametrize("job", [v1job(), v2job("All"), v2job()])
def test_every_object_and_pod_carries_the_standard_labels(job: dict[str, Any], options: Options) -> None:
    for obj in mpigen.compile(job, options):
        labels = obj["metadata"]["labels"]
        assert labels["app.kubernetes.io/instance"] == "pi"
        assert labels["app.kubernetes.io/name"] == "mpijob"
        assert labels["app.kubernetes.io/managed-by"] == "mpigen"
        assert labels["app.kubernetes.io/component"]
        if "template" in obj.get("spec", {}):
            assert obj["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/instance"] == "pi"


def test_selectors_stay_exactly_the_operators() -> None:
    sts = find(mpigen.compile(v2job()), "StatefulSet", "pi-worker")
    assert sts["spec"]["selector"] == {
        "matchLabels": {"group_name": "kubeflow.org", "mpi_job_name": "pi", "mpi_role_type": "worker"}
    }


def test_headless_service_selects_the_worker_pods() -> None:
    objects = mpigen.compile(v2job())
    service = find(objects, "Service", "pi-worker")
    sts = find(objects, "StatefulSet", "pi-worker")
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["publishNotReadyAddresses"] is True
    assert sts["spec"]["serviceName"] == "pi-worker"
    assert matches(service["spec"]["selector"], sts["spec"]["template"]["metadata"]["labels"])


def test_launcher_waits_for_workers_after_kubectl_delivery() -> None:
    objects = mpigen.compile(v2job(), Options(wait_timeout_seconds=1234))
    launcher = pod_spec(find(objects, "Job", "pi-launcher"))
    assert [c["name"] for c in launcher["initContainers"]] == ["kubectl-delivery", "wait-for-workers"]
    wait = launcher["initContainers"][1]
    assert wait["command"] == ["/bin/sh", "/etc/mpi/wait-for-workers.sh"]
    assert {m["mountPath"] for m in wait["volumeMounts"]} == {"/opt/kube", "/etc/mpi", "/tmp"}
    items = launcher["volumes"][-1]["configMap"]["items"]
    assert {"key": "wait-for-workers.sh", "path": "wait-for-workers.sh", "mode": 0o555} in items
    script = find(objects, "ConfigMap", "pi-config")["data"]["wait-for-workers.sh"]
    assert "1234" in script and "pi-worker" in script


def test_wait_needs_no_permission_beyond_the_launcher_role() -> None:
    role = find(mpigen.compile(v2job()), "Role", "pi-launcher")
    assert role["rules"][0] == {
        "apiGroups": [""],
        "resources": ["pods"],
        "verbs": ["get"],
        "resourceNames": ["pi-worker-0", "pi-worker-1"],
    }


@pytest.mark.parametrize(
    ("job", "cleans"),
    [
        (v1job(), True),
        (v2job("All"), True),
        (v2job("Running"), True),
        (v2job("None"), False),
        (v2job(), False),
    ],
)
def test_cleanup_follows_clean_pod_policy(job: dict[str, Any], cleans: bool) -> None:
    objects = mpigen.compile(job)
    cleanup = [(o["kind"], o["metadata"]["name"]) for o in objects if o["metadata"]["name"] == "pi-cleanup"]
    expected = [
        ("ServiceAccount", "pi-cleanup"),
        ("Role", "pi-cleanup"),
        ("RoleBinding", "pi-cleanup"),
        ("Job", "pi-cleanup"),
    ]
    assert cleanup == (expected if cleans else [])
    assert ("cleanup.sh" in find(objects, "ConfigMap", "pi-config")["data"]) is cleans


def test_cleanup_identity_is_least_privilege_and_not_the_launchers() -> None:
    objects = mpigen.compile(v2job("All"))
    job = find(objects, "Job", "pi-cleanup")
    assert pod_spec(job)["serviceAccountName"] == "pi-cleanup"
    assert job["spec"]["ttlSecondsAfterFinished"] > 0
    role = find(objects, "Role", "pi-cleanup")
    allowed = {"pi-launcher", "pi-cleanup", "pi-worker"}
    for rule in role["rules"]:
        assert rule["resourceNames"] and set(rule["resourceNames"]) <= allowed, rule
        # It deletes its own RoleBinding when done, and nothing else; it never patches that binding.
        deletes = {"delete"} if rule["resources"] == ["rolebindings"] else set()
        assert not ({"list", "watch", "delete", "deletecollection", "create", "*"} - deletes) & set(
            rule["verbs"]
        ), rule
        if rule["resources"] == ["rolebindings"]:
            assert rule["verbs"] == ["delete"] and rule["resourceNames"] == ["pi-cleanup"], rule
    binding = find(objects, "RoleBinding", "pi-cleanup")
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "pi-cleanup", "namespace": "ml"}]


def test_workers_get_no_token_unless_the_template_says() -> None:
    assert (
        pod_spec(find(mpigen.compile(v2job()), "StatefulSet", "pi-worker"))["automountServiceAccountToken"]
        is False
    )
    own = mpigen.compile(v2job(worker_pod={"automountServiceAccountToken": True}))
    assert pod_spec(find(own, "StatefulSet", "pi-worker"))["automountServiceAccountToken"] is True
    assert "automountServiceAccountToken" not in pod_spec(find(own, "Job", "pi-launcher"))


def test_volcano_gang() -> None:
    objects = mpigen.compile(v2job(), Options(gang_scheduler="volcano"))
    group = find(objects, "PodGroup", "pi")
    assert group["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    assert group["spec"]["minMember"] == 3
    for kind, name in (("StatefulSet", "pi-worker"), ("Job", "pi-launcher")):
        obj = find(objects, kind, name)
        assert pod_spec(obj)["schedulerName"] == "volcano"
        assert obj["spec"]["template"]["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == "pi"


def test_scheduler_plugins_gang_with_scheduler_name() -> None:
    objects = mpigen.compile(v2job(), Options(gang_scheduler="scheduler-plugins", scheduler_name="sp"))
    group = find(objects, "PodGroup", "pi")
    assert group["apiVersion"] == "scheduling.x-k8s.io/v1alpha1"
    for kind, name in (("StatefulSet", "pi-worker"), ("Job", "pi-launcher")):
        obj = find(objects, kind, name)
        assert pod_spec(obj)["schedulerName"] == "sp"
        assert obj["spec"]["template"]["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] == "pi"


def test_pdb_selects_the_worker_pods_for_real() -> None:
    objects = mpigen.compile(v1job(), Options(gang_scheduler="volcano"))
    pdb = find(objects, "PodDisruptionBudget", "pi-pdb")
    workers = find(objects, "StatefulSet", "pi-worker")
    assert pdb["apiVersion"] == "policy/v1"
    assert pdb["spec"]["minAvailable"] == 2
    assert matches(pdb["spec"]["selector"]["matchLabels"], workers["spec"]["template"]["metadata"]["labels"])
    assert not matches(
        pdb["spec"]["selector"]["matchLabels"],
        find(objects, "Job", "pi-launcher")["spec"]["template"]["metadata"]["labels"],
    )


def test_no_gang_objects_by_default() -> None:
    kinds = {o["kind"] for o in mpigen.compile(v2job())}
    assert not kinds & {"PodGroup", "PodDisruptionBudget"}


def test_user_scheduler_name_is_replaced_with_a_warning() -> None:
    """v1alpha2 as mpi-operator v0.3.0 `newWorker`: the gang scheduler's name overwrites the template's."""
    result = mpigen.compile_job(
        v2job(worker_pod={"schedulerName": "mine"}), Options(gang_scheduler="volcano")
    )
    assert pod_spec(find(result.objects, "StatefulSet", "pi-worker"))["schedulerName"] == "volcano"
    assert [(w.path[-2:], "is replaced by" in w.message) for w in result.warnings] == [
        (("spec", "schedulerName"), True)
    ]


def test_scheduler_name_without_gang_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["render", "--scheduler-name", "x"], input="")
    assert result.exit_code == 2
    assert "--scheduler-name needs --gang-scheduler" in result.stderr
