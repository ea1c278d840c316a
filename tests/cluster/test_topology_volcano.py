"""`--topology` on the volcano target, proven by vc-scheduler (Volcano v1.14.1) over HyperNodes: the rack
layout of racks.py (2 blocks x 2 racks x 4 kwok nodes, one test pod per node) with its HyperNodes as
Volcano's label discovery would build them from the node labels `rack` (tier 1) and `block` (tier 2).
The test asserts where the pods were bound (`spec.nodeName` -> node labels).

- a launcher and 3 workers with `required:rack` (the Job's `networkTopology: {mode: hard,
  highestTierName: rack}`): every pod bound in one rack;
- a launcher and 4 workers, more than a rack holds: with `required:rack` no pod is bound (the gang
  waits); with `required:block`, every pod bound in one block, over two of its racks.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from controlplane import Cluster
from jobset import create_all
from mpijobs import job, manifest
from racks import BLOCK, BLOCK_TIER, RACK, RACK_TIER, add_racks, bound, hypernodes, on_racks

import mpigen

JOB_NAME_LABEL = "volcano.sh/job-name"


@pytest.fixture(scope="module")
def layout(volcano_cluster: Cluster) -> Iterator[dict[str, dict[str, str]]]:
    """The racks and their HyperNodes, removed again after this module's tests: the Volcano cluster is
    shared with tests that count its nodes and its capacity (tests/cluster/test_volcano.py)."""
    found = add_racks(volcano_cluster)
    made = hypernodes(found)
    create_all(volcano_cluster, made)
    yield found
    for hypernode in made:
        volcano_cluster.kubectl(
            "delete", "hypernode", hypernode["metadata"]["name"], "--wait=false", check=False
        )
    volcano_cluster.kubectl("delete", "node", *found, "--wait=true", check=False)


@pytest.fixture
def namespace(volcano_cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[str]:
    """A namespace of the test's own, emptied after it while the racks still stand (kwok removes the pods
    of its nodes): jobs left bound would hold the shared queue's resources for the next tests."""
    made = volcano_cluster.create_namespace(
        "t-" + request.node.name.lower().replace("_", "-")[:40].strip("-[]")
    )
    yield made
    volcano_cluster.kubectl("delete", "vcjob", "--all", "-n", made, "--wait=false", check=False)
    volcano_cluster.kubectl("delete", "pods", "--all", "-n", made, "--grace-period=0", "--force", check=False)
    volcano_cluster.wait_for(
        "the test's pods gone", lambda: not volcano_cluster.get("pods", "-n", made)["items"], timeout=60
    )


def run(cluster: Cluster, namespace: str, name: str, workers: int, topology: str) -> None:
    """Apply a job of a launcher and `workers` workers as a Volcano Job."""
    mpijob = job("v1alpha2", name, workers=workers)
    for replica in mpijob["spec"]["mpiReplicaSpecs"].values():
        on_racks(replica["template"])
    options = mpigen.Options(namespace=namespace, target="volcano", topology=topology)
    objects: list[dict[str, Any]] = mpigen.compile(mpijob, options)
    cluster.kubectl("apply", "--server-side", "-f", "-", input=manifest(objects))


def all_bound(cluster: Cluster, namespace: str, name: str, pods: int) -> dict[str, str]:
    nodes: dict[str, str] = cluster.wait_for(
        f"the {pods} pods of {name} bound",
        lambda: (
            (found := bound(cluster, namespace, f"{JOB_NAME_LABEL}={name}")) and len(found) == pods and found
        ),
        timeout=120,
    )
    assert len(set(nodes.values())) == pods, nodes
    return nodes


def delete(cluster: Cluster, namespace: str, name: str) -> None:
    cluster.kubectl("delete", "jobs.batch.volcano.sh", name, "-n", namespace, "--wait")
    cluster.wait_for(
        f"the pods of {name} gone",
        lambda: not cluster.get("pods", "-n", namespace, "-l", f"{JOB_NAME_LABEL}={name}")["items"],
        timeout=90,
    )


def test_required_binds_the_gang_within_the_tier(
    volcano_cluster: Cluster, namespace: str, layout: dict[str, dict[str, str]]
) -> None:
    cluster = volcano_cluster
    run(cluster, namespace, "rack", 3, f"required:{RACK_TIER}")
    placed = all_bound(cluster, namespace, "rack", 4)
    assert len({layout[node][RACK] for node in placed.values()}) == 1, f"pods across racks: {placed}"
    delete(cluster, namespace, "rack")

    run(cluster, namespace, "too-big", 4, f"required:{RACK_TIER}")
    cluster.wait_for(
        "the pods of too-big created",
        lambda: len(cluster.get("pods", "-n", namespace, "-l", f"{JOB_NAME_LABEL}=too-big")["items"]) == 5,
        timeout=60,
    )
    time.sleep(10)  # vc-scheduler runs every 500 ms: twenty chances to bind the gang
    assert not bound(cluster, namespace, f"{JOB_NAME_LABEL}=too-big"), "a gang larger than a rack was bound"
    delete(cluster, namespace, "too-big")

    run(cluster, namespace, "block", 4, f"required:{BLOCK_TIER}")
    nodes = all_bound(cluster, namespace, "block", 5)
    assert len({layout[node][BLOCK] for node in nodes.values()}) == 1, f"pods across blocks: {nodes}"
    assert len({layout[node][RACK] for node in nodes.values()}) == 2, nodes
