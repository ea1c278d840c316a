"""`--gang-scheduler kubernetes` against the real thing: Kubernetes v1.37.2's kube-apiserver, kube-scheduler
(its gangscheduling plugin) and kube-controller-manager (with the podgroup-protection-controller), all with
the GenericWorkload gate and `scheduling.k8s.io/v1beta1` on, and kwok fake nodes (`gang_cluster`).

- A job of N pods on nodes with room for fewer than N: no pod is bound; nodes added: all N are bound.
  A second job that fits runs while the first waits. The same job without the option binds what fits, one
  pod at a time (the difference the option makes). A launcher retried after the gang was placed is bound.
  A deleted PodGroup stays (its finalizer) until its pods are gone. On the jobset target (the JobSet controller v0.12 started
  on demand, `gang_jobset`): the workers are bound together or not at all, then the launcher, outside the
  gang, is created (dependsOn) and bound.
- Every golden case with the option is accepted by the server (`kubectl apply --dry-run=server`).
- mpigen's offline rules of Workload and PodGroup (mpigen.checks.workload) against the server's verdicts
  on objects broken one rule at a time.
- A cluster without the gate (`cluster`, as a cluster is by default): the Workload and PodGroup kinds are
  not served, and a pod template's schedulingGroup is silently dropped.

Pods ask for 600 of a kwok node's 1000 CPUs, so one fits on a node, and pick their nodes by a `pool` label
of the test's own, so that tests share the control plane and not their nodes.
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
from mpijobs import job

import mpigen
from mpigen.checks.workload import scheduling_issues
from mpigen.yaml.dump import to_yaml
from tools import find_kubectl

ROOT = Path(__file__).resolve().parents[2]
GANG_GOLDEN = sorted(
    path.parent.name
    for path in ROOT.glob("golden/*/expected.yaml")
    if "apiVersion: scheduling.k8s.io/v1beta1\n" in path.read_text()
)
Obj = dict[str, Any]


@pytest.fixture(scope="module")
def gang_cluster() -> Iterator[Cluster]:
    if controlplane.shutil.which("openssl") is None:
        pytest.skip("the control plane's certificates are made with openssl, which is not on PATH")
    names = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")
    binaries = {name: gotools.require(name) for name in names}
    started = controlplane.start_control_plane(
        binaries, find_kubectl(), (*controlplane.GANG_GATES, controlplane.GANG_RUNTIME_CONFIG)
    )
    try:
        controlplane.start_workloads(
            started,
            binaries,
            nodes=0,
            controllers=controlplane.GANG_CONTROLLERS,
            extra_args=controlplane.GANG_GATES,
        )
        # The JobSet CRD of the pinned module, for the jobset target's golden cases (no controller needed).
        jobset.create_all(started, jobset.crds(gotools.require_module("jobset")))
        yield started
    finally:
        started.stop()


def mpi_job(name: str, workers: int, pool: str) -> Obj:
    """A v2beta1 job whose every pod takes a whole kwok node of the pool `pool`."""
    mpijob = job("v2beta1", name, workers=workers)
    for spec in mpijob["spec"]["mpiReplicaSpecs"].values():
        pod = spec["template"]["spec"]
        pod["nodeSelector"] = {"pool": pool}
        pod["containers"][0]["resources"] = {"requests": {"cpu": "600"}}
    return mpijob


def apply(cluster: Cluster, mpijob: Obj, namespace: str, gang: bool) -> None:
    options = mpigen.Options(
        namespace=namespace, ssh_secret="keys", gang_scheduler="kubernetes" if gang else None
    )
    cluster.kubectl("apply", "-f", "-", input=to_yaml(mpigen.compile(mpijob, options)))


def pods(cluster: Cluster, namespace: str, name: str) -> list[Obj]:
    """The launcher's and workers' pods of job `name`."""
    found: list[Obj] = cluster.get("pods", "-n", namespace, "-l", f"app.kubernetes.io/instance={name}")[
        "items"
    ]
    return [
        pod
        for pod in found
        if pod["metadata"]["labels"].get("app.kubernetes.io/component") in ("launcher", "worker")
    ]


def bound(found: list[Obj]) -> list[str]:
    return sorted(pod["metadata"]["name"] for pod in found if pod["spec"].get("nodeName"))


def add_nodes(cluster: Cluster, pool: str, first: int, count: int) -> None:
    for index in range(first, first + count):
        controlplane.add_node(cluster, f"{pool}-{index}", {"pool": pool})


def unschedulable(pod: Obj) -> bool:
    return any(
        c["type"] == "PodScheduled" and c["status"] == "False"
        for c in pod.get("status", {}).get("conditions", [])
    )


def wait_tried(cluster: Cluster, namespace: str, name: str, count: int) -> list[Obj]:
    """The job's `count` pods once the scheduler has tried and failed to place one of them, and a few
    seconds more: a pod bound late would show by then."""

    def tried() -> list[Obj] | None:
        found = pods(cluster, namespace, name)
        return found if len(found) == count and any(unschedulable(pod) for pod in found) else None

    cluster.wait_for(f"the scheduler to try {name}'s pods", tried, timeout=90)
    time.sleep(3)
    return pods(cluster, namespace, name)


def test_a_gang_is_bound_whole_or_not_at_all(gang_cluster: Cluster) -> None:
    cluster = gang_cluster
    namespace = cluster.create_namespace("gang")
    add_nodes(cluster, "whole", 0, 2)  # room for 2 of the job's 4 pods
    apply(cluster, mpi_job("big", 3, "whole"), namespace, gang=True)
    waiting = wait_tried(cluster, namespace, "big", 4)
    assert bound(waiting) == [], "a pod of a gang that cannot be placed whole was bound"
    group = cluster.get("podgroup.scheduling.k8s.io", "big", "-n", namespace)
    assert group["spec"]["schedulingPolicy"]["gang"]["minCount"] == 4
    assert group["metadata"].get("finalizers"), "every PodGroup gets the protection controller's finalizer"

    # A job that fits is not held up by the one that waits.
    apply(cluster, mpi_job("small", 1, "whole"), namespace, gang=True)
    cluster.wait_for(
        "the small gang bound", lambda: len(bound(pods(cluster, namespace, "small"))) == 2, timeout=60
    )
    assert bound(pods(cluster, namespace, "big")) == []

    add_nodes(cluster, "whole", 2, 4)  # room for all 4 beside the small job
    cluster.wait_for(
        "the big gang bound", lambda: len(bound(pods(cluster, namespace, "big"))) == 4, timeout=90
    )


@pytest.fixture(scope="module")
def gang_jobset(gang_cluster: Cluster) -> Cluster:
    """`gang_cluster` with the JobSet controller v0.12 and its webhooks (its CRD is there already)."""
    if "jobset" not in gang_cluster.processes:
        server = jobset.start_jobset(gang_cluster, gotools.require("jobset"))
        module, kustomize = gotools.require_module("jobset"), gotools.require("kustomize")
        jobset.register_webhooks(gang_cluster, "jobset", server, module, kustomize)
    return gang_cluster


def test_the_jobset_target_gangs_the_workers_and_then_starts_the_launcher(gang_jobset: Cluster) -> None:
    """The workers are bound together or not at all; the launcher, outside the gang, is created once they
    are Ready (dependsOn) and bound on its own."""
    cluster = gang_jobset
    namespace = cluster.create_namespace("gang-jobset")
    add_nodes(cluster, "jobset", 0, 2)  # room for 2 of the 3 workers
    options = mpigen.Options(
        namespace=namespace, ssh_secret="keys", gang_scheduler="kubernetes", target="jobset"
    )
    cluster.kubectl("apply", "-f", "-", input=to_yaml(mpigen.compile(mpi_job("js", 3, "jobset"), options)))
    waiting = wait_tried(cluster, namespace, "js", 3)
    assert bound(waiting) == []
    assert all(pod["metadata"]["labels"]["app.kubernetes.io/component"] == "worker" for pod in waiting)
    add_nodes(cluster, "jobset", 2, 2)  # room for the 3 workers and then the launcher

    def all_bound() -> bool:
        found = pods(cluster, namespace, "js")
        return len(found) == 4 and len(bound(found)) == 4

    cluster.wait_for("the workers, then the launcher, bound", all_bound, timeout=120)
    (launcher,) = [
        p
        for p in pods(cluster, namespace, "js")
        if p["metadata"]["labels"]["app.kubernetes.io/component"] == "launcher"
    ]
    assert "schedulingGroup" not in launcher["spec"]


def test_a_launcher_retried_after_the_gang_was_placed_is_bound(gang_cluster: Cluster) -> None:
    """The launcher Job retries in a new pod of the same PodGroup; the workers are still bound, so the group
    counts enough pods and the newcomer is placed alone (no deadlock on a retry)."""
    cluster = gang_cluster
    namespace = cluster.create_namespace("gang-retry")
    add_nodes(cluster, "retry", 0, 3)
    apply(cluster, mpi_job("retry", 2, "retry"), namespace, gang=True)
    cluster.wait_for("the gang bound", lambda: len(bound(pods(cluster, namespace, "retry"))) == 3, timeout=90)
    (first,) = [
        p for p in pods(cluster, namespace, "retry") if p["metadata"]["name"].startswith("retry-launcher")
    ]
    controlplane.end_pod(cluster, namespace, first["metadata"]["name"], "Failed")

    def retried() -> bool:
        found = [
            p for p in pods(cluster, namespace, "retry") if p["metadata"]["name"].startswith("retry-launcher")
        ]
        return any(
            p["metadata"]["name"] != first["metadata"]["name"] and p["spec"].get("nodeName") for p in found
        )

    cluster.wait_for("the retried launcher bound", retried, timeout=90)


def test_a_deleted_pod_group_stays_until_its_pods_are_gone(gang_cluster: Cluster) -> None:
    """The PodGroupProtection finalizer: `kubectl delete -f` of a running job's objects leaves the PodGroup
    Terminating while its pods run, and the podgroup-protection-controller lets it go after them."""
    cluster = gang_cluster
    namespace = cluster.create_namespace("gang-delete")
    add_nodes(cluster, "delete", 0, 2)
    apply(cluster, mpi_job("gone", 1, "delete"), namespace, gang=True)
    cluster.wait_for("the gang bound", lambda: len(bound(pods(cluster, namespace, "gone"))) == 2, timeout=90)
    cluster.kubectl("delete", "podgroup.scheduling.k8s.io", "gone", "-n", namespace, "--wait=false")
    group = cluster.get("podgroup.scheduling.k8s.io", "gone", "-n", namespace)
    assert group["metadata"].get("deletionTimestamp"), "deleted while its pods run: Terminating"
    cluster.kubectl(
        "delete", "statefulset,job", "--all", "-n", namespace, "--cascade=foreground", "--wait=false"
    )

    def gone() -> bool:
        listed = cluster.kubectl("get", "podgroup.scheduling.k8s.io", "-n", namespace, "-o", "name").stdout
        return listed.strip() == ""

    cluster.wait_for("the PodGroup gone after its pods", gone, timeout=90)
    left = pods(cluster, namespace, "gone")
    assert all(
        p["metadata"].get("deletionTimestamp") or p["status"].get("phase") in ("Succeeded", "Failed")
        for p in left
    )


def test_without_the_option_pods_are_bound_one_by_one(gang_cluster: Cluster) -> None:
    cluster = gang_cluster
    namespace = cluster.create_namespace("no-gang")
    add_nodes(cluster, "single", 0, 2)
    apply(cluster, mpi_job("big", 3, "single"), namespace, gang=False)
    cluster.wait_for("2 pods bound", lambda: len(bound(pods(cluster, namespace, "big"))) == 2, timeout=60)
    found = wait_tried(cluster, namespace, "big", 4)
    assert len(bound(found)) == 2, "without a gang the scheduler places what fits"
    assert not [pod for pod in found if pod["spec"].get("schedulingGroup")]


@pytest.mark.parametrize("case", GANG_GOLDEN)
def test_golden_cases_are_accepted_by_the_server(gang_jobset: Cluster, case: str) -> None:
    """With JobSet's webhooks, which judge the jobset target's and the TrainJobs' JobSets."""
    cluster = gang_jobset
    text = (ROOT / "golden" / case / "expected.yaml").read_text()
    objects = [obj for obj in mpigen_yaml(text) if obj]
    named = {obj["metadata"].get("namespace") for obj in objects} - {None}
    for namespace in named:
        cluster.kubectl("create", "namespace", namespace, check=False)
    priority_classes(cluster, objects)
    where = () if named else ("-n", cluster.create_namespace("golden"))
    done = cluster.kubectl("apply", "--dry-run=server", *where, "-f", "-", input=text, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr


def priority_classes(cluster: Cluster, objects: list[Obj]) -> None:
    """The PriorityClasses the objects name: the Priority admission plugin refuses a PodGroup (as a pod)
    whose class does not exist ("no PriorityClass with name high was found")."""
    wanted = {obj["spec"].get("priorityClassName") for obj in objects if obj["kind"] == "PodGroup"} - {None}
    for name in wanted:
        item = {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": 1000,
        }
        cluster.kubectl("apply", "-f", "-", input=json.dumps(item))


def mpigen_yaml(text: str) -> list[Obj]:
    import yaml

    return list(yaml.safe_load_all(text))


def gang_objects() -> list[Obj]:
    mpijob = job("v2beta1", "rules", workers=2)
    mpijob["spec"]["runPolicy"] = {"schedulingPolicy": {"priorityClass": "high"}}
    objects = mpigen.compile(mpijob, mpigen.Options(gang_scheduler="kubernetes", ssh_secret="keys"))
    return [obj for obj in objects if obj["apiVersion"] == "scheduling.k8s.io/v1beta1"]


def _broken(kind: str, change: Any) -> Obj:
    (obj,) = [copy.deepcopy(obj) for obj in gang_objects() if obj["kind"] == kind]
    change(obj)
    return obj


def _set(path: tuple[str | int, ...], value: Any) -> Any:
    def change(obj: Obj) -> None:
        node = obj
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return change


TEMPLATE = ("spec", "podGroupTemplates", 0)
BROKEN = {
    "as rendered (Workload)": ("Workload", lambda obj: None),
    "as rendered (PodGroup)": ("PodGroup", lambda obj: None),
    "minCount 0": ("PodGroup", _set(("spec", "schedulingPolicy", "gang", "minCount"), 0)),
    "template minCount 0": ("Workload", _set((*TEMPLATE, "schedulingPolicy", "gang", "minCount"), 0)),
    "basic and gang": ("PodGroup", _set(("spec", "schedulingPolicy", "basic"), {})),
    "no policy": ("PodGroup", _set(("spec", "schedulingPolicy"), {})),
    "single and all": ("Workload", _set((*TEMPLATE, "disruptionMode", "single"), {})),
    "template name with a dot": ("Workload", _set((*TEMPLATE, "name"), "a.b")),
    "templateName with a dot": ("PodGroup", _set(("spec", "workloadRef", "templateName"), "a.b")),
    "workloadName upper case": ("PodGroup", _set(("spec", "workloadRef", "workloadName"), "Rules")),
    "priorityClassName upper case": ("PodGroup", _set(("spec", "priorityClassName"), "High")),
    "no templates": ("Workload", _set(("spec", "podGroupTemplates"), None)),
    "two priorities": (
        "Workload",
        lambda obj: obj["spec"]["podGroupTemplates"].append(
            {**obj["spec"]["podGroupTemplates"][0], "name": "other", "priorityClassName": "low"}
        ),
    ),
    "nine templates": (
        "Workload",
        lambda obj: obj["spec"].update(
            podGroupTemplates=[{**obj["spec"]["podGroupTemplates"][0], "name": f"t{i}"} for i in range(9)]
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_offline_rules_agree_with_the_server(gang_cluster: Cluster, name: str) -> None:
    kind, change = BROKEN[name]
    obj = _broken(kind, change)
    obj["spec"] = {key: value for key, value in obj["spec"].items() if value is not None}
    offline = list(scheduling_issues(obj))
    priority_classes(gang_cluster, gang_objects())
    namespace = gang_cluster.create_namespace("rules")
    done = gang_cluster.kubectl(
        "create", "--dry-run=server", "-n", namespace, "-f", "-", input=json.dumps(obj), check=False
    )
    assert (done.returncode == 0) == (offline == []), (
        f"server: {done.stderr or 'accepted'}; mpigen: {offline}"
    )


def test_a_cluster_without_the_gate_serves_no_workload_and_drops_scheduling_group(
    cluster: Cluster, namespace: str
) -> None:
    """What the README says of a cluster that has not enabled GenericWorkload, as that cluster says it."""
    objects = mpigen.compile(
        job("v2beta1", "nogate", workers=1),
        mpigen.Options(namespace=namespace, gang_scheduler="kubernetes", ssh_secret="keys"),
    )
    gang = [obj for obj in objects if obj["apiVersion"] == "scheduling.k8s.io/v1beta1"]
    done = cluster.kubectl("apply", "--dry-run=server", "-f", "-", input=to_yaml(gang), check=False)
    assert done.returncode != 0
    assert 'no matches for kind "Workload" in version "scheduling.k8s.io/v1beta1"' in done.stderr, done.stderr
    (workers,) = [obj for obj in objects if obj["kind"] == "StatefulSet"]
    assert workers["spec"]["template"]["spec"]["schedulingGroup"] == {"podGroupName": "nogate"}
    created = cluster.kubectl("apply", "-o", "json", "-f", "-", input=to_yaml([workers]))
    assert "schedulingGroup" not in json.loads(created.stdout)["spec"]["template"]["spec"]
    assert created.stderr == "", "the API server drops the field without a warning"


@pytest.mark.parametrize("group", [{"podGroupName": "Not_A_Name"}, {"podGroupName": "ok.name"}, {}])
def test_a_pod_templates_scheduling_group_is_judged_as_the_server_does(
    gang_cluster: Cluster, group: Obj
) -> None:
    """mpigen's pod rule (mpigen.checks.pod.spec) on a template's own schedulingGroup, against a gated
    API server's verdict on a pod with it."""
    mpijob = job("v2beta1", "own-group", workers=1)
    mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["schedulingGroup"] = group
    try:
        mpigen.compile(mpijob, mpigen.Options(ssh_secret="keys"))
        offline = True
    except mpigen.CompileError as error:
        assert "schedulingGroup" in str(error)
        offline = False
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "own-group"},
        "spec": {"containers": [{"name": "c", "image": "x"}], "schedulingGroup": group},
    }
    namespace = gang_cluster.create_namespace("pod-group")
    done = gang_cluster.kubectl(
        "create", "--dry-run=server", "-n", namespace, "-f", "-", input=json.dumps(pod), check=False
    )
    assert (done.returncode == 0) == offline, done.stderr
