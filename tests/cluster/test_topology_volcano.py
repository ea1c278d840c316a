"""`--topology` on the volcano target, proven by vc-scheduler (Volcano v1.14.1) over HyperNodes: the rack
layout of racks.py (2 blocks x 2 racks x 4 kwok nodes, one test pod per node) with its HyperNodes as
Volcano's label discovery would build them from the node labels `rack` (tier 1) and `block` (tier 2).
The test asserts where the pods were bound (`spec.nodeName` -> node labels).

- the same job (a launcher and 3 workers) without `--topology`, the control, is bound over several racks;
  with `required:rack` (the Job's `networkTopology: {mode: hard, highestTierName: rack}`) every pod is
  bound in one rack.
"""

from __future__ import annotations

from typing import Any

import pytest
from controlplane import Cluster
from jobset import create_all
from mpijobs import job, manifest
from racks import RACK, RACK_TIER, add_racks, bound, hypernodes, on_racks

import mpigen

JOB_NAME_LABEL = "volcano.sh/job-name"


@pytest.fixture(scope="module")
def layout(volcano_cluster: Cluster) -> dict[str, dict[str, str]]:
    found = add_racks(volcano_cluster)
    create_all(volcano_cluster, hypernodes(found))
    return found


@pytest.fixture
def namespace(volcano_cluster: Cluster, request: pytest.FixtureRequest) -> str:
    return volcano_cluster.create_namespace(
        "t-" + request.node.name.lower().replace("_", "-")[:40].strip("-[]")
    )


def run(cluster: Cluster, namespace: str, name: str, topology: str | None) -> dict[str, str]:
    """Apply a job of a launcher and 3 workers as a Volcano Job; each pod's node once all four are bound."""
    mpijob = job("v1alpha2", name, workers=3)
    for replica in mpijob["spec"]["mpiReplicaSpecs"].values():
        on_racks(replica["template"])
    options = mpigen.Options(namespace=namespace, target="volcano", topology=topology)
    objects: list[dict[str, Any]] = mpigen.compile(mpijob, options)
    cluster.kubectl("apply", "--server-side", "-f", "-", input=manifest(objects))
    nodes: dict[str, str] = cluster.wait_for(
        f"the 4 pods of {name} bound",
        lambda: (
            (found := bound(cluster, namespace, f"{JOB_NAME_LABEL}={name}")) and len(found) == 4 and found
        ),
        timeout=120,
    )
    assert len(set(nodes.values())) == 4, nodes
    return nodes


def test_required_binds_the_gang_in_one_rack(
    volcano_cluster: Cluster, namespace: str, layout: dict[str, dict[str, str]]
) -> None:
    cluster = volcano_cluster
    spread = run(cluster, namespace, "spread", None)
    assert len({layout[node][RACK] for node in spread.values()}) > 1, f"the control was not spread: {spread}"
    cluster.kubectl("delete", "jobs.batch.volcano.sh", "spread", "-n", namespace, "--wait")
    cluster.wait_for(
        "the control's pods gone",
        lambda: not cluster.get("pods", "-n", namespace, "-l", f"{JOB_NAME_LABEL}=spread")["items"],
        timeout=90,
    )
    placed = run(cluster, namespace, "placed", f"required:{RACK_TIER}")
    assert len({layout[node][RACK] for node in placed.values()}) == 1, f"pods across racks: {placed}"
