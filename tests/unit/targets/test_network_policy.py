"""`--network-policy same-job`: one NetworkPolicy whose selector picks the job's launcher and worker pods
(whatever labels their templates carry) and not its clean-up and key Jobs' pods, nor another job's, on
every run target (the pods of a JobSet's replicated jobs and a Volcano Job's tasks alike)."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import V1, V1ALPHA1, V1ALPHA2, V2BETA1, make_job, pod

import mpigen
from mpigen.options import Options

TARGETS = ("operator", "jobset", "volcano")


def pod_labels(objects: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """Each pod template's labels, by `<object>` or `<object>-<replicated job or task>`."""
    found = {}
    for o in objects:
        spec, name = o.get("spec", {}), o["metadata"]["name"]
        if "template" in spec:
            found[name] = spec["template"]["metadata"]["labels"]
        for job in spec.get("replicatedJobs", []):
            found[f"{name}-{job['name']}"] = job["template"]["spec"]["template"]["metadata"]["labels"]
        for task in spec.get("tasks", []):
            found[f"{name}-{task['name']}"] = task["template"]["metadata"]["labels"]
    return found


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    return selector["matchLabels"].items() <= labels.items()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("version", [V1ALPHA1, V1ALPHA2, V1, V2BETA1])
def test_the_policy_selects_the_launcher_and_workers_only(version: str, target: str) -> None:
    spec = {"runPolicy": {"cleanPodPolicy": "All"}} if version in (V1, V2BETA1) else {"cleanPodPolicy": "All"}
    job = make_job(version, **({} if version == V1ALPHA1 else spec))
    objects = mpigen.compile(job, Options(network_policy="same-job", target=target))
    other = pod_labels(
        mpigen.compile(
            make_job(version, name="other", **({} if version == V1ALPHA1 else spec)), Options(target=target)
        )
    )
    (policy,) = [o for o in objects if o["kind"] == "NetworkPolicy"]
    assert policy["metadata"]["name"] == "pi" and policy["spec"]["policyTypes"] == ["Ingress"]
    selector = policy["spec"]["podSelector"]
    assert policy["spec"]["ingress"] == [{"from": [{"podSelector": selector}]}]
    labels_by_pod = pod_labels(objects)
    chosen = {name for name, labels in labels_by_pod.items() if selects(selector, labels)}
    assert chosen == {"pi-launcher", "pi-worker"}
    # The clean-up and key Jobs' pods (where the target has them) receive no traffic and are not chosen.
    assert set(labels_by_pod) - chosen == {
        ("operator", V1ALPHA1): {"pi-cleanup"},
        ("operator", V1ALPHA2): {"pi-cleanup"},
        ("operator", V1): {"pi-cleanup"},
        ("operator", V2BETA1): {"pi-cleanup", "pi-ssh-keygen"},
        ("jobset", V2BETA1): {"pi-ssh-keygen"},
    }.get((target, version), set())
    assert not [name for name, labels in other.items() if selects(selector, labels)]


@pytest.mark.parametrize("target", TARGETS)
def test_a_templates_own_labels_do_not_move_its_pods_out(target: str) -> None:
    labels = {"training.kubeflow.org/job-name": "elsewhere", "app.kubernetes.io/instance": "elsewhere"}
    worker = pod("worker")
    worker["metadata"] = {"labels": labels}
    objects = mpigen.compile(
        make_job(V2BETA1, worker=worker), Options(network_policy="same-job", target=target)
    )
    (policy,) = [o for o in objects if o["kind"] == "NetworkPolicy"]
    assert selects(policy["spec"]["podSelector"], pod_labels(objects)["pi-worker"])


@pytest.mark.parametrize("target", TARGETS)
def test_no_policy_unless_asked(target: str) -> None:
    assert not [
        o for o in mpigen.compile(make_job(V2BETA1), Options(target=target)) if o["kind"] == "NetworkPolicy"
    ]
