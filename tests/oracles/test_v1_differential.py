"""mpigen's kubeflow.org/v1 compile judged by the training-operator v1.9.3's own MPIJob reconciler (the
oracle, tests/oracles/v1).

As test_v2beta1_differential.py, for the v1 golden jobs (golden/*, one v1 MPIJob on the operator target):
each difference is a numbered row of docs/departures.md ("kubeflow.org/v1"), taken back out by
`DEPARTURES`, asserting it is exactly what the row says; what is left must be equal, and the rows the
corpus shows must be exactly the section's numbered rows. Jobs mpigen refuses and the operator runs
are rows too (`REFUSED`).
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from common_departures import (
    cleanup,
    free_disruptions,
    managed_by_multikueue,
    owner_references,
    pdb,
    scheduler_name,
    standard_labels,
)
from differential import (
    Departure,
    Obj,
    Pair,
    compare,
    get,
    pod_specs,
    take,
    without_mpigen_annotations,
)
from oracle_suite import Suite

from mpigen import names

pytestmark = pytest.mark.slow

API = "kubeflow.org/v1"
SECTION = "kubeflow.org/v1 (training-operator 1.9.3)"
ROOT = Path(__file__).resolve().parents[2]
REPLICA_INDEX = "training.kubeflow.org/replica-index"
OPERATOR_DELIVERY_IMAGE = "ghcr.io/kubeflow/training-v1/kubectl-delivery:latest"


# --- the departures ----------------------------------------------------------------------------------


def launcher_name(p: Pair) -> str:
    return names.launcher(p.name)


def namespace(p: Pair) -> bool:
    """A job that names no namespace: the operator's objects, its RoleBinding's subject and the
    kubectl-delivery `NAMESPACE` are the MPIJob's (`default` here); mpigen's name none (the subject's
    and NAMESPACE are the pod's own, through the downward API)."""
    if "namespace" in p.job["metadata"] or p.options.namespace:
        return False
    for obj in p.theirs.values():
        assert obj["metadata"].pop("namespace") == "default"
        for subject in obj.get("subjects", []):
            assert subject.pop("namespace") == "default"
    for obj in p.ours.values():
        assert "namespace" not in obj["metadata"]
        for spec in pod_specs(obj):
            for container in spec.get("initContainers", []):
                for var in container.get("env", []):
                    if var["name"] == "NAMESPACE":
                        assert var.pop("valueFrom") == {"fieldRef": {"fieldPath": "metadata.namespace"}}
                        var["value"] = "default"
    return True


def run_policy_on_the_job(p: Pair) -> bool:
    """The run policy's `activeDeadlineSeconds`, `ttlSecondsAfterFinished` and `backoffLimit` go on mpigen's
    launcher Job (with `backoffLimit: 0` for a Never or ExitCode launcher that sets none); the operator
    keeps them on the MPIJob and acts on them itself."""
    job = p.ours.get(("Job", launcher_name(p)))
    if job is None:
        return False
    for field in ("activeDeadlineSeconds", "ttlSecondsAfterFinished", "backoffLimit"):
        policy = get(p.spec, "runPolicy", field)
        if field in job["spec"]:
            assert job["spec"].pop(field) in (policy, 0 if field == "backoffLimit" else policy)
    return True


def launcher_job(p: Pair) -> bool:
    """The launcher is a Job whose pod template is the operator's launcher Pod; its pod's hostname is
    `<job>-launcher` when the launcher is a host of the hostfile. Here it is turned back into the Pod."""
    job = p.ours.pop(("Job", launcher_name(p)), None)
    if job is None:
        return False
    template = job["spec"].pop("template")
    assert set(job["spec"]) <= {"suspend"}, job["spec"]
    meta = {"name": launcher_name(p), **{k: v for k, v in job["metadata"].items() if k == "namespace"}}
    meta.update(template.get("metadata", {}))
    spec = template["spec"]
    theirs = p.theirs.get(("Pod", launcher_name(p)), {}).get("spec", {})
    if spec.get("hostname") == launcher_name(p) and "hostname" not in theirs:
        del spec["hostname"]
    p.ours[("Pod", launcher_name(p))] = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    return True


def worker_pods(p: Pair) -> bool:
    """Workers: a StatefulSet `<job>-worker` and its headless Service; here expanded into the pods."""
    key = ("StatefulSet", names.worker_set(p.name))
    if key not in p.ours:
        return False
    workers = p.ours.pop(key)
    take(p.ours, "Service", names.worker_set(p.name))
    template = workers["spec"]["template"]
    for index in range(workers["spec"]["replicas"]):
        pod_name = names.worker_pod(p.name, index)
        meta: Obj = {"name": pod_name}
        if "namespace" in workers["metadata"]:
            meta["namespace"] = workers["metadata"]["namespace"]
        meta.update(
            copy.deepcopy({k: v for k, v in template["metadata"].items() if k in ("labels", "annotations")})
        )
        p.ours[("Pod", pod_name)] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": copy.deepcopy(template["spec"]),
        }
    return True


def worker_restart_policy(p: Pair) -> bool:
    """The operator's worker pods restart as the Worker's restartPolicy says (default Never); the
    StatefulSet's always."""
    fired = False
    for obj in p.of_kind(p.theirs, "Pod"):
        ours = p.ours.get(("Pod", obj["metadata"]["name"]))
        if ours is not None and obj["metadata"]["name"] != launcher_name(p):
            assert ours["spec"]["restartPolicy"] == "Always"
            ours["spec"]["restartPolicy"] = obj["spec"]["restartPolicy"]
            fired = True
    return fired


def replica_index(p: Pair) -> bool:
    """The operator's `training.kubeflow.org/replica-index` label on each worker pod."""
    fired = False
    for obj in p.of_kind(p.theirs, "Pod"):
        if obj["metadata"]["name"] != launcher_name(p):
            index = obj["metadata"]["name"].rsplit("-", 1)[1]
            assert obj["metadata"]["labels"].pop(REPLICA_INDEX) == index
            fired = True
    return fired


def worker_token(p: Pair) -> bool:
    """Worker pods that name no ServiceAccount get `automountServiceAccountToken: false`."""
    fired = False
    for obj in p.of_kind(p.ours, "Pod"):
        if (
            obj["metadata"]["name"] != launcher_name(p)
            and obj["spec"].get("automountServiceAccountToken") is False
        ):
            theirs = p.theirs[("Pod", obj["metadata"]["name"])]["spec"]
            if "automountServiceAccountToken" not in theirs:
                del obj["spec"]["automountServiceAccountToken"]
                fired = True
    return fired


def wait_for_workers(p: Pair) -> bool:
    """The launcher's init container `wait-for-workers` (wait-for-workers.sh, its own /tmp volume) waits
    for the workers."""
    launcher = p.ours.get(("Pod", launcher_name(p)))
    if launcher is None:
        return False
    inits = launcher["spec"]["initContainers"]
    waiting = [c for c in inits if c["name"] == names.WAIT_FOR_WORKERS]
    if not waiting:
        return False
    launcher["spec"]["initContainers"] = [c for c in inits if c["name"] != names.WAIT_FOR_WORKERS]
    others = launcher["spec"]["containers"] + launcher["spec"]["initContainers"]
    kept = {m["name"] for c in others for m in c.get("volumeMounts", [])}
    own = {m["name"] for m in waiting[0].get("volumeMounts", [])} - kept
    launcher["spec"]["volumes"] = [v for v in launcher["spec"]["volumes"] if v["name"] not in own]
    p.ours[("ConfigMap", names.config_map(p.name))]["data"].pop(names.WAIT_SCRIPT)
    for volume in launcher["spec"]["volumes"]:
        if volume["name"] == names.CONFIG_VOLUME:
            items = volume["configMap"]["items"]
            volume["configMap"]["items"] = [i for i in items if i["key"] != names.WAIT_SCRIPT]
    return True


def launcher_role(p: Pair) -> bool:
    """The launcher Role: the operator grants get, list and watch on every pod and exec into the workers
    (into every pod when there are none); mpigen `get` and exec on the worker pods by name only."""
    theirs = p.theirs.get(("Role", launcher_name(p)))
    ours = p.ours.get(("Role", launcher_name(p)))
    if theirs is None or ours is None or ours["rules"] == theirs["rules"]:
        return False
    workers = [
        names.worker_pod(p.name, i) for i in range(get(p.spec, "mpiReplicaSpecs", "Worker", "replicas") or 0)
    ]
    assert ours["rules"] == [
        {"apiGroups": [""], "resourceNames": workers, "resources": ["pods"], "verbs": ["get"]},
        {"apiGroups": [""], "resourceNames": workers, "resources": ["pods/exec"], "verbs": ["create"]},
    ]
    ours["rules"] = theirs["rules"]
    return True


def no_workers_no_rbac(p: Pair) -> bool:
    """A job without workers: no launcher Role or RoleBinding (the ServiceAccount stays)."""
    if ("Role", launcher_name(p)) in p.ours or ("Role", launcher_name(p)) not in p.theirs:
        return False
    assert not get(p.spec, "mpiReplicaSpecs", "Worker", "replicas")
    take(p.theirs, "Role", launcher_name(p))
    take(p.theirs, "RoleBinding", launcher_name(p))
    return True


def delivery_image(p: Pair) -> bool:
    """mpigen's default kubectl-delivery image is `kubeflow/kubectl-delivery:latest`; the operator's (its
    --mpi-kubectl-delivery-image default at 1.9.3) is ghcr.io/kubeflow/training-v1/kubectl-delivery.
    mpigen writes the command out (`cp /bin/kubectl /opt/kube/kubectl`); the operator's runs the image's."""
    fired = False
    launcher = p.ours.get(("Pod", launcher_name(p)))
    theirs = p.theirs.get(("Pod", launcher_name(p)), {}).get("spec", {}).get("initContainers", [])
    assert all("command" not in c for c in theirs if c["name"] == names.KUBECTL_DELIVERY)
    for container in (launcher or {}).get("spec", {}).get("initContainers", []):
        if container["name"] == names.KUBECTL_DELIVERY:
            assert container.pop("command") == ["cp", "/bin/kubectl", "/opt/kube/kubectl"]
            fired = True
        if container["name"] == names.KUBECTL_DELIVERY and container["image"] != OPERATOR_DELIVERY_IMAGE:
            assert container["image"] == (
                p.options.kubectl_delivery_image or "kubeflow/kubectl-delivery:latest"
            )
            container["image"] = OPERATOR_DELIVERY_IMAGE
            fired = True
    return fired


def hardened_delivery(p: Pair) -> bool:
    """mpigen's kubectl-delivery container runs as a non-root user with a read-only root, no privilege
    escalation, no capabilities and the runtime's seccomp profile."""
    launcher = p.ours.get(("Pod", launcher_name(p)))
    fired = False
    for container in (launcher or {}).get("spec", {}).get("initContainers", []):
        if container["name"] == names.KUBECTL_DELIVERY and "securityContext" in container:
            assert container.pop("securityContext")["runAsNonRoot"] is True
            fired = True
    return fired


def no_tree_spawn(p: Pair) -> bool:
    """The launcher also sets OMPI_MCA_plm_rsh_no_tree_spawn=1."""
    launcher = p.ours.get(("Pod", launcher_name(p)))
    if launcher is None:
        return False
    fired = False
    for container in launcher["spec"]["containers"]:
        env = container.get("env", [])
        if any(v["name"] == names.NO_TREE_SPAWN_ENV for v in env):
            container["env"] = [v for v in env if v["name"] != names.NO_TREE_SPAWN_ENV]
            fired = True
    return fired


def kubexec_quoting(p: Pair) -> bool:
    """kubexec.sh quotes `"${POD_NAME}"`."""
    ours = p.ours.get(("ConfigMap", names.config_map(p.name)))
    if ours is None or "kubexec.sh" not in ours["data"]:
        return False
    text = ours["data"]["kubexec.sh"]
    ours["data"]["kubexec.sh"] = text.replace('"${POD_NAME}"', "${POD_NAME}").removesuffix("\n")
    return text != ours["data"]["kubexec.sh"]


def discover_hosts(p: Pair) -> bool:
    """discover_hosts.sh: the operator's ends without a newline (and has an empty line after a GPU
    launcher's entry); mpigen's lines are the same hosts, one per line, with a final newline."""
    ours = p.ours.get(("ConfigMap", names.config_map(p.name)))
    theirs = p.theirs.get(("ConfigMap", names.config_map(p.name)))
    if ours is None or theirs is None:
        return False
    mine, their = ours["data"]["discover_hosts.sh"], theirs["data"]["discover_hosts.sh"]
    if mine == their:
        return False
    assert sorted(line for line in their.splitlines() if line) == sorted(mine.splitlines())
    theirs["data"]["discover_hosts.sh"] = mine
    return True


def suspended(p: Pair) -> bool:
    """suspend: the operator creates nothing while suspended; mpigen renders the job with the launcher
    Job suspended and the StatefulSet at 0 replicas."""
    if not get(p.spec, "runPolicy", "suspend"):
        return False
    assert p.theirs == {}
    launcher = p.ours[("Job", launcher_name(p))]
    assert launcher["spec"]["suspend"] is True
    assert p.ours[("StatefulSet", names.worker_set(p.name))]["spec"]["replicas"] == 0
    p.ours.clear()
    return True


def template_service_account(p: Pair) -> bool:
    """A launcher template naming its ServiceAccount: the operator creates it; mpigen does not."""
    account = get(p.spec, "mpiReplicaSpecs", "Launcher", "template", "spec", "serviceAccountName")
    if not account or account == launcher_name(p):
        return False
    take(p.theirs, "ServiceAccount", account)
    return True


def pod_group_annotations(p: Pair) -> bool:
    """The gang PodGroup: the operator copies the MPIJob's annotations; mpigen copies none."""
    fired = False
    for obj in p.of_kind(p.theirs, "PodGroup"):
        if "annotations" in obj["metadata"]:
            assert (
                obj["metadata"].pop("annotations")
                == without_mpigen_annotations(p.job)["metadata"]["annotations"]
            )
            fired = True
    return fired


DEPARTURES: dict[int, Departure] = {
    1: managed_by_multikueue,
    2: suspended,
    3: owner_references,
    4: namespace,
    6: run_policy_on_the_job,
    29: free_disruptions,
    7: launcher_job,
    8: worker_pods,
    5: standard_labels,
    28: scheduler_name,
    9: worker_restart_policy,
    10: replica_index,
    11: worker_token,
    12: wait_for_workers,
    13: launcher_role,
    14: no_workers_no_rbac,
    15: template_service_account,
    16: delivery_image,
    17: hardened_delivery,
    18: no_tree_spawn,
    19: kubexec_quoting,
    20: discover_hosts,
    21: cleanup,
    22: pod_group_annotations,
    23: pdb,
}


# Golden error cases the operator runs: the row that says why mpigen refuses them.
REFUSED: dict[str, int] = {
    "error-v1-launcher-restart-policy-always": 24,
    "error-v1-main-container-unknown": 24,
    "error-v1-restart-policy-unknown": 24,
    "error-v1-slots-per-worker-zero": 24,
    "error-v1-worker-replicas-negative": 24,
    "error-v1-reserved-names": 25,
    "error-pod-duplicate-port-names": 26,
    "error-v1-fields-of-v2beta1": 27,
}


# Jobs beyond the golden corpus, for rows it does not show.


def job(name: str, annotations: dict[str, str]) -> Obj:
    """A small v1 job (a launcher, two workers) with `annotations`."""
    return {
        "apiVersion": API,
        "kind": "MPIJob",
        "metadata": {"name": name, "namespace": "team-a", "annotations": annotations},
        "spec": {
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "template": {
                        "spec": {"containers": [{"name": "launcher", "image": "registry.example/mpi:1"}]}
                    },
                },
                "Worker": {
                    "replicas": 2,
                    "template": {
                        "spec": {"containers": [{"name": "worker", "image": "registry.example/mpi:1"}]}
                    },
                },
            }
        },
    }


GENERATED: dict[str, Obj] = {
    "gang-with-annotations": job(
        "noted", {"team.example/owner": "research", "mpigen.dev/gang-scheduler": "volcano"}
    ),
    "volcano-own-scheduler-name": job(
        "own", {"mpigen.dev/gang-scheduler": "volcano", "mpigen.dev/scheduler-name": "team-volcano"}
    ),
}


SUITE = Suite(API, SECTION, DEPARTURES, REFUSED, GENERATED)


@pytest.mark.parametrize("case", SUITE.success)
def test_golden_job_matches_the_operator(case: str) -> None:
    SUITE.golden_rows(case)


@pytest.mark.parametrize("case", SUITE.errors)
def test_golden_refusal_is_the_operators_or_a_row(case: str) -> None:
    SUITE.assert_refused(case)


def test_every_row_is_seen() -> None:
    """The rows the corpus shows are exactly the numbered rows of the v1 section."""
    SUITE.assert_every_row_seen()


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_job_matches_the_operator(name: str) -> None:
    compare(DEPARTURES, GENERATED[name])
