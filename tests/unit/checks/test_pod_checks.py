"""mpigen.checks.pod in process: where pod templates are found, rules that depend on the Kubernetes version,
fields the server defaults, and how a refusal reaches the input job's field. The verdicts themselves are
held to a real kube-apiserver's by tests/cluster/test_pod_rules.py."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import V1ALPHA1, V2BETA1, make_job, pod

import mpigen
from mpigen.checks.pod import check_object, pod_templates, server_path

POD = {"spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]}}


def bad(**fields: Any) -> dict[str, Any]:
    return {"spec": {**POD["spec"], **fields}}


def job(spec: dict[str, Any]) -> dict[str, Any]:
    """A Job running a pod of `spec` (restartPolicy Never unless `spec` says otherwise)."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "spec": {"template": {"spec": {"restartPolicy": "Never", **spec}}},
    }


def texts(obj: dict[str, Any], version: tuple[int, int] = (1, 37)) -> list[str]:
    return [f"{server_path(v.path)}: {v.body}" for v in check_object(obj, version)]


@pytest.mark.parametrize(
    ("obj", "paths"),
    [
        ({"apiVersion": "apps/v1", "kind": "StatefulSet", "spec": {"template": POD}}, [("spec", "template")]),
        (
            {
                "apiVersion": "batch/v1",
                "kind": "CronJob",
                "spec": {"jobTemplate": {"spec": {"template": POD}}},
            },
            [("spec", "jobTemplate", "spec", "template")],
        ),
        (
            {
                "apiVersion": "jobset.x-k8s.io/v1alpha2",
                "kind": "JobSet",
                "spec": {
                    "replicatedJobs": [
                        {"template": {"spec": {"template": POD}}},
                        {"template": {"spec": {"template": POD}}},
                    ]
                },
            },
            [
                ("spec", "replicatedJobs", 0, "template", "spec", "template"),
                ("spec", "replicatedJobs", 1, "template", "spec", "template"),
            ],
        ),
        (
            {
                "apiVersion": "batch.volcano.sh/v1alpha1",
                "kind": "Job",
                "spec": {"tasks": [{"template": POD}]},
            },
            [("spec", "tasks", 0, "template")],
        ),
        ({"apiVersion": "v1", "kind": "ConfigMap", "data": {"template": "x"}}, []),
    ],
)
def test_pod_templates_are_found_by_kind(obj: dict[str, Any], paths: list[tuple[Any, ...]]) -> None:
    assert [path for path, _ in pod_templates(obj)] == paths


def test_a_jobset_template_is_checked_at_its_own_path() -> None:
    template = bad(dnsPolicy="Sometimes")
    obj = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "spec": {
            "replicatedJobs": [
                {"template": {"spec": {"template": POD}}},
                {"template": {"spec": {"template": template}}},
            ]
        },
    }
    expected = (
        'spec.replicatedJobs[1].template.spec.template.spec.dnsPolicy: Unsupported value: "Sometimes": '
        'supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"'
    )
    assert texts(obj) == [expected]


def test_env_names_are_relaxed_from_kubernetes_1_32() -> None:
    obj = job({"containers": [{"name": "main", "image": "x", "env": [{"name": "MY VAR", "value": "1"}]}]})
    assert texts(obj, (1, 32)) == []
    expected = (
        'spec.template.spec.containers[0].env[0].name: Invalid value: "MY VAR": a valid environment '
        "variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit"
    )
    assert texts(obj, (1, 31)) == [expected]


def test_fields_the_server_defaults_are_not_refused_empty() -> None:
    container = {
        "name": "main",
        "image": "x",
        "imagePullPolicy": "",
        "terminationMessagePolicy": "",
        "ports": [{"containerPort": 80, "protocol": ""}],
        "livenessProbe": {"exec": {"command": ["true"]}, "successThreshold": 0},
    }
    obj = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "spec": {"template": {"spec": {"dnsPolicy": "", "restartPolicy": "", "containers": [container]}}},
    }
    assert texts(obj) == []


@pytest.mark.parametrize(
    ("quantity", "refused"),
    [
        ("1", False),
        ("500m", False),
        ("1.G", False),
        (".5", False),
        ("1e3", False),
        ("1E", False),
        (0.25, False),
        ("one", True),
        ("1GB", True),
        ("1K", True),
        ("1e", True),
        ("1Ki5", True),
        ("-1", True),
    ],
)
def test_quantities_as_the_server_reads_them(quantity: object, refused: bool) -> None:
    container = {"name": "main", "image": "x", "resources": {"requests": {"memory": quantity}}}
    assert bool(texts(job({"containers": [container]}))) is refused


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            job({**POD["spec"], "restartPolicy": "Always"}),
            ['spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'],
        ),
        (job({**POD["spec"], "activeDeadlineSeconds": 60}), []),
        (
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "spec": {"template": bad(activeDeadlineSeconds=60)},
            },
            [
                "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported"
            ],
        ),
    ],
)
def test_what_each_workload_asks_of_its_template(obj: dict[str, Any], expected: list[str]) -> None:
    assert texts(obj) == expected


def test_a_refusal_is_reported_at_the_input_field_and_names_the_server_field() -> None:
    job = make_job(
        V2BETA1,
        worker=pod(
            "worker", ports=[{"name": "http", "containerPort": 80}, {"name": "http", "containerPort": 81}]
        ),
    )
    with pytest.raises(mpigen.CompileError) as caught:
        mpigen.compile(job)
    (issue,) = caught.value.issues
    assert issue.path == (
        "spec",
        "mpiReplicaSpecs",
        "Worker",
        "template",
        "spec",
        "containers",
        0,
        "ports",
        1,
        "name",
    )
    assert (
        issue.message
        == 'the API server would refuse StatefulSet pi-worker: spec.template.spec.containers[0].ports[1].name: Duplicate value: "http"'
    )


def test_one_template_for_both_roles_is_reported_once() -> None:
    job = make_job(V1ALPHA1, worker=pod("worker", imagePullPolicy="Sometimes"))
    with pytest.raises(mpigen.CompileError) as caught:
        mpigen.compile(job)
    assert [issue.path for issue in caught.value.issues] == [
        ("spec", "template", "spec", "containers", 0, "imagePullPolicy")
    ]


def test_no_validate_skips_the_pod_rules() -> None:
    job = make_job(V2BETA1, worker=bad(dnsPolicy="Sometimes"))
    assert mpigen.compile(job, mpigen.Options(validate=False))
