"""`--topology` on the jobset target, proven by Kueue's topology-aware scheduling (Kueue v0.19.2, with the
JobSet controller, kube-scheduler and the rack layout of kwok nodes of racks.py: 2 blocks x 2 racks x 4
nodes, one of the tests' pods per node). Each test has a ClusterQueue of its own over one
ResourceFlavor whose `topologyName` is a Topology of levels block, rack, host name, and asserts where
the pods were bound (`spec.nodeName` -> node labels) and what the Workload's `topologyAssignment` says.

- required, a launcher and 3 workers: admitted onto one rack, every pod (launcher included) bound there,
  worker i on the i-th host of the workers' assignment (the hostfile's rank order, kept by
  `kueue.x-k8s.io/pod-index-offset: "-1"`);
- a launcher and 4 workers, more than a rack holds: not admitted with required; admitted and spread
  over two racks with preferred;
- two rack-filling jobs: each on a rack of its own;
- `slice:rack:4` with 8 workers: ranks 0-3 on one rack, 4-7 on another.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from controlplane import Cluster
from jobset import create_all
from mpijobs import job, manifest
from racks import BLOCK, HOST, RACK, SELECTED, add_racks, bound, on_racks

import mpigen

KUEUE = "kueue.x-k8s.io/v1beta2"
TOPOLOGY = "mpigen-test-racks"
FLAVOR = "mpigen-test-racks"
JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
COMPLETION_INDEX_LABEL = "batch.kubernetes.io/job-completion-index"


@pytest.fixture(scope="module")
def layout(kueue_cluster: Cluster) -> dict[str, dict[str, str]]:
    """The racks, a Topology over them and a ResourceFlavor naming both."""
    found = add_racks(kueue_cluster)
    topology = {
        "apiVersion": KUEUE,
        "kind": "Topology",
        "metadata": {"name": TOPOLOGY},
        "spec": {"levels": [{"nodeLabel": BLOCK}, {"nodeLabel": RACK}, {"nodeLabel": HOST}]},
    }
    flavor = {
        "apiVersion": KUEUE,
        "kind": "ResourceFlavor",
        "metadata": {"name": FLAVOR},
        "spec": {"nodeLabels": {SELECTED: "true"}, "topologyName": TOPOLOGY},
    }
    create_all(kueue_cluster, [topology, flavor])
    return found


@pytest.fixture
def namespace(
    kueue_cluster: Cluster, layout: dict[str, dict[str, str]], request: pytest.FixtureRequest
) -> Iterator[str]:
    """A namespace with a LocalQueue `queue` of a ClusterQueue of its own over the racks' flavor; its
    JobSets deleted afterwards, and their pods gone, so that the next test has every node."""
    cluster = kueue_cluster
    name = cluster.create_namespace("t-" + request.node.name.lower().replace("_", "-")[:40].strip("-[]"))
    resources = [{"name": "cpu", "nominalQuota": "100000"}, {"name": "memory", "nominalQuota": "1Ti"}]
    cluster_queue = {
        "apiVersion": KUEUE,
        "kind": "ClusterQueue",
        "metadata": {"name": f"{name}-cq"},
        "spec": {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": name}},
            "resourceGroups": [
                {"coveredResources": ["cpu", "memory"], "flavors": [{"name": FLAVOR, "resources": resources}]}
            ],
        },
    }
    local_queue = {
        "apiVersion": KUEUE,
        "kind": "LocalQueue",
        "metadata": {"name": "queue", "namespace": name},
        "spec": {"clusterQueue": f"{name}-cq"},
    }
    create_all(cluster, [cluster_queue, local_queue])
    cluster.wait_for(
        "the ClusterQueue Active",
        lambda: any(
            c["type"] == "Active" and c["status"] == "True"
            for c in cluster.get("clusterqueue", f"{name}-cq").get("status", {}).get("conditions", [])
        ),
        timeout=30,
    )
    yield name
    cluster.kubectl("delete", "jobsets", "--all", "-n", name, "--wait")
    cluster.wait_for("the test's pods gone", lambda: not cluster.get("pods", "-n", name)["items"], timeout=90)


def submit(cluster: Cluster, namespace: str, name: str, workers: int, topology: str) -> None:
    mpijob = job("v1alpha2", name, workers=workers)
    for replica in mpijob["spec"]["mpiReplicaSpecs"].values():
        on_racks(replica["template"])
    options = mpigen.Options(namespace=namespace, target="jobset", queue="queue", topology=topology)
    cluster.kubectl("apply", "--server-side", "-f", "-", input=manifest(mpigen.compile(mpijob, options)))


def workload(cluster: Cluster, namespace: str, name: str) -> dict[str, Any] | None:
    """The Workload Kueue made for JobSet `name`."""
    for found in cluster.get("workloads", "-n", namespace)["items"]:
        if any(ref.get("name") == name for ref in found["metadata"].get("ownerReferences", [])):
            return found
    return None


def admitted(cluster: Cluster, namespace: str, name: str) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        found = workload(cluster, namespace, name)
        conditions = (found or {}).get("status", {}).get("conditions", [])
        ok = any(c["type"] == "Admitted" and c["status"] == "True" for c in conditions)
        return found if ok else None

    result: dict[str, Any] = cluster.wait_for(f"the Workload of {name} admitted", done, timeout=90)
    return result


def domains(assignment: dict[str, Any]) -> list[tuple[tuple[str, ...], int]]:
    """A Workload pod set's topologyAssignment (kueue v1beta2 TopologyAssignment: slices of domains, each
    level's values universal or prefix + root + suffix) as (values, pods) in Kueue's order."""
    found = []
    for part in assignment["slices"]:
        count = part.get("domainCount", 1)
        values = []
        for level in part["valuesPerLevel"]:
            if "universal" in level:
                values.append([level["universal"]] * count)
            else:
                own = level["individual"]
                values.append([own.get("prefix", "") + root + own.get("suffix", "") for root in own["roots"]])
        pods = part["podCounts"]
        counts = [pods["universal"]] * count if "universal" in pods else pods["individual"]
        found += [(tuple(level[i] for level in values), counts[i]) for i in range(count)]
    return found


def hosts_in_rank_order(assignment: dict[str, Any]) -> list[str]:
    """The host of each rank of a pod set, as Kueue's ungater hands them out (consecutive ranks fill a
    domain first; the assignment's last level is the host name)."""
    assert assignment["levels"][-1] == HOST, assignment["levels"]
    return [values[-1] for values, pods in domains(assignment) for _ in range(pods)]


def placements(cluster: Cluster, namespace: str, name: str, pods: int) -> dict[str, dict[str, Any]]:
    """Each pod of JobSet `name` once all `pods` are bound: its node and labels."""
    cluster.wait_for(
        f"{pods} pods of {name} bound",
        lambda: len(bound(cluster, namespace, f"{JOBSET_NAME_LABEL}={name}")) == pods,
        timeout=120,
    )
    listed = cluster.get("pods", "-n", namespace, "-l", f"{JOBSET_NAME_LABEL}={name}")["items"]
    return {pod["metadata"]["name"]: pod for pod in listed}


def test_required_admits_onto_one_rack_in_rank_order(
    kueue_cluster: Cluster, namespace: str, layout: dict[str, dict[str, str]]
) -> None:
    cluster = kueue_cluster
    submit(cluster, namespace, "one-rack", workers=3, topology=f"required:{RACK}")
    found = admitted(cluster, namespace, "one-rack")
    assignments = {a["name"]: a for a in found["status"]["admission"]["podSetAssignments"]}
    assert set(assignments) == {"launcher", "worker"}
    assigned = {
        name: hosts_in_rank_order(assignment["topologyAssignment"])
        for name, assignment in assignments.items()
    }
    assert len({layout[host][RACK] for hosts in assigned.values() for host in hosts}) == 1, assigned

    pods = placements(cluster, namespace, "one-rack", 4)
    nodes = {name: pod["spec"]["nodeName"] for name, pod in pods.items()}
    assert len({layout[node][RACK] for node in nodes.values()}) == 1, f"pods across racks: {nodes}"
    assert sorted(nodes.values()) == sorted(assigned["launcher"] + assigned["worker"]), (nodes, assigned)
    # Rank order: worker i (the hostfile's i-th worker) on the i-th host of the workers' assignment.
    workers = {
        int(pod["metadata"]["labels"][COMPLETION_INDEX_LABEL]): pod["spec"]["nodeName"]
        for pod in pods.values()
        if pod["metadata"]["labels"].get("jobset.sigs.k8s.io/replicatedjob-name") == "worker"
    }
    assert [workers[i] for i in range(3)] == assigned["worker"], (workers, assigned["worker"])


def test_larger_than_a_rack_waits_when_required(kueue_cluster: Cluster, namespace: str) -> None:
    cluster = kueue_cluster
    submit(cluster, namespace, "too-big", workers=4, topology=f"required:{RACK}")
    cluster.wait_for("the Workload of too-big", lambda: workload(cluster, namespace, "too-big"), timeout=60)
    time.sleep(10)  # Kueue tries it on every scheduling cycle: it stays unadmitted, with no pod bound
    found = workload(cluster, namespace, "too-big")
    assert found is not None
    conditions = {c["type"]: c for c in found.get("status", {}).get("conditions", [])}
    assert conditions.get("Admitted", {}).get("status") != "True", conditions
    assert conditions.get("QuotaReserved", {}).get("status") == "False", conditions
    assert not bound(cluster, namespace, f"{JOBSET_NAME_LABEL}=too-big")


def test_larger_than_a_rack_spreads_when_preferred(
    kueue_cluster: Cluster, namespace: str, layout: dict[str, dict[str, str]]
) -> None:
    cluster = kueue_cluster
    submit(cluster, namespace, "spread", workers=4, topology=f"preferred:{RACK}")
    admitted(cluster, namespace, "spread")
    nodes = {
        name: pod["spec"]["nodeName"] for name, pod in placements(cluster, namespace, "spread", 5).items()
    }
    racks = {layout[node][RACK] for node in nodes.values()}
    assert len(racks) == 2, f"5 pods of a rack's size each: two racks, got {nodes}"
    assert len({layout[node][BLOCK] for node in nodes.values()}) == 1, f"as few domains as possible: {nodes}"


def test_two_rack_filling_jobs_land_on_different_racks(
    kueue_cluster: Cluster, namespace: str, layout: dict[str, dict[str, str]]
) -> None:
    cluster = kueue_cluster
    racks = []
    for name in ("first", "second"):
        submit(cluster, namespace, name, workers=3, topology=f"required:{RACK}")
        admitted(cluster, namespace, name)
        nodes = [pod["spec"]["nodeName"] for pod in placements(cluster, namespace, name, 4).values()]
        found = {layout[node][RACK] for node in nodes}
        assert len(found) == 1, f"{name}: pods across racks: {nodes}"
        racks += found
    assert racks[0] != racks[1], racks


def test_slices_put_consecutive_ranks_in_one_rack(
    kueue_cluster: Cluster, namespace: str, layout: dict[str, dict[str, str]]
) -> None:
    cluster = kueue_cluster
    submit(cluster, namespace, "sliced", workers=8, topology=f"slice:{RACK}:4")
    admitted(cluster, namespace, "sliced")
    pods = placements(cluster, namespace, "sliced", 9)
    workers = {
        int(pod["metadata"]["labels"][COMPLETION_INDEX_LABEL]): layout[pod["spec"]["nodeName"]][RACK]
        for pod in pods.values()
        if pod["metadata"]["labels"].get("jobset.sigs.k8s.io/replicatedjob-name") == "worker"
    }
    assert sorted(workers) == list(range(8)), workers
    slices = [{workers[rank] for rank in range(start, start + 4)} for start in (0, 4)]
    assert all(len(racks) == 1 for racks in slices), f"a slice of 4 consecutive ranks across racks: {workers}"
    assert slices[0] != slices[1], f"two slices of a rack each: {workers}"
