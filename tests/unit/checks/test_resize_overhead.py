"""resizePolicy and pod overhead as kube-apiserver 1.37 checks them, and the overhead its default
admission (RuntimeClass) refuses in every pod; tests/cluster/test_pod_rules.py (families `resize`,
`overhead`) compares these rules with the real server."""

from __future__ import annotations

from typing import Any

import pytest

from mpigen.checks.pod import check_object


def job(pod: dict[str, Any]) -> dict[str, Any]:
    spec = {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "OnFailure", **pod}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {"template": {"spec": spec}},
    }


def messages(pod: dict[str, Any]) -> list[str]:
    return [v.body for v in check_object(job(pod), (1, 37))]


def resize(*policies: tuple[str, str], **container: Any) -> dict[str, Any]:
    listed = [{"resourceName": name, "restartPolicy": policy} for name, policy in policies]
    return {"containers": [{"name": "c", "image": "i", "resizePolicy": listed, **container}]}


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        (resize(("cpu", "NotRequired"), ("memory", "RestartContainer")), []),
        (resize(("cpu", "NotRequired"), ("cpu", "NotRequired")), ['Duplicate value: "cpu"']),
        (resize(("gpu", "NotRequired")), ['Unsupported value: "gpu": supported values: "cpu", "memory"']),
        (
            resize(("cpu", "Always")),
            ['Unsupported value: "Always": supported values: "NotRequired", "RestartContainer"'],
        ),
        (resize(("", "")), ["Required value", "Required value"]),
        (
            {**resize(("memory", "RestartContainer")), "restartPolicy": "Never"},
            [
                "Invalid value: \"RestartContainer\": must be 'NotRequired' when pod `restartPolicy` is 'Never'"
            ],
        ),
    ],
)
def test_resize_policies(pod: dict[str, Any], expected: list[str]) -> None:
    assert messages(pod) == expected


def test_only_a_sidecar_init_container_may_restart_on_resize() -> None:
    policy = [{"resourceName": "cpu", "restartPolicy": "RestartContainer"}]
    init = {"name": "init", "image": "i", "resizePolicy": policy}
    assert messages({"initContainers": [init]}) == [
        "Invalid value: \"RestartContainer\": must not be set to 'RestartContainer' for non-sidecar initContainers"
    ]
    assert messages({"initContainers": [{**init, "restartPolicy": "Always"}]}) == []


def test_overhead_is_checked_as_limits_and_needs_a_runtime_class() -> None:
    assert messages({"overhead": {"cpu": "100m"}, "runtimeClassName": "kata"}) == []
    assert [
        v.path for v in check_object(job({"overhead": {"cpu": "-1"}, "runtimeClassName": "kata"}), (1, 37))
    ] == [("spec", "template", "spec", "overhead", "limits", "cpu")]
    (refused,) = messages({"overhead": {"cpu": "100m"}})
    assert refused.startswith("Forbidden: set without a runtimeClassName")
