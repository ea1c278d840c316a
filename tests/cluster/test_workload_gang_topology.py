"""`--topology required:<rack label>` with `--gang-scheduler kubernetes` against the real thing: Kubernetes
v1.37.2's kube-apiserver, kube-scheduler (its gangscheduling and topologyaware plugins) and
kube-controller-manager, all with the GenericWorkload and TopologyAwareWorkloadScheduling gates and
`scheduling.k8s.io/v1beta1` on, and kwok nodes in racks (racks.py: 2 blocks x 2 racks x 4 nodes, each
node room for one of the tests' pods). Each test asserts where the pods were bound (`spec.nodeName` -> the
node's labels), never on the YAML.

- The control: the same gang without --topology is bound across racks.
- With `required:<rack>`: the launcher and every worker are bound in one rack; and so they are with the
  pods' own pod affinity removed (the PodGroup's schedulingConstraints.topology alone, the scheduler's
  placement of the whole gang per rack).
- A gang larger than any rack: no pod is bound (a hard constraint, the gang whole).
- On the jobset target (the JobSet controller v0.12 started on demand): the workers' gang is bound in one
  rack, and the launcher, outside the gang and made once they are Ready, is bound in the same rack.
- Every golden case whose PodGroup has the field is accepted by the gated server, which keeps the field
  (`kubectl apply --dry-run=server`; tests/cluster/test_workload_gang.py applies them where the gate is
  off, and the field is dropped).
- mpigen's offline rules of the field (mpigen.checks.workload) against the gated server's verdicts.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import controlplane
import gotools
import jobset
import pytest
from controlplane import Cluster
from mpijobs import job, manifest
from racks import RACK, add_racks, bound, on_racks

import mpigen
from mpigen.checks.workload import scheduling_issues
from tools import find_kubectl

Obj = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
TOPOLOGY_GOLDEN = sorted(
    path.parent.name
    for path in ROOT.glob("golden/*/expected.yaml")
    if "apiVersion: scheduling.k8s.io/v1beta1\n" in (text := path.read_text())
    and "schedulingConstraints:" in text
)
GATES = ("--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true",)
SELECTOR = "app.kubernetes.io/component in (launcher,worker),app.kubernetes.io/instance="


@pytest.fixture(scope="module")
def racked() -> Iterator[tuple[Cluster, dict[str, dict[str, str]]]]:
    """The gated control plane and its rack layout (node name -> labels)."""
    if controlplane.shutil.which("openssl") is None:
        pytest.skip("the control plane's certificates are made with openssl, which is not on PATH")
    names = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")
    binaries = {name: gotools.require(name) for name in names}
    started = controlplane.start_control_plane(
        binaries, find_kubectl(), (*GATES, controlplane.GANG_RUNTIME_CONFIG)
    )
    try:
        controlplane.start_workloads(
            started, binaries, nodes=0, controllers=controlplane.GANG_CONTROLLERS, extra_args=GATES
        )
        # The JobSet CRD of the pinned module, for the jobset target's golden cases (no controller needed).
        jobset.create_all(started, jobset.crds(gotools.require_module("jobset")))
        yield started, add_racks(started)
    finally:
        started.stop()


def compiled(
    name: str, workers: int, namespace: str, topology: str | None, target: str = "operator"
) -> list[Obj]:
    mpijob = job("v2beta1", name, workers=workers)
    for replica in mpijob["spec"]["mpiReplicaSpecs"].values():
        on_racks(replica["template"])
    options = mpigen.Options(
        namespace=namespace, ssh_secret="keys", gang_scheduler="kubernetes", topology=topology, target=target
    )
    return mpigen.compile(mpijob, options)


def run(cluster: Cluster, namespace: str, name: str, objects: list[Obj], pods: int) -> dict[str, str]:
    """Apply `objects`; the node of each of the job's `pods` pods once all are bound."""
    cluster.kubectl("apply", "-f", "-", input=manifest(objects))
    nodes: dict[str, str] = cluster.wait_for(
        f"the {pods} pods of {name} bound",
        lambda: (found := bound(cluster, namespace, SELECTOR + name)) and len(found) == pods and found,
        timeout=90,
    )
    assert len(set(nodes.values())) == pods, nodes  # one pod per node: each takes most of a node
    return nodes


def remove(cluster: Cluster, namespace: str, name: str) -> None:
    """The job's pods gone, so that the next job finds the racks empty."""
    cluster.kubectl("delete", "statefulset,job", "-n", namespace, "-l", f"app.kubernetes.io/instance={name}")
    cluster.wait_for(
        f"the pods of {name} gone",
        lambda: not cluster.get("pods", "-n", namespace, "-l", SELECTOR + name)["items"],
        timeout=60,
    )


def without_pod_affinity(objects: list[Obj]) -> list[Obj]:
    objects = copy.deepcopy(objects)
    for obj in objects:
        template = obj.get("spec", {}).get("template")
        if isinstance(template, dict):
            (template.get("spec") or {}).pop("affinity", None)
    return objects


def racks_of(layout: dict[str, dict[str, str]], nodes: dict[str, str]) -> set[str]:
    return {layout[node][RACK] for node in nodes.values()}


def test_required_binds_the_gang_in_one_rack(racked: tuple[Cluster, dict[str, dict[str, str]]]) -> None:
    cluster, layout = racked
    namespace = cluster.create_namespace("gang-rack")
    # The control: the same gang without --topology is spread over the racks.
    spread = run(cluster, namespace, "spread", compiled("spread", 3, namespace, None), 4)
    assert len(racks_of(layout, spread)) > 1, spread
    remove(cluster, namespace, "spread")

    placed = run(cluster, namespace, "placed", compiled("placed", 3, namespace, f"required:{RACK}"), 4)
    assert len(racks_of(layout, placed)) == 1, f"pods bound across racks: {placed}"
    group = cluster.get("podgroup.scheduling.k8s.io", "placed", "-n", namespace)
    assert group["spec"]["schedulingConstraints"] == {"topology": [{"key": RACK}]}, (
        "the gated server keeps it"
    )
    remove(cluster, namespace, "placed")

    # The PodGroup's constraint alone, with none of the pods' pod affinity.
    objects = without_pod_affinity(compiled("alone", 3, namespace, f"required:{RACK}"))
    assert "podAffinity" not in manifest(objects)
    alone = run(cluster, namespace, "alone", objects, 4)
    assert len(racks_of(layout, alone)) == 1, f"pods bound across racks: {alone}"
    remove(cluster, namespace, "alone")


def test_a_gang_larger_than_any_rack_is_not_bound(racked: tuple[Cluster, dict[str, dict[str, str]]]) -> None:
    cluster, _ = racked
    namespace = cluster.create_namespace("gang-too-big")
    # 6 pods, racks of 4 nodes: no rack holds the gang; the PodGroup's constraint alone decides.
    objects = without_pod_affinity(compiled("big", 5, namespace, f"required:{RACK}"))
    cluster.kubectl("apply", "-f", "-", input=manifest(objects))

    def tried() -> list[Obj] | None:
        found = cluster.get("pods", "-n", namespace, "-l", SELECTOR + "big")["items"]
        failed = [
            pod
            for pod in found
            for c in pod.get("status", {}).get("conditions", [])
            if c["type"] == "PodScheduled" and c["status"] == "False"
        ]
        return found if len(found) == 6 and failed else None

    cluster.wait_for("the scheduler to try big's pods", tried, timeout=90)
    time.sleep(3)  # a pod bound late would show by then
    assert bound(cluster, namespace, SELECTOR + "big") == {}, "a pod of a gang no rack holds was bound"
    remove(cluster, namespace, "big")


@pytest.fixture(scope="module")
def racked_jobset(
    racked: tuple[Cluster, dict[str, dict[str, str]]],
) -> tuple[Cluster, dict[str, dict[str, str]]]:
    """`racked` with the JobSet controller v0.12 and its webhooks (its CRD is there already)."""
    cluster, _ = racked
    if "jobset" not in cluster.processes:
        server = jobset.start_jobset(cluster, gotools.require("jobset"))
        module, kustomize = gotools.require_module("jobset"), gotools.require("kustomize")
        jobset.register_webhooks(cluster, "jobset", server, module, kustomize)
    return racked


def test_on_the_jobset_target_the_launcher_joins_the_workers_rack(
    racked_jobset: tuple[Cluster, dict[str, dict[str, str]]],
) -> None:
    cluster, layout = racked_jobset
    namespace = cluster.create_namespace("gang-rack-jobset")
    objects = compiled("js", 3, namespace, f"required:{RACK}", target="jobset")
    placed = run(cluster, namespace, "js", objects, 4)
    launcher = [pod for pod in placed if pod.startswith("js-launcher-")]
    assert len(launcher) == 1, placed
    assert len(racks_of(layout, placed)) == 1, f"pods bound across racks: {placed}"
    cluster.kubectl("delete", "jobset", "js", "-n", namespace)
    cluster.wait_for(
        "the pods of js gone",
        lambda: not cluster.get("pods", "-n", namespace, "-l", SELECTOR + "js")["items"],
        timeout=60,
    )


def _rendered(kind: str) -> Obj:
    objects = compiled("rules", 2, "rules", f"required:{RACK}")
    (obj,) = [obj for obj in objects if obj["kind"] == kind]
    obj["metadata"].pop("namespace", None)
    return obj


def _constraints(obj: Obj) -> Obj:
    spec = obj["spec"]
    found: Obj = (
        spec["schedulingConstraints"]
        if obj["kind"] == "PodGroup"
        else spec["podGroupTemplates"][0]["schedulingConstraints"]
    )
    return found


BROKEN = {
    "as rendered": [{"key": RACK}],
    "two constraints": [{"key": RACK}, {"key": "topology.example.com/block"}],
    "no key": [{}],
    "a key of three parts": [{"key": "a/b/c"}],
    "a key starting with a dash": [{"key": "-rack"}],
}


@pytest.mark.parametrize("kind", ["PodGroup", "Workload"])
@pytest.mark.parametrize("name", sorted(BROKEN))
def test_offline_rules_agree_with_the_server(
    racked: tuple[Cluster, dict[str, dict[str, str]]], kind: str, name: str
) -> None:
    cluster, _ = racked
    obj = _rendered(kind)
    _constraints(obj)["topology"] = BROKEN[name]
    offline = list(scheduling_issues(obj))
    namespace = cluster.create_namespace("rules")
    done = cluster.kubectl(
        "create", "--dry-run=server", "-n", namespace, "-f", "-", input=json.dumps(obj), check=False
    )
    assert (done.returncode == 0) == (offline == []), (
        f"server: {done.stderr or 'accepted'}; mpigen: {offline}"
    )


@pytest.mark.parametrize("case", TOPOLOGY_GOLDEN)
def test_golden_cases_are_accepted_by_the_gated_server(
    racked: tuple[Cluster, dict[str, dict[str, str]]], case: str
) -> None:
    cluster, _ = racked
    text = (ROOT / "golden" / case / "expected.yaml").read_text()
    for namespace in ("ml", "team"):  # the cases' namespaces (the MPIJobs', the TrainJobs')
        cluster.kubectl("create", "namespace", namespace, check=False)
    done = cluster.kubectl("apply", "--dry-run=server", "-o", "json", "-f", "-", input=text, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr
    kept = [
        item["spec"].get("schedulingConstraints")
        for item in json.loads(done.stdout).get("items", [])
        if item["kind"] == "PodGroup"
    ]
    assert kept and all(kept), f"the server dropped the PodGroup's schedulingConstraints: {kept}"
