"""Disruptions on the volcano target (`--target volcano`), on the real Volcano v1.14.1 vc-controller-manager
and vc-scheduler with kwok nodes (`volcano_cluster`): every restart counts against `maxRetry`, evictions too,
as docs/departures.md ("Disruptions") says from Volcano's code.

Volcano v1.14.1 pkg/controllers/job/state/running.go and pending.go: each restart action (`RestartJob`,
`RestartTask`, `RestartPod`, `RestartPartition`) does `status.RetryCount++`, and restarting.go fails the Job
once `retryCount` reaches `maxRetry`; Volcano reads no `DisruptionTarget` condition (only its scheduler
does, for its own preemption). So no `policies` entry can restart for free, and mpigen renders none:
`PodEvicted` and `PodFailed` -> `RestartJob`.

What the test does, on a kubeflow.org/v1 job (launcher `restartPolicy: Never`) with `backoffLimit: 1`
(`maxRetry: 2`, two runs): an eviction of a worker through the Eviction API is refused by the workers'
PodDisruptionBudget (`minAvailable` = every worker: a drain waits instead of breaking the gang; this
control plane runs no disruption controller, so the budget is never even processed, and a processed one
allows 0 disruptions alike); the launcher, outside the budget, is evicted: kwok fails it as a kubelet
would (exit 137, `DisruptionTarget` kept), Volcano's `PodFailed` restarts the whole gang and
`retryCount` goes to 1; a worker that is lost (deleted, as the taint manager or a node's loss would) is
Volcano's `PodEvicted`: the second restart spends the budget and the Job is Failed with `retryCount` 2.
"""

from __future__ import annotations

import json
from typing import Any

from controlplane import Cluster
from jobs import V1, make_job
from test_volcano_target import apply, namespace, phase, running

__all__ = ["namespace"]  # the fixture, shared with test_volcano_target.py

Obj = dict[str, Any]


def evict(cluster: Cluster, namespace: str, pod: str) -> Any:
    """POST an Eviction for `pod`; the finished kubectl process (not checked)."""
    eviction = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": pod, "namespace": namespace},
    }
    return cluster.kubectl(
        "create",
        "--raw",
        f"/api/v1/namespaces/{namespace}/pods/{pod}/eviction",
        "-f",
        "-",
        input=json.dumps(eviction),
        check=False,
    )


def retry_count(cluster: Cluster, namespace: str, job: str) -> int:
    found: int = cluster.get("vcjob", job, "-n", namespace).get("status", {}).get("retryCount", 0)
    return found


def test_every_restart_counts_evictions_too(volcano_cluster: Cluster, namespace: str) -> None:
    cluster, name = volcano_cluster, "evicted"
    resources = {"requests": {"cpu": "100m"}, "limits": {"cpu": "100m"}}
    job = make_job(V1, 2, name=name, namespace=namespace, runPolicy={"backoffLimit": 1})
    for replica in job["spec"]["mpiReplicaSpecs"].values():
        for container in replica["template"]["spec"]["containers"]:
            container["resources"] = resources
    objects = apply(cluster, namespace, job)
    [vcjob] = [o for o in objects if o["kind"] == "Job" and o["apiVersion"].startswith("batch.volcano.sh/")]
    assert vcjob["spec"]["maxRetry"] == 2
    assert vcjob["spec"]["policies"] == [
        {"event": "PodEvicted", "action": "RestartJob"},
        {"event": "PodFailed", "action": "RestartJob"},
    ]
    [budget] = [o for o in objects if o["kind"] == "PodDisruptionBudget"]
    assert budget["spec"]["minAvailable"] == 2

    running(cluster, namespace, name, 3)
    cluster.wait_for("vcjob Running", lambda: phase(cluster, namespace, name) == "Running")
    refused = evict(cluster, namespace, f"{name}-worker-0")
    assert refused.returncode != 0 and "disruption budget" in refused.stderr, refused.stderr
    assert retry_count(cluster, namespace, name) == 0

    done = evict(cluster, namespace, f"{name}-launcher-0")
    assert done.returncode == 0, done.stderr
    cluster.wait_for("the first restart", lambda: retry_count(cluster, namespace, name) == 1, timeout=60)
    again = running(cluster, namespace, name, 3)
    assert {p["metadata"]["annotations"]["volcano.sh/job-retry-count"] for p in again.values()} == {"1"}
    cluster.wait_for("vcjob Running again", lambda: phase(cluster, namespace, name) == "Running", timeout=60)

    cluster.kubectl("delete", "pod", f"{name}-worker-1", "-n", namespace, "--wait=false")
    cluster.wait_for("vcjob Failed", lambda: phase(cluster, namespace, name) == "Failed", timeout=60)
    assert retry_count(cluster, namespace, name) == 2
