"""`--topology` proven by the real schedulers on a rack layout of kwok nodes (racks.py: 2 blocks x 2 racks
x 4 nodes, each node room for one of the tests' pods): each test asserts where the pods were bound
(`spec.nodeName` -> the node's labels), never on the YAML.

- operator target, kube-scheduler: with `required:<rack label>`, the launcher and every worker are bound
  to nodes of one rack (pod affinity among the job's own pods).
- jobset target, Kueue: see test_topology_kueue.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from controlplane import Cluster
from mpijobs import job, manifest
from racks import RACK, add_racks, bound, on_racks

import mpigen


@pytest.fixture
def namespace(workloads: Cluster, request: pytest.FixtureRequest) -> str:
    return workloads.create_namespace("t-" + request.node.name.lower().replace("_", "-")[:40].strip("-[]"))


def placed_job(name: str, workers: int) -> dict[str, Any]:
    mpijob = job("v1alpha2", name, workers=workers)
    for replica in mpijob["spec"]["mpiReplicaSpecs"].values():
        on_racks(replica["template"])
    return mpijob


def run(cluster: Cluster, namespace: str, name: str, topology: str | None) -> dict[str, str]:
    """Apply a job of a launcher and 3 workers; the node of each of its pods once all four are bound."""
    objects = mpigen.compile(
        placed_job(name, workers=3), mpigen.Options(namespace=namespace, topology=topology)
    )
    cluster.kubectl("apply", "-f", "-", input=manifest(objects))
    # the launcher and the workers carry the v1alpha2 operator's `mpi_job_name` label
    nodes: dict[str, str] = cluster.wait_for(
        f"the launcher and 3 workers of {name} bound",
        lambda: (found := bound(cluster, namespace, f"mpi_job_name={name}")) and len(found) == 4 and found,
        timeout=90,
    )
    assert {pod for pod in nodes if pod.startswith(f"{name}-worker-")} == {
        f"{name}-worker-{i}" for i in range(3)
    }
    assert any(pod.startswith(f"{name}-launcher-") for pod in nodes), nodes
    # one pod per node: each takes most of a node
    assert len(set(nodes.values())) == 4, nodes
    return nodes


def test_required_binds_every_pod_in_one_rack(workloads: Cluster, namespace: str) -> None:
    cluster = workloads
    layout = add_racks(cluster)
    # The control: without --topology, kube-scheduler spreads the same job over the racks.
    spread = run(cluster, namespace, "spread", None)
    assert len({layout[node][RACK] for node in spread.values()}) > 1, spread
    cluster.kubectl("delete", "statefulset,job", "-n", namespace, "-l", "mpi_job_name=spread", "--wait")
    cluster.wait_for(
        "the control's pods gone",
        lambda: not cluster.get("pods", "-n", namespace, "-l", "mpi_job_name=spread")["items"],
        timeout=60,
    )
    placed = run(cluster, namespace, "placed", f"required:{RACK}")
    racks = {layout[node][RACK] for node in placed.values()}
    assert len(racks) == 1, f"pods bound across racks: {placed}"
