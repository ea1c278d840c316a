"""Disruptions on the operator target, on kube-controller-manager's Job and StatefulSet
controllers (k8s v1.37.2), kube-scheduler and kwok nodes (the `workloads` control plane).

A kubeflow.org/v1 launcher (`restartPolicy: Never`) evicted through the Eviction API is replaced by a new
launcher pod that its Job does not count (`status.failed` stays 0 under `backoffLimit: 0`), and the job
then completes; with `--no-free-disruptions` the same eviction fails the Job. An evicted worker comes back
under its own name from the StatefulSet and the launcher Job counts nothing; what mpirun does when it
loses that rank is the launcher's exit code, which no policy can tell from a crash (docs/departures.md,
"Disruptions").
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from controlplane import Cluster, end_pod
from mpijobs import job, manifest

import mpigen
from mpigen.options import Options


@pytest.fixture
def namespace(workloads: Cluster, request: pytest.FixtureRequest) -> str:
    return workloads.create_namespace("d-" + request.node.name.lower().replace("_", "-")[:40].strip("-[]"))


def evict(cluster: Cluster, namespace: str, pod: str) -> None:
    eviction = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": pod, "namespace": namespace},
    }
    cluster.kubectl(
        "create",
        "--raw",
        f"/api/v1/namespaces/{namespace}/pods/{pod}/eviction",
        "-f",
        "-",
        input=json.dumps(eviction),
    )


def render(namespace: str, options: Options) -> list[dict[str, Any]]:
    mpijob = job("v1", "dis", workers=2, runPolicy={"backoffLimit": 0})
    mpijob["metadata"]["namespace"] = namespace
    return mpigen.compile(mpijob, options)


def live_pods(cluster: Cluster, namespace: str, selector: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = cluster.get("pods", "-n", namespace, "-l", selector)["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def running_launcher(cluster: Cluster, namespace: str, but: str | None = None) -> str:
    def found() -> str | None:
        pods = [
            p["metadata"]["name"]
            for p in live_pods(cluster, namespace, "job-name=dis-launcher")
            if p.get("status", {}).get("phase") == "Running" and p["metadata"]["name"] != but
        ]
        return pods[0] if pods else None

    pod: str = cluster.wait_for("a running launcher pod" + (f" other than {but}" if but else ""), found)
    return pod


def job_status(cluster: Cluster, namespace: str) -> dict[str, Any]:
    found: dict[str, Any] = cluster.get("job", "dis-launcher", "-n", namespace).get("status", {})
    return found


def true_conditions(status: dict[str, Any]) -> set[str]:
    return {c["type"] for c in status.get("conditions", []) if c["status"] == "True"}


def test_an_evicted_launcher_is_replaced_without_counting(workloads: Cluster, namespace: str) -> None:
    cluster = workloads
    objects = render(namespace, Options())
    [launcher_job] = [o for o in objects if o["kind"] == "Job" and o["metadata"]["name"] == "dis-launcher"]
    assert launcher_job["spec"]["backoffLimit"] == 0 and "podFailurePolicy" in launcher_job["spec"]
    cluster.kubectl("apply", "-f", "-", input=manifest(objects))
    first = running_launcher(cluster, namespace)
    evict(cluster, namespace, first)
    second = running_launcher(cluster, namespace, but=first)
    status = job_status(cluster, namespace)
    assert status.get("failed", 0) == 0 and "Failed" not in true_conditions(status), status
    end_pod(cluster, namespace, second, "Succeeded")
    cluster.wait_for(
        "job/dis-launcher Complete", lambda: "Complete" in true_conditions(job_status(cluster, namespace))
    )
    assert job_status(cluster, namespace).get("failed", 0) == 0


def test_without_free_disruptions_an_evicted_launcher_fails_the_job(
    workloads: Cluster, namespace: str
) -> None:
    cluster = workloads
    cluster.kubectl("apply", "-f", "-", input=manifest(render(namespace, Options(free_disruptions=False))))
    evict(cluster, namespace, running_launcher(cluster, namespace))
    cluster.wait_for(
        "job/dis-launcher Failed", lambda: "Failed" in true_conditions(job_status(cluster, namespace))
    )
    assert job_status(cluster, namespace)["failed"] == 1


def test_an_evicted_worker_comes_back_under_its_name_and_the_launcher_counts_nothing(
    workloads: Cluster, namespace: str
) -> None:
    cluster = workloads
    cluster.kubectl("apply", "-f", "-", input=manifest(render(namespace, Options())))
    running_launcher(cluster, namespace)
    worker = cluster.get("pod", "dis-worker-1", "-n", namespace)
    evict(cluster, namespace, "dis-worker-1")

    def back() -> bool:
        found = cluster.find("pod", "dis-worker-1", "-n", namespace)
        return bool(
            found
            and found["metadata"]["uid"] != worker["metadata"]["uid"]
            and found.get("status", {}).get("phase") == "Running"
        )

    cluster.wait_for("dis-worker-1 recreated by its StatefulSet", back, timeout=60)
    status = job_status(cluster, namespace)
    assert status.get("failed", 0) == 0 and status.get("active") == 1, status
