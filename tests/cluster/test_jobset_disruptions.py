"""Disruptions do not use up a JobSet's restarts (`--target jobset`), on the real JobSet v0.12
controller, kube-controller-manager's Job controller (k8s v1.37.2) and kwok nodes.

A pod evicted through the Eviction API or by `kubectl drain` gets the `DisruptionTarget` condition from the
API server; kwok's `pod-disrupted` stage (controlplane.py) then fails it as a kubelet would (exit 137,
phase Failed, conditions kept). The Job's podFailurePolicy fails the Job with reason `PodFailurePolicy`, and
mpigen's JobSet rule restarts the whole JobSet without counting: `status.restarts` grows,
`status.restartsCountTowardsMax` does not. A container that exits 1 counts, and past maxRestarts (the run
policy's backoffLimit) the JobSet fails. With `--no-free-disruptions` an eviction counts like a failure.
A v2beta1 launcher (its replica spec OnFailure, run Never on this target) evicted is free, its exit 1
counts. A TrainJob (departure 16 of its table) restarts whole on a node's eviction without counting and
completes; without free disruptions its node Job replaces the evicted pod and counts it, as Trainer's does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from controlplane import Cluster, end_pod
from jobs import V1, V2BETA1, make_job
from test_jobset import RESTART_ATTEMPT, conditions, pods_of, ready, running_launcher
from test_jobset_target import apply, namespace, rendered, the_jobset

from mpigen.compiler import compile_job
from mpigen.inputs.trainjob import Runtimes
from mpigen.options import Options

RUNTIME: dict[str, Any] = yaml.safe_load(
    (Path(__file__).resolve().parents[2] / "examples/trainjob/runtime.yaml").read_text()
)

__all__ = ["namespace"]  # the fixture, shared with test_jobset_target.py


def evict(cluster: Cluster, namespace: str, pod: str) -> None:
    """POST an Eviction for `pod` (what `kubectl drain` does for each pod of a node)."""
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


def status(cluster: Cluster, namespace: str, name: str) -> dict[str, Any]:
    found: dict[str, Any] = cluster.get("jobset", name, "-n", namespace).get("status", {})
    return found


def restarted(cluster: Cluster, namespace: str, name: str, restarts: int) -> dict[str, Any]:
    """The JobSet's status once it has restarted `restarts` times and every pod of that attempt is Ready."""

    def done() -> dict[str, Any] | None:
        found = status(cluster, namespace, name)
        pods = pods_of(cluster, namespace, name)
        attempt = {p["metadata"]["labels"].get(RESTART_ATTEMPT) for p in pods}
        if found.get("restarts", 0) == restarts and attempt == {str(restarts)} and all(map(ready, pods)):
            return found
        return None

    found: dict[str, Any] = cluster.wait_for(f"jobset/{name} restarted {restarts} times", done, timeout=90)
    return found


def a_worker(cluster: Cluster, namespace: str, name: str, attempt: int) -> dict[str, Any]:
    def found() -> dict[str, Any] | None:
        pods = [
            p
            for p in pods_of(cluster, namespace, name, "worker")
            if p["metadata"]["labels"].get(RESTART_ATTEMPT) == str(attempt) and ready(p)
        ]
        return pods[0] if pods else None

    pod: dict[str, Any] = cluster.wait_for(f"a Ready worker of attempt {attempt}", found, timeout=60)
    return pod


def _render(name: str, namespace: str, options: Options | None = None) -> list[dict[str, Any]]:
    job = make_job(V2BETA1, 2, name=name, namespace=namespace, runPolicy={"backoffLimit": 1})
    objects = rendered(job, (options or Options()).replace(ssh_secret="keys"))
    assert the_jobset(objects)["spec"]["failurePolicy"]["maxRestarts"] == 1
    return objects


def test_evicted_and_drained_workers_restart_the_jobset_without_counting(
    jobset_cluster: Cluster, namespace: str
) -> None:
    cluster, name = jobset_cluster, "evicted"
    apply(cluster, namespace, _render(name, namespace))
    running_launcher(cluster, namespace, name, 0)

    evict(cluster, namespace, a_worker(cluster, namespace, name, 0)["metadata"]["name"])
    found = restarted(cluster, namespace, name, 1)
    assert found.get("restartsCountTowardsMax", 0) == 0

    node = a_worker(cluster, namespace, name, 1)["spec"]["nodeName"]
    try:
        cluster.kubectl(
            "drain",
            node,
            "--ignore-daemonsets",
            "--delete-emptydir-data",
            "--pod-selector",
            f"jobset.sigs.k8s.io/jobset-name={name}",
            "--timeout=60s",
        )
        found = restarted(cluster, namespace, name, 2)
    finally:
        cluster.kubectl("uncordon", node)
    assert found.get("restartsCountTowardsMax", 0) == 0
    assert "Failed" not in conditions(cluster, namespace, name)

    end_pod(cluster, namespace, running_launcher(cluster, namespace, name, 2), "Succeeded")
    cluster.wait_for(
        f"jobset/{name} Completed", lambda: "Completed" in conditions(cluster, namespace, name), timeout=60
    )


def test_an_evicted_launcher_that_never_restarts_in_place_is_free_too(
    jobset_cluster: Cluster, namespace: str
) -> None:
    """kubeflow.org/v1's launcher is `restartPolicy: Never`, so its Job carries the podFailurePolicy."""
    cluster, name = jobset_cluster, "launcher"
    job = make_job(V1, 1, name=name, namespace=namespace, runPolicy={"backoffLimit": 0})
    apply(cluster, namespace, rendered(job, Options()))
    evict(cluster, namespace, running_launcher(cluster, namespace, name, 0))
    assert restarted(cluster, namespace, name, 1).get("restartsCountTowardsMax", 0) == 0
    end_pod(cluster, namespace, running_launcher(cluster, namespace, name, 1), "Succeeded")
    cluster.wait_for(
        f"jobset/{name} Completed", lambda: "Completed" in conditions(cluster, namespace, name), timeout=60
    )


def test_an_evicted_v2beta1_launcher_is_free_as_it_never_restarts_in_place(
    jobset_cluster: Cluster, namespace: str
) -> None:
    """v2beta1's launcher replica is `restartPolicy: OnFailure`; the jobset target runs it `Never` with
    the podFailurePolicy, so its eviction restarts the JobSet without counting, and its exit 1 counts."""
    cluster, name = jobset_cluster, "v2launcher"
    objects = _render(name, namespace)
    [launcher] = [r for r in the_jobset(objects)["spec"]["replicatedJobs"] if r["name"] == "launcher"]
    assert launcher["template"]["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    apply(cluster, namespace, objects)
    evict(cluster, namespace, running_launcher(cluster, namespace, name, 0))
    assert restarted(cluster, namespace, name, 1).get("restartsCountTowardsMax", 0) == 0
    end_pod(cluster, namespace, running_launcher(cluster, namespace, name, 1), "Failed")
    assert restarted(cluster, namespace, name, 2).get("restartsCountTowardsMax") == 1
    end_pod(cluster, namespace, running_launcher(cluster, namespace, name, 2), "Succeeded")
    cluster.wait_for(
        f"jobset/{name} Completed", lambda: "Completed" in conditions(cluster, namespace, name), timeout=60
    )


def _train_job(name: str, namespace: str, annotations: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The TrainJob example (runtime of examples/trainjob, Trainer's shipped-runtime shape) on 2 nodes."""
    runtimes = Runtimes()
    assert runtimes.add(RUNTIME, Options()) == []
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if annotations:
        metadata["annotations"] = annotations
    job = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": metadata,
        "spec": {"runtimeRef": {"name": RUNTIME["metadata"]["name"]}, "trainer": {"numNodes": 3}},
    }
    return compile_job(job, Options(ssh_secret="keys"), runtimes=runtimes).objects


def test_a_disrupted_trainjob_restarts_whole_without_counting(
    jobset_cluster: Cluster, namespace: str
) -> None:
    """A TrainJob's JobSet (departure 16): a node pod evicted fails its Job by the podFailurePolicy and the
    JobSet restarts whole, `restarts` 1 and `restartsCountTowardsMax` 0 (the runtime allows no counted
    restart), then completes; a launcher that exits 1 is retried by its Job (backoffLimit, Trainer's too)."""
    cluster, name = jobset_cluster, "tj"
    apply(cluster, namespace, _train_job(name, namespace))
    running_launcher(cluster, namespace, name, 0)
    evict(cluster, namespace, _a_pod(cluster, namespace, name, "node", 0))
    assert restarted(cluster, namespace, name, 1).get("restartsCountTowardsMax", 0) == 0
    end_pod(cluster, namespace, running_launcher(cluster, namespace, name, 1), "Failed")
    cluster.wait_for(
        "the launcher Job's failed pod counted",
        lambda: (
            cluster.get("job", f"{name}-launcher-0", "-n", namespace).get("status", {}).get("failed") == 1
        ),
        timeout=60,
    )
    end_pod(cluster, namespace, running_launcher(cluster, namespace, name, 1), "Succeeded")
    cluster.wait_for(
        f"jobset/{name} Completed", lambda: "Completed" in conditions(cluster, namespace, name), timeout=60
    )
    assert status(cluster, namespace, name)["restarts"] == 1


def test_without_free_disruptions_a_trainjobs_evicted_node_is_counted_by_its_job(
    jobset_cluster: Cluster, namespace: str
) -> None:
    """As Trainer's JobSet: the node Job replaces the evicted pod and counts it (`status.failed`); the
    JobSet does not restart."""
    cluster, name = jobset_cluster, "tjcounted"
    off = {"mpigen.dev/free-disruptions": "false"}
    apply(cluster, namespace, _train_job(name, namespace, off))
    running_launcher(cluster, namespace, name, 0)
    evict(cluster, namespace, _a_pod(cluster, namespace, name, "node", 0))
    cluster.wait_for(
        "the node Job's evicted pod counted",
        lambda: cluster.get("job", f"{name}-node-0", "-n", namespace).get("status", {}).get("failed") == 1,
        timeout=60,
    )
    assert status(cluster, namespace, name).get("restarts", 0) == 0


def _a_pod(cluster: Cluster, namespace: str, name: str, rjob: str, attempt: int) -> str:
    def found() -> str | None:
        pods = [
            p
            for p in pods_of(cluster, namespace, name, rjob)
            if p["metadata"]["labels"].get(RESTART_ATTEMPT) == str(attempt) and ready(p)
        ]
        return pods[0]["metadata"]["name"] if pods else None

    pod: str = cluster.wait_for(f"a Ready {rjob} pod of attempt {attempt}", found, timeout=60)
    return pod


def test_a_failing_container_counts_and_past_the_budget_the_jobset_fails(
    jobset_cluster: Cluster, namespace: str
) -> None:
    cluster, name = jobset_cluster, "fails"
    apply(cluster, namespace, _render(name, namespace))
    end_pod(cluster, namespace, a_worker(cluster, namespace, name, 0)["metadata"]["name"], "Failed")
    assert restarted(cluster, namespace, name, 1).get("restartsCountTowardsMax") == 1
    # The budget is spent, and a disruption still restarts the JobSet.
    evict(cluster, namespace, a_worker(cluster, namespace, name, 1)["metadata"]["name"])
    assert restarted(cluster, namespace, name, 2).get("restartsCountTowardsMax") == 1

    end_pod(cluster, namespace, a_worker(cluster, namespace, name, 2)["metadata"]["name"], "Failed")
    cluster.wait_for(
        f"jobset/{name} Failed", lambda: "Failed" in conditions(cluster, namespace, name), timeout=60
    )
    [failed] = [c for c in status(cluster, namespace, name)["conditions"] if c["type"] == "Failed"]
    assert failed["reason"] == "ReachedMaxRestarts"
    assert status(cluster, namespace, name)["restarts"] == 2


def test_without_free_disruptions_an_eviction_counts(jobset_cluster: Cluster, namespace: str) -> None:
    cluster, name = jobset_cluster, "counted"
    apply(cluster, namespace, _render(name, namespace, Options(free_disruptions=False)))
    evict(cluster, namespace, a_worker(cluster, namespace, name, 0)["metadata"]["name"])
    assert restarted(cluster, namespace, name, 1).get("restartsCountTowardsMax") == 1
