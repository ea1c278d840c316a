"""The JobSet and Kueue harness (jobset.py) with hand-written JobSets of the shape an MPI job takes: a
`worker` replicated job (one Indexed Job, a pod per worker) and a `launcher` that depends on the workers
being Ready. These prove the harness, on its own: the real JobSet v0.12 controller and Kueue v0.19 with
their webhooks, kube-controller-manager's Job, TTL and garbage-collector controllers, kube-scheduler and
kwok nodes. kwok makes pods Running and Ready (a pod annotated HOLD_ANNOTATION stays Pending until the
test lifts it) and never ends one: the test ends each launcher pod as its container would have.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import jobset
import pytest
from controlplane import HOLD_ANNOTATION, Cluster, end_pod

JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
REPLICATED_JOB = "jobset.sigs.k8s.io/replicatedjob-name"
RESTART_ATTEMPT = "jobset.sigs.k8s.io/restart-attempt"


def replicated_job(
    name: str, pods: int, *, hold: bool = False, depends_on: str | None = None, cpu: str = "100m"
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"annotations": {HOLD_ANNOTATION: "true"}} if hold else {}
    job: dict[str, Any] = {
        "name": name,
        "replicas": 1,
        "template": {
            "spec": {
                "parallelism": pods,
                "completions": pods,
                "completionMode": "Indexed",
                "backoffLimit": 0,
                "template": {
                    "metadata": metadata,
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [
                            {
                                "name": name,
                                "image": "registry.invalid/mpi:1",
                                "command": ["sleep", "infinity"],
                                "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}},
                            }
                        ],
                    },
                },
            }
        },
    }
    if depends_on:
        job["dependsOn"] = [{"name": depends_on, "status": "Ready"}]
    return job


def mpi_jobset(
    name: str,
    workers: int,
    *,
    max_restarts: int = 0,
    ttl: int | None = None,
    hold: bool = False,
    queue: str | None = None,
    cpu: str = "100m",
) -> dict[str, Any]:
    """A JobSet as an MPI job would be one, every default that matters written out (not left to the
    webhook): DNS host names, the launcher's success decides, restarts bounded."""
    spec: dict[str, Any] = {
        "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
        "successPolicy": {"operator": "All", "targetReplicatedJobs": ["launcher"]},
        "failurePolicy": {"maxRestarts": max_restarts},
        "replicatedJobs": [
            replicated_job("worker", workers, hold=hold, cpu=cpu),
            replicated_job("launcher", 1, depends_on="worker", cpu=cpu),
        ],
    }
    metadata: dict[str, Any] = {"name": name}
    if ttl is not None:
        spec["ttlSecondsAfterFinished"] = ttl
    if queue is not None:
        metadata["labels"] = {"kueue.x-k8s.io/queue-name": queue}
        spec["suspend"] = True
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": metadata, "spec": spec}


def pods_of(
    cluster: Cluster, namespace: str, name: str, replicated: str | None = None
) -> list[dict[str, Any]]:
    selector = f"{JOBSET_NAME}={name}" + (f",{REPLICATED_JOB}={replicated}" if replicated else "")
    items: list[dict[str, Any]] = cluster.get("pods", "-n", namespace, "-l", selector)["items"]
    return [pod for pod in items if not pod["metadata"].get("deletionTimestamp")]


def ready(pod: dict[str, Any]) -> bool:
    return any(
        c["type"] == "Ready" and c["status"] == "True" for c in pod.get("status", {}).get("conditions", [])
    )


def conditions(cluster: Cluster, namespace: str, name: str) -> set[str]:
    found = cluster.find("jobset", name, "-n", namespace)
    if found is None:
        return set()
    return {c["type"] for c in found.get("status", {}).get("conditions", []) if c["status"] == "True"}


def gone(cluster: Cluster, namespace: str, name: str) -> bool:
    listed = cluster.kubectl(
        "get", f"jobset/{name}", "-n", namespace, "--ignore-not-found", "-o", "name"
    ).stdout
    return (
        not listed.strip()
        and not cluster.get("pods,jobs", "-n", namespace, "-l", f"{JOBSET_NAME}={name}")["items"]
    )


def never(cluster: Cluster, what: str, happened: Callable[[], Any], seconds: float) -> None:
    """`happened()` stays false for `seconds` (the controllers get that long to do it wrongly)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        seen = happened()
        assert not seen, f"{what}: {seen!r}\n{cluster.logs_tail()}"
        time.sleep(0.5)


def running_launcher(cluster: Cluster, namespace: str, name: str, attempt: int = 0) -> str:
    def found() -> str | None:
        live = [
            p
            for p in pods_of(cluster, namespace, name, "launcher")
            if p["metadata"]["labels"].get(RESTART_ATTEMPT) == str(attempt) and ready(p)
        ]
        return live[0]["metadata"]["name"] if live else None

    pod: str = cluster.wait_for(
        f"the launcher pod of jobset/{name} (attempt {attempt}) running", found, timeout=60
    )
    return pod


@pytest.fixture
def namespace(jobset_cluster: Cluster, request: pytest.FixtureRequest) -> str:
    return jobset_cluster.create_namespace(
        "t-" + request.node.name.lower().replace("_", "-")[:40].strip("-[]")
    )


def test_launcher_waits_for_ready_workers_then_completes_and_expires(
    jobset_cluster: Cluster, namespace: str
) -> None:
    cluster, name = jobset_cluster, "mpi"
    cluster.kubectl(
        "apply",
        "--server-side",
        "-n",
        namespace,
        "-f",
        "-",
        input=json.dumps(mpi_jobset(name, workers=2, ttl=5, hold=True)),
    )

    # The workers' Indexed Job and pods, with the host names and headless Service that JobSet makes.
    workers = cluster.wait_for(
        "2 worker pods scheduled on fake nodes",
        lambda: (
            [
                p
                for p in pods_of(cluster, namespace, name, "worker")
                if p["spec"].get("nodeName", "").startswith("fake-")
            ]
            if len(pods_of(cluster, namespace, name, "worker")) == 2
            else None
        ),
        timeout=60,
    )
    assert sorted(p["spec"]["hostname"] for p in workers) == [f"{name}-worker-0-0", f"{name}-worker-0-1"]
    assert {p["spec"]["subdomain"] for p in workers} == {name}
    service = cluster.get("service", name, "-n", namespace)
    assert service["spec"]["clusterIP"] == "None" and service["spec"]["publishNotReadyAddresses"] is True
    assert service["spec"]["selector"] == {JOBSET_NAME: name}

    # No launcher while no worker is Ready, nor while one of two is.
    def launcher_exists() -> list[str]:
        return [
            j["metadata"]["name"]
            for j in cluster.get(
                "jobs", "-n", namespace, "-l", f"{JOBSET_NAME}={name},{REPLICATED_JOB}=launcher"
            )["items"]
        ]

    never(cluster, "launcher Job created while no worker is Ready", launcher_exists, 3)
    first, second = sorted(p["metadata"]["name"] for p in workers)
    cluster.kubectl("annotate", "pod", first, "-n", namespace, f"{HOLD_ANNOTATION}-")
    cluster.wait_for(f"{first} Ready", lambda: ready(cluster.get("pod", first, "-n", namespace)), timeout=30)
    never(cluster, "launcher Job created while 1 of 2 workers is Ready", launcher_exists, 3)
    cluster.kubectl("annotate", "pod", second, "-n", namespace, f"{HOLD_ANNOTATION}-")
    launcher = running_launcher(cluster, namespace, name)
    assert cluster.get("pod", launcher, "-n", namespace)["spec"]["hostname"] == f"{name}-launcher-0-0"

    # The launcher succeeds: the JobSet completes (its success policy names the launcher alone, the
    # workers still run), then its TTL deletes it with its Jobs and pods.
    end_pod(cluster, namespace, launcher, "Succeeded")
    cluster.wait_for(
        f"jobset/{name} Completed",
        lambda: "Completed" in conditions(cluster, namespace, name),
        timeout=60,
        interval=0.2,
    )
    cluster.wait_for(
        f"jobset/{name}, its Jobs and pods deleted after its TTL",
        lambda: gone(cluster, namespace, name),
        timeout=60,
    )


def test_failing_launcher_restarts_the_jobset_up_to_max_restarts(
    jobset_cluster: Cluster, namespace: str
) -> None:
    cluster, name = jobset_cluster, "fails"
    cluster.kubectl(
        "apply",
        "--server-side",
        "-n",
        namespace,
        "-f",
        "-",
        input=json.dumps(mpi_jobset(name, workers=2, max_restarts=1)),
    )

    for attempt in (0, 1):
        launcher = running_launcher(cluster, namespace, name, attempt)
        workers = pods_of(cluster, namespace, name, "worker")
        assert {p["metadata"]["labels"][RESTART_ATTEMPT] for p in workers} == {str(attempt)}
        assert len(workers) == 2 and all(ready(p) for p in workers)
        assert "Failed" not in conditions(cluster, namespace, name)
        end_pod(cluster, namespace, launcher, "Failed")

    cluster.wait_for(
        f"jobset/{name} Failed", lambda: "Failed" in conditions(cluster, namespace, name), timeout=60
    )
    status = cluster.get("jobset", name, "-n", namespace)["status"]
    assert status["restarts"] == 1
    assert "Completed" not in conditions(cluster, namespace, name)
    # A failed JobSet ends its workers and starts no third attempt: the one launcher pod left is the
    # failed one of the last attempt (a finished Job is not deleted, its pod keeps the logs).
    cluster.wait_for(
        "the workers deleted", lambda: not pods_of(cluster, namespace, name, "worker"), timeout=60
    )
    never(
        cluster,
        "a launcher pod other than the last attempt's failed one",
        lambda: [
            (p["metadata"]["labels"][RESTART_ATTEMPT], p["status"].get("phase"))
            for p in pods_of(cluster, namespace, name, "launcher")
            if (p["metadata"]["labels"][RESTART_ATTEMPT], p["status"].get("phase")) != ("1", "Failed")
        ],
        3,
    )


def workload_of(cluster: Cluster, namespace: str, name: str) -> dict[str, Any] | None:
    for workload in cluster.get("workloads.kueue.x-k8s.io", "-n", namespace)["items"]:
        owners = workload["metadata"].get("ownerReferences", [])
        if any(o["kind"] == "JobSet" and o["name"] == name for o in owners):
            found: dict[str, Any] = workload
            return found
    return None


def admitted(workload: dict[str, Any] | None) -> bool:
    conds = (workload or {}).get("status", {}).get("conditions", [])
    return any(c["type"] == "Admitted" and c["status"] == "True" for c in conds)


def test_kueue_admits_a_jobset_whole_when_quota_frees(kueue_cluster: Cluster, namespace: str) -> None:
    cluster = kueue_cluster
    # Room for one JobSet of 2 workers and a launcher at 1 cpu each: the launcher, held back by
    # dependsOn, counts at admission too.
    queue = jobset.queue(cluster, namespace, cpu="3", memory="1Gi")
    cluster.kubectl(
        "apply",
        "--server-side",
        "-n",
        namespace,
        "-f",
        "-",
        input=json.dumps(mpi_jobset("first", workers=2, queue=queue, cpu="1")),
    )
    first = running_launcher(cluster, namespace, "first")
    workload = workload_of(cluster, namespace, "first")
    assert admitted(workload), workload
    assert workload is not None
    assert {p["name"]: p["count"] for p in workload["spec"]["podSets"]} == {"worker": 2, "launcher": 1}

    cluster.kubectl(
        "apply",
        "--server-side",
        "-n",
        namespace,
        "-f",
        "-",
        input=json.dumps(mpi_jobset("second", workers=2, queue=queue, cpu="1")),
    )
    cluster.wait_for(
        "a Workload for jobset/second", lambda: workload_of(cluster, namespace, "second"), timeout=30
    )

    def second_started() -> list[str] | bool:
        pods = [p["metadata"]["name"] for p in pods_of(cluster, namespace, "second")]
        return (
            pods
            or admitted(workload_of(cluster, namespace, "second"))
            or not cluster.get("jobset", "second", "-n", namespace)["spec"].get("suspend")
        )

    never(cluster, "jobset/second started while jobset/first holds the quota", second_started, 5)

    end_pod(cluster, namespace, first, "Succeeded")
    cluster.wait_for(
        "jobset/first Completed", lambda: "Completed" in conditions(cluster, namespace, "first"), timeout=60
    )
    cluster.wait_for(
        "jobset/second admitted", lambda: admitted(workload_of(cluster, namespace, "second")), timeout=60
    )
    # Kueue admits the Workload first and then, in an update of its own, unsuspends the JobSet.
    cluster.wait_for(
        "jobset/second unsuspended",
        lambda: cluster.get("jobset", "second", "-n", namespace)["spec"]["suspend"] is False,
        timeout=30,
    )
    cluster.wait_for(
        "both workers of jobset/second Ready",
        lambda: len([p for p in pods_of(cluster, namespace, "second", "worker") if ready(p)]) == 2,
        timeout=60,
    )
    running_launcher(cluster, namespace, "second")


def test_kueue_never_starts_a_jobset_bigger_than_its_quota(kueue_cluster: Cluster, namespace: str) -> None:
    cluster = kueue_cluster
    queue = jobset.queue(cluster, namespace, cpu="2", memory="1Gi")
    cluster.kubectl(
        "apply",
        "--server-side",
        "-n",
        namespace,
        "-f",
        "-",
        input=json.dumps(mpi_jobset("big", workers=2, queue=queue, cpu="1")),
    )

    def pending_message() -> str | None:
        workload = workload_of(cluster, namespace, "big")
        conds = (workload or {}).get("status", {}).get("conditions", [])
        return next(
            (c["message"] for c in conds if c["type"] == "QuotaReserved" and c["status"] == "False"), None
        )

    message = cluster.wait_for("jobset/big's Workload pending", pending_message, timeout=30)
    assert "cpu" in message, message
    never(cluster, "a pod of jobset/big", lambda: pods_of(cluster, namespace, "big"), 3)
    assert cluster.get("jobset", "big", "-n", namespace)["spec"]["suspend"] is True
