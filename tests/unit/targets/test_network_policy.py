"""`--network-policy same-job`: one NetworkPolicy whose selector picks the job's launcher and worker pods
(whatever labels their templates carry) and not its clean-up and key Jobs' pods, nor another job's."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import V1, V1ALPHA1, V1ALPHA2, V2BETA1, make_job, pod

import mpigen
from mpigen.options import Options

SAME_JOB = Options(network_policy="same-job")


def pod_labels(objects: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    return {
        o["metadata"]["name"]: o["spec"]["template"]["metadata"]["labels"]
        for o in objects
        if "template" in o.get("spec", {})
    }


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    return selector["matchLabels"].items() <= labels.items()


@pytest.mark.parametrize("version", [V1ALPHA1, V1ALPHA2, V1, V2BETA1])
def test_the_policy_selects_the_launcher_and_workers_only(version: str) -> None:
    spec = {"runPolicy": {"cleanPodPolicy": "All"}} if version in (V1, V2BETA1) else {"cleanPodPolicy": "All"}
    job = make_job(version, **({} if version == V1ALPHA1 else spec))
    objects = mpigen.compile(job, SAME_JOB)
    other = pod_labels(
        mpigen.compile(make_job(version, name="other", **({} if version == V1ALPHA1 else spec)))
    )
    (policy,) = [o for o in objects if o["kind"] == "NetworkPolicy"]
    assert policy["metadata"]["name"] == "pi" and policy["spec"]["policyTypes"] == ["Ingress"]
    selector = policy["spec"]["podSelector"]
    assert policy["spec"]["ingress"] == [{"from": [{"podSelector": selector}]}]
    chosen = {name for name, labels in pod_labels(objects).items() if selects(selector, labels)}
    assert chosen == {"pi-launcher", "pi-worker"}
    assert not [name for name, labels in other.items() if selects(selector, labels)]


def test_a_templates_own_labels_do_not_move_its_pods_out() -> None:
    labels = {"training.kubeflow.org/job-name": "elsewhere", "app.kubernetes.io/instance": "elsewhere"}
    worker = pod("worker")
    worker["metadata"] = {"labels": labels}
    objects = mpigen.compile(make_job(V2BETA1, worker=worker), SAME_JOB)
    (policy,) = [o for o in objects if o["kind"] == "NetworkPolicy"]
    assert selects(policy["spec"]["podSelector"], pod_labels(objects)["pi-worker"])


def test_no_policy_unless_asked() -> None:
    assert not [o for o in mpigen.compile(make_job(V2BETA1)) if o["kind"] == "NetworkPolicy"]
