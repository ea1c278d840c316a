"""mpigen's kubeflow.org/v1alpha2 compile judged by mpi-operator v0.3.0's own v1alpha2 controller (the
oracle, tests/oracles/v1alpha2), the last release that served v1alpha2.

As test_v2beta1_differential.py, for the v1alpha2 golden jobs (golden/*, one v1alpha2 MPIJob on the
operator target) and a few generated ones: each difference is a numbered row of docs/departures.md
("kubeflow.org/v1alpha2 (mpi-operator v0.3.0)"), taken back out by `DEPARTURES`, asserting it is
exactly what the row says; what is left must be equal, and the rows the corpus shows must be exactly the
section's numbered rows. Jobs mpigen refuses and the operator runs are rows too (`REFUSED`).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from common_departures import (
    cleanup,
    free_disruptions,
    owner_references,
    pdb,
    scheduler_name,
    standard_labels,
)
from differential import Departure, Obj, Pair, compare, get, pod_specs, pop, take
from oracle_suite import Suite

from mpigen import names

pytestmark = pytest.mark.slow

API = "kubeflow.org/v1alpha2"
SECTION = "kubeflow.org/v1alpha2 (mpi-operator v0.3.0)"
KUBE_BATCH = "scheduling.incubator.k8s.io/v1alpha1"
GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"  # kube-batch v0.5.0 apis/scheduling/v1alpha1


# --- the departures, in the order they are taken out -------------------------------------------------


def launcher_spec(side: dict[Any, Obj], p: Pair) -> Obj | None:
    launcher = side.get(("Job", names.launcher(p.name)))
    return None if launcher is None else launcher["spec"]["template"]["spec"]


def namespace(p: Pair) -> bool:
    """A job that names no namespace: the operator's objects and its RoleBinding's subject are in the
    MPIJob's (`default` here); mpigen's name none."""
    if "namespace" in p.job["metadata"] or p.options.namespace:
        return False
    for obj in p.theirs.values():
        assert obj["metadata"].pop("namespace") == "default"
        for subject in obj.get("subjects", []):
            assert subject.pop("namespace") == "default"
    assert not any("namespace" in o["metadata"] for o in p.ours.values())
    return True


def worker_service(p: Pair) -> bool:
    """mpigen's headless Service `<job>-worker`, which the StatefulSet names (`serviceName`); v0.3.0
    names it and creates none."""
    service = take(p.ours, "Service", names.worker_set(p.name))
    assert service["spec"]["clusterIP"] == "None"
    assert p.theirs[("StatefulSet", names.worker_set(p.name))]["spec"]["serviceName"] == names.worker_set(
        p.name
    )
    return True


def worker_token(p: Pair) -> bool:
    """Worker pods that name no ServiceAccount get `automountServiceAccountToken: false`."""
    workers = p.ours.get(("StatefulSet", names.worker_set(p.name)))
    spec = workers["spec"]["template"]["spec"] if workers else {}
    if spec.get("automountServiceAccountToken") is not False or "serviceAccountName" in spec:
        return False
    theirs = p.theirs[("StatefulSet", names.worker_set(p.name))]["spec"]["template"]["spec"]
    assert "automountServiceAccountToken" not in theirs
    del spec["automountServiceAccountToken"]
    return True


def launcher_role(p: Pair) -> bool:
    """The launcher Role: v0.3.0 grants get, list and watch on every pod of the namespace (its
    kubectl-delivery program watches them) and exec into the workers; mpigen `get` and exec on the
    worker pods by name only, as v0.2.0."""
    ours = p.ours[("Role", names.launcher(p.name))]
    theirs = p.theirs[("Role", names.launcher(p.name))]
    workers = [
        names.worker_pod(p.name, i) for i in range(get(p.spec, "mpiReplicaSpecs", "Worker", "replicas"))
    ]
    assert theirs["rules"][0] == {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}
    assert ours["rules"][0] == {
        "apiGroups": [""],
        "resourceNames": workers,
        "resources": ["pods"],
        "verbs": ["get"],
    }
    ours["rules"][0] = theirs["rules"][0]
    return True


def kubectl_delivery(p: Pair) -> bool:
    """The launcher's kubectl-delivery init container: v0.3.0's runs the image's own program (which waits
    for the workers, watching the pods of `NAMESPACE`, writes /opt/kube/hosts from their IPs, and copies
    kubectl), `IfNotPresent`, with 100m CPU, 512Mi memory and 5Gi ephemeral storage, and the config
    volume mounted; mpigen's copies kubectl only (`cp /bin/kubectl /opt/kube/kubectl`), hardened, with
    small resources, and the waiting is wait-for-workers's."""
    ours, theirs = launcher_spec(p.ours, p), launcher_spec(p.theirs, p)
    assert ours is not None and theirs is not None
    [mine] = [c for c in ours["initContainers"] if c["name"] == names.KUBECTL_DELIVERY]
    [their] = [c for c in theirs["initContainers"] if c["name"] == names.KUBECTL_DELIVERY]
    assert mine.pop("command") == ["cp", "/bin/kubectl", "/opt/kube/kubectl"]
    assert mine.pop("securityContext")["runAsNonRoot"] is True
    assert mine["image"] == their["image"]
    assert their.pop("imagePullPolicy") == "IfNotPresent"
    assert [e["name"] for e in their.pop("env")] == ["TARGET_DIR", "NAMESPACE"]
    assert [e["name"] for e in mine.pop("env")] == ["TARGET_DIR"]
    assert their.pop("resources")["limits"] == {"cpu": "100m", "ephemeral-storage": "5Gi", "memory": "512Mi"}
    mine.pop("resources")
    assert [m["name"] for m in their.pop("volumeMounts")] == [names.KUBECTL_VOLUME, names.CONFIG_VOLUME]
    assert [m["name"] for m in mine.pop("volumeMounts")] == [names.KUBECTL_VOLUME]
    return True


def wait_for_workers(p: Pair) -> bool:
    """The launcher's init container `wait-for-workers` (wait-for-workers.sh, its own /tmp volume) polls
    the worker pods until they are Ready; v0.3.0's kubectl-delivery program waits instead."""
    ours = launcher_spec(p.ours, p)
    assert ours is not None
    inits = ours["initContainers"]
    [waiting] = [c for c in inits if c["name"] == names.WAIT_FOR_WORKERS]
    ours["initContainers"] = [c for c in inits if c is not waiting]
    kept = {m["name"] for c in ours["containers"] + ours["initContainers"] for m in c.get("volumeMounts", [])}
    own = {m["name"] for m in waiting["volumeMounts"]} - kept
    ours["volumes"] = [v for v in ours["volumes"] if v["name"] not in own]
    p.ours[("ConfigMap", names.config_map(p.name))]["data"].pop(names.WAIT_SCRIPT)
    for volume in ours["volumes"]:
        if volume["name"] == names.CONFIG_VOLUME:
            items = volume["configMap"]["items"]
            volume["configMap"]["items"] = [i for i in items if i["key"] != names.WAIT_SCRIPT]
    return True


def no_tree_spawn(p: Pair) -> bool:
    """An Open MPI launcher also gets OMPI_MCA_plm_rsh_no_tree_spawn=1."""
    ours = launcher_spec(p.ours, p)
    assert ours is not None
    container = ours["containers"][0]
    env = container.get("env", [])
    if not any(v["name"] == names.NO_TREE_SPAWN_ENV for v in env):
        assert p.spec.get("mpiDistribution") in ("IntelMPI", "MPICH")
        return False
    container["env"] = [v for v in env if v["name"] != names.NO_TREE_SPAWN_ENV]
    return True


def kubexec(p: Pair) -> bool:
    """kubexec.sh: v0.3.0's copies /opt/kube/hosts (written by its kubectl-delivery program) into the
    pod and appends it to the pod's /etc/hosts before each command; mpigen's runs the command alone (and
    quotes its expansions, ends with a newline). Both skip the leading `-` arguments an ssh-style caller
    (Hydra) passes."""
    ours = p.ours[("ConfigMap", names.config_map(p.name))]["data"]
    theirs = p.theirs[("ConfigMap", names.config_map(p.name))]["data"]
    their = theirs["kubexec.sh"]
    assert "kubectl cp /opt/kube/hosts ${POD_NAME}:/etc/hosts_of_nodes\n" in their
    assert '-- /bin/sh -c "cat /etc/hosts_of_nodes >> /etc/hosts && $*"' in their
    mine = ours["kubexec.sh"]
    expected = (
        their.replace("/opt/kube/kubectl cp /opt/kube/hosts ${POD_NAME}:/etc/hosts_of_nodes\n", "")
        .replace("cat /etc/hosts_of_nodes >> /etc/hosts && ", "")
        .replace("exec ${POD_NAME}", 'exec "${POD_NAME}"')
        .replace('while [ ${POD_NAME%${POD_NAME#?}} = "-" ]', 'while [ "${POD_NAME%"${POD_NAME#?}"}" = "-" ]')
        + "\n"
    )
    assert mine == expected, (mine, expected)
    theirs["kubexec.sh"] = mine
    return True


def gang_pod_group(p: Pair) -> bool:
    """Gang scheduling: v0.3.0 creates kube-batch's PodGroup (scheduling.incubator.k8s.io/v1alpha1) and
    names it on the pods with the annotation `scheduling.k8s.io/group-name`; mpigen creates the gang
    scheduler's own: Volcano's (scheduling.volcano.sh/v1beta1, which reads the same annotation) or
    scheduler-plugins' (scheduling.x-k8s.io/v1alpha1, named by the label `scheduling.x-k8s.io/pod-group`
    instead, and with no `priorityClassName` field for the template's priority class)."""
    their = p.theirs.get(("PodGroup", p.name))
    mine = p.ours.get(("PodGroup", p.name))
    if their is None:
        assert mine is None or p.options.gang_scheduler == "kubernetes"
        return False
    assert mine is not None and their["apiVersion"] == KUBE_BATCH
    their["apiVersion"] = mine["apiVersion"]
    if mine["apiVersion"] == "scheduling.x-k8s.io/v1alpha1":
        their["spec"].pop("priorityClassName", None)
        for key in (("Job", names.launcher(p.name)), ("StatefulSet", names.worker_set(p.name))):
            assert (
                p.ours[key]["spec"]["template"]["metadata"]["labels"].pop("scheduling.x-k8s.io/pod-group")
                == p.name
            )
            template = p.theirs[key]["spec"]["template"]["metadata"]
            assert pop(template, "annotations", GROUP_NAME_ANNOTATION) == p.name
    else:
        assert mine["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    return True


def newer_pod_fields(p: Pair) -> bool:
    """Pod template fields newer than v0.3.0's k8s.io/api (v0.15): its types drop them when it copies the
    template (a pod `securityContext.seccompProfile`); mpigen keeps them."""
    fired = False
    for key, obj in p.ours.items():
        for spec, their in zip(pod_specs(obj), pod_specs(p.theirs.get(key, {"kind": ""})), strict=False):
            profile = get(spec, "securityContext", "seccompProfile")
            if profile is not None and get(their, "securityContext", "seccompProfile") is None:
                pop(spec, "securityContext", "seccompProfile")
                fired = True
    return fired


def network_policy(p: Pair) -> bool:
    """--network-policy same-job: mpigen's NetworkPolicy `<job>`."""
    if p.options.network_policy is None:
        return False
    take(p.ours, "NetworkPolicy", p.name)
    return True


def native_gang(p: Pair) -> bool:
    """--gang-scheduler kubernetes: mpigen's Workload and PodGroup `<job>` (scheduling.k8s.io/v1beta1) and
    the pods' `spec.schedulingGroup`; v0.3.0 has no such gang."""
    if p.options.gang_scheduler != "kubernetes":
        assert not p.unstored and not p.scheduling_groups
        return False
    assert sorted(p.unstored) == [("PodGroup", p.name), ("Workload", p.name)]
    p.unstored.clear()
    assert all(v == {"podGroupName": p.name} for v in p.scheduling_groups.values())
    p.scheduling_groups.clear()
    return True


DEPARTURES: dict[int, Departure] = {
    1: owner_references,
    2: namespace,
    3: standard_labels,
    4: worker_service,
    5: worker_token,
    6: launcher_role,
    7: kubectl_delivery,
    8: wait_for_workers,
    9: no_tree_spawn,
    10: kubexec,
    11: cleanup,
    12: gang_pod_group,
    13: pdb,
    14: scheduler_name,
    15: native_gang,
    16: network_policy,
    17: free_disruptions,
    18: newer_pod_fields,
}

# Golden error cases the operator runs: the row that says why mpigen refuses them.
REFUSED: dict[str, int] = {
    **{
        case: 19
        for case in (
            "error-generate-name",
            "error-name-invalid",
            "error-name-starts-with-digit",
            "error-name-too-long",
            "error-namespace-invalid",
        )
    },
    **{
        case: 20
        for case in (
            "error-namespace-mismatch",
            "error-option-annotations",
            "jobset-error-queue-on-operator-target",
        )
    },
    **{
        case: 21
        for case in (
            "error-pod-env-name-with-equals",
            "error-pod-level-requests-below-containers",
            "error-template-label-value-too-long",
            "error-every-problem-behind-unknown-replica-type",
        )
    },
    **{
        case: 22
        for case in (
            "error-reserved-container-names",
            "error-reserved-mount-paths",
            "error-reserved-ompi-env",
            "error-reserved-volume-name",
        )
    },
    "error-v1alpha2-launcher-replicas-2": 23,
    "error-v1alpha2-worker-replicas-zero": 23,
    "error-config-map-over-1mib": 24,
}
# Error cases not sent to the oracle: v0.3.0 would build a 65 GB hostfile string before anything else.
NOT_RUN: dict[str, int] = {"error-worker-count-absurd": 24}


def job(name: str, **spec: Any) -> Obj:
    """A small v1alpha2 job (a launcher, two workers of 2 slots) with spec fields added."""
    container = {"name": "main", "image": "registry.example/mpi:3"}
    return {
        "apiVersion": API,
        "kind": "MPIJob",
        "metadata": {"name": name, "namespace": "team-a"},
        "spec": {
            "slotsPerWorker": 2,
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "template": {
                        "spec": {"containers": [{**container, "command": ["mpiexec", "-n", "4", "app"]}]}
                    },
                },
                "Worker": {"replicas": 2, "template": {"spec": {"containers": [copy.deepcopy(container)]}}},
            },
            **spec,
        },
    }


def with_worker_command(job_: Obj) -> Obj:
    job_["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["command"] = [
        "sshd",
        "-De",
    ]
    return job_


def annotated(job_: Obj, **annotations: str) -> Obj:
    job_["metadata"]["annotations"] = {f"mpigen.dev/{k.replace('_', '-')}": v for k, v in annotations.items()}
    return job_


def with_priority_class(job_: Obj) -> Obj:
    job_["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["priorityClassName"] = "high"
    return annotated(job_, gang_scheduler="volcano")


GENERATED: dict[str, Obj] = {
    "gang-priority-class": with_priority_class(job("urgent")),
    "worker-command": with_worker_command(job("cmd")),
    "volcano-own-scheduler-name": annotated(
        job("own"), gang_scheduler="volcano", scheduler_name="team-volcano"
    ),
}

SUITE = Suite(API, SECTION, DEPARTURES, REFUSED, GENERATED, not_run=NOT_RUN)


@pytest.mark.parametrize("case", SUITE.success)
def test_golden_job_matches_the_operator(case: str) -> None:
    SUITE.golden_rows(case)


@pytest.mark.parametrize("case", SUITE.errors)
def test_golden_refusal_is_the_operators_or_a_row(case: str) -> None:
    SUITE.assert_refused(case)


def test_every_row_is_seen() -> None:
    """The rows the corpus shows are exactly the numbered rows of the v1alpha2 section."""
    SUITE.assert_every_row_seen()


def test_refused_cases_are_still_error_cases() -> None:
    SUITE.assert_refused_cases_are_error_cases()


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_job_matches_the_operator(name: str) -> None:
    compare(DEPARTURES, GENERATED[name])
