"""A rack layout of kwok nodes for the placement tests (`--topology`): blocks of racks of nodes, each node
labelled by its block, its rack and its host name, so that a test reads where each pod was bound.

Every node is a kwok fake node (controlplane.FAKE_NODE_ANNOTATION) with the label and the NoSchedule taint
`mpigen-test/racks: "true"`: the tests' jobs select these nodes (nodeSelector, with the toleration) and
no other, other tests' pods on the same control plane never land there, and Kueue's ResourceFlavor
names them. kwok's node stage gives each 1000 CPUs, so a test sizes its pods by CPU (a pod of
`POD_CPU` fits once on a node).
"""

from __future__ import annotations

import json
from typing import Any

from controlplane import FAKE_NODE_ANNOTATION, Cluster

BLOCK = "topology.example.com/block"
RACK = "topology.example.com/rack"
HOST = "kubernetes.io/hostname"
# The same two levels under keys that are DNS subdomains, as a Volcano HyperNode tier name must be
# (Volcano v1.14's Job CRD: networkTopology.highestTierName); HyperNodes are built from these.
BLOCK_TIER = "block"
RACK_TIER = "rack"
SELECTED = "mpigen-test/racks"
# kwok's nodes hold 1000 CPUs (controlplane.KWOK_STAGES): one such pod per node.
POD_CPU = "600"


def add_racks(cluster: Cluster, blocks: int = 2, racks: int = 2, nodes: int = 4) -> dict[str, dict[str, str]]:
    """Add blocks x racks x nodes kwok nodes (once per cluster: again, it finds them) and wait until each is
    Ready; their labels by node name."""
    layout: dict[str, dict[str, str]] = {}
    # Made node by node across the racks (n0 of every rack first): kube-scheduler, which with room
    # everywhere takes the nodes much in the order it learnt them, would then spread a job over racks
    # unless it is told otherwise (test_topology.py's control).
    for node in range(nodes):
        for block in range(blocks):
            for rack in range(racks):
                name = f"rack-b{block}-r{rack}-n{node}"
                layout[name] = {
                    BLOCK: f"b{block}",
                    RACK: f"b{block}-r{rack}",
                    HOST: name,
                    BLOCK_TIER: f"b{block}",
                    RACK_TIER: f"b{block}-r{rack}",
                    SELECTED: "true",
                }
    for name, labels in layout.items():
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "annotations": {FAKE_NODE_ANNOTATION: "fake"}, "labels": labels},
        }
        node["spec"] = {"taints": [{"key": SELECTED, "value": "true", "effect": "NoSchedule"}]}
        cluster.kubectl("apply", "-f", "-", input=json.dumps(node))
        cluster.kubectl("taint", "node", name, "node.kubernetes.io/not-ready:NoSchedule-", check=False)

    def ready() -> bool:
        listed = {n["metadata"]["name"]: n for n in cluster.get("nodes", "-l", f"{SELECTED}=true")["items"]}
        return set(layout) <= set(listed) and all(
            any(
                c["type"] == "Ready" and c["status"] == "True"
                for c in node.get("status", {}).get("conditions", [])
            )
            for node in listed.values()
        )

    cluster.wait_for("the racks' kwok nodes Ready", ready, timeout=90)
    return layout


def on_racks(template: dict[str, Any]) -> None:
    """Keep a pod template's pods on the racks' nodes, each pod the size of a node."""
    spec = template["spec"]
    spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), SELECTED: "true"}
    spec["tolerations"] = [{"key": SELECTED, "operator": "Equal", "value": "true", "effect": "NoSchedule"}]
    for container in spec["containers"]:
        container["resources"] = {"requests": {"cpu": POD_CPU, "memory": "1Gi"}}


def bound(cluster: Cluster, namespace: str, selector: str) -> dict[str, str]:
    """The node of each pod matching `selector` that has one (pod name -> node name)."""
    pods = cluster.get("pods", "-n", namespace, "-l", selector)["items"]
    return {pod["metadata"]["name"]: pod["spec"]["nodeName"] for pod in pods if pod["spec"].get("nodeName")}


def hypernodes(layout: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    """Volcano HyperNodes of the layout as Volcano's label discovery builds them from the node labels
    `rack` (tier 1) and `block` (tier 2): one per value, the label key as the tier's name."""
    racks = sorted({labels[RACK_TIER]: labels[BLOCK_TIER] for labels in layout.values()}.items())
    found = []
    for rack, _ in racks:
        selector = {"labelMatch": {"matchLabels": {RACK_TIER: rack}}}
        found.append(_hypernode(f"rack-{rack}", 1, RACK_TIER, [{"type": "Node", "selector": selector}]))
    for block in sorted({block for _, block in racks}):
        members = [
            {"type": "HyperNode", "selector": {"exactMatch": {"name": f"rack-{rack}"}}}
            for rack, owner in racks
            if owner == block
        ]
        found.append(_hypernode(f"block-{block}", 2, BLOCK_TIER, members))
    return found


def _hypernode(name: str, tier: int, tier_name: str, members: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": {"tier": tier, "tierName": tier_name, "members": members},
    }
