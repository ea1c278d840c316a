"""mpigen's kubeflow.org/v2beta1 compile judged by mpi-operator v0.8.2's own controller (the oracle,
tests/oracles/v2beta1).

Every v2beta1 job of the golden corpus (golden/v2beta1-*, with the case's options) and a set of
generated jobs is compiled by both, and the objects are compared field by field. Each difference must be
a numbered row of docs/departures.md ("kubeflow.org/v2beta1"): `DEPARTURES` takes each one back out of
mpigen's objects (or the operator's), asserting that it is exactly what the row says, and what is left
must be equal. `test_every_row_is_seen` asserts that the rows the corpus shows are exactly the numbered
rows of that section: a new difference fails (no row explains it), and so does a row that no job shows
any more. Jobs mpigen refuses and the operator runs are rows too (`REFUSED`).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

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
    pop,
    take,
)
from oracle_suite import Suite

from mpigen import names, placement

pytestmark = pytest.mark.slow

API = "kubeflow.org/v2beta1"
SECTION = "kubeflow.org/v2beta1 (mpi-operator v0.8.2)"
ROOT = Path(__file__).resolve().parents[2]


REPLICA_INDEX = "training.kubeflow.org/replica-index"


# --- the departures, in the order they are taken out -------------------------------------------------


def namespace(p: Pair) -> bool:
    """A job that names no namespace: the operator's objects are in the MPIJob's (`default` here); mpigen's
    name none, and the hostfile and discover_hosts.sh name hosts `<pod>.<job>` with no DNS search entry."""
    if "namespace" in p.job["metadata"] or p.options.namespace:
        return False
    for obj in p.theirs.values():
        assert obj["metadata"].pop("namespace") == "default"
        for spec in pod_specs(obj):
            if get(spec, "dnsConfig", "searches") == [f"{p.name}.default.svc.cluster.local"]:
                pop(spec, "dnsConfig", "searches")
        if obj["kind"] == "ConfigMap":
            for file in ("hostfile", "discover_hosts.sh"):
                obj["data"][file] = obj["data"][file].replace(f".{p.name}.default.svc", f".{p.name}")
    assert not any("namespace" in o["metadata"] for o in p.ours.values())
    return True


def ssh_keys(p: Pair) -> bool:
    """The operator writes a fresh key pair into an ssh-auth Secret; mpigen an empty Opaque Secret filled
    by the key Job `<job>-ssh-keygen` (its ServiceAccount, Role, RoleBinding, ssh-keygen.sh), or names
    the user's Secret (--ssh-secret)."""
    secret = f"{p.name}-ssh"
    theirs = take(p.theirs, "Secret", secret)
    assert (theirs["type"], sorted(theirs["data"])) == (
        "kubernetes.io/ssh-auth",
        ["ssh-privatekey", "ssh-publickey"],
    )
    if p.options.ssh_secret:
        for obj in p.ours.values():
            for spec in pod_specs(obj):
                for volume in spec.get("volumes", []):
                    if get(volume, "secret", "secretName") == p.options.ssh_secret:
                        volume["secret"]["secretName"] = secret
        return True
    ours = take(p.ours, "Secret", secret)
    assert (ours["type"], "data" in ours) == ("Opaque", False)
    keygen = f"{p.name}{names.SSH_KEYGEN_SUFFIX}"
    for kind in ("ServiceAccount", "Role", "RoleBinding", "Job"):
        take(p.ours, kind, keygen)
    p.ours[("ConfigMap", names.config_map(p.name))]["data"].pop("ssh-keygen.sh")
    return True


def worker_pods(p: Pair) -> bool:
    """mpigen's workers are a StatefulSet `<job>-worker` (serviceName `<job>`, Parallel), whose pods get
    the operator's names, hostnames and subdomain; here it is expanded into those pods."""
    key = ("StatefulSet", names.worker_set(p.name))
    if key not in p.ours:
        return False
    workers = p.ours.pop(key)
    spec = workers["spec"]
    assert (spec["serviceName"], spec["podManagementPolicy"]) == (p.name, "Parallel")
    template = spec["template"]
    for index in range(spec["replicas"]):
        pod_name = names.worker_pod(p.name, index)
        meta: Obj = {
            "name": pod_name,
            **({"namespace": workers["metadata"]["namespace"]} if "namespace" in workers["metadata"] else {}),
        }
        meta.update(
            copy.deepcopy({k: v for k, v in template["metadata"].items() if k in ("labels", "annotations")})
        )
        pod_spec = {**copy.deepcopy(template["spec"]), "hostname": pod_name, "subdomain": p.name}
        p.ours[("Pod", pod_name)] = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pod_spec}
    return True


def worker_restart_policy(p: Pair) -> bool:
    """The operator's worker pods restart as the Worker's restartPolicy says (default Never); the
    StatefulSet's always."""
    fired = False
    for obj in p.of_kind(p.theirs, "Pod"):
        ours = p.ours.get(("Pod", obj["metadata"]["name"]))
        if ours is not None:
            assert ours["spec"]["restartPolicy"] == "Always"
            ours["spec"]["restartPolicy"] = obj["spec"]["restartPolicy"]
            fired = True
    return fired


def replica_index(p: Pair) -> bool:
    """The operator's `training.kubeflow.org/replica-index` label on each worker pod."""
    offset = 1 if p.spec.get("runLauncherAsWorker") else 0
    fired = False
    for obj in p.of_kind(p.theirs, "Pod"):
        index = int(obj["metadata"]["name"].rsplit("-", 1)[1])
        assert obj["metadata"]["labels"].pop(REPLICA_INDEX) == str(index + offset)
        fired = True
    return fired


def no_token(p: Pair) -> bool:
    """mpigen's launcher and worker pods that name no ServiceAccount (and say nothing about the token)
    get `automountServiceAccountToken: false`; the operator's mount the namespace default's token."""
    fired = False
    for obj in p.ours.values():
        if obj["kind"] in ("Pod", "Job") and obj["metadata"]["name"] != f"{p.name}-cleanup":
            for spec in pod_specs(obj):
                their = p.theirs.get((obj["kind"], obj["metadata"]["name"]))
                theirs_spec = next(pod_specs(their)) if their else {}
                if (
                    spec.get("automountServiceAccountToken") is False
                    and "automountServiceAccountToken" not in theirs_spec
                ):
                    assert "serviceAccountName" not in theirs_spec
                    del spec["automountServiceAccountToken"]
                    fired = True
    return fired


def wait_for_workers(p: Pair) -> bool:
    """WaitForWorkersReady: the operator creates the launcher Job once the workers are Ready (here they
    are, so it exists); mpigen's launcher exists at once and waits in its init container
    `wait-for-workers`, with the Role `<job>-launcher` (and its ServiceAccount unless the template names
    one) and wait-for-workers.sh."""
    if p.spec.get("launcherCreationPolicy") != "WaitForWorkersReady":
        return False
    launcher = p.ours[("Job", names.launcher(p.name))]["spec"]["template"]["spec"]
    [init] = [c for c in launcher.pop("initContainers") if c["name"] == names.WAIT_FOR_WORKERS] or [None]
    assert init is not None
    extra = {v["name"] for v in launcher["volumes"]} - {
        v["name"] for v in next(pod_specs(p.theirs[("Job", names.launcher(p.name))]))["volumes"]
    }
    launcher["volumes"] = [v for v in launcher["volumes"] if v["name"] not in extra]
    config = next(v for v in launcher["volumes"] if v["name"] == names.CONFIG_VOLUME)
    config["configMap"]["items"] = [i for i in config["configMap"]["items"] if i["key"] != names.WAIT_SCRIPT]
    own = launcher_template_account(p)
    if own is None:
        assert launcher.pop("serviceAccountName") == names.launcher(p.name)
        take(p.ours, "ServiceAccount", names.launcher(p.name))
    for kind in ("Role", "RoleBinding"):
        take(p.ours, kind, names.launcher(p.name))
    p.ours[("ConfigMap", names.config_map(p.name))]["data"].pop(names.WAIT_SCRIPT)
    return True


def launcher_template_account(p: Pair) -> str | None:
    account = get(p.spec, "mpiReplicaSpecs", "Launcher", "template", "spec", "serviceAccountName")
    return str(account) if account else None


def suspended(p: Pair) -> bool:
    """suspend: the operator creates no workers and no PodGroup while suspended (nor lists the workers in
    discover_hosts.sh); mpigen's StatefulSet is at 0 replicas, and it renders the PodGroup and the hosts."""
    if not get(p.spec, "runPolicy", "suspend"):
        return False
    worker = get(p.spec, "mpiReplicaSpecs", "Worker", "replicas") or 0
    assert not p.of_kind(p.theirs, "Pod")
    assert not p.of_kind(p.ours, "Pod")  # the StatefulSet at replicas 0 expands to none
    for obj in p.of_kind(p.ours, "PodGroup"):
        take(p.ours, "PodGroup", obj["metadata"]["name"])
    config = p.theirs[("ConfigMap", names.config_map(p.name))]
    assert config["data"]["discover_hosts.sh"] == "#!/bin/sh\n" or not worker
    config["data"]["discover_hosts.sh"] = p.ours[("ConfigMap", names.config_map(p.name))]["data"][
        "discover_hosts.sh"
    ]
    return True


def open_mpi_5_env(p: Pair) -> bool:
    """Open MPI: mpigen's launcher also sets PRRTE's names of the hostfile, slots and ssh arguments, and
    PRTE_MCA_prte_keep_fqdn_hostnames=false."""
    launcher = p.ours.get(("Job", names.launcher(p.name)))
    if launcher is None or p.spec.get("mpiImplementation", "OpenMPI") != "OpenMPI":
        return False
    [container] = [
        c
        for c in launcher["spec"]["template"]["spec"]["containers"]
        if any(e["name"] == "K_MPI_JOB_ROLE" for e in c.get("env", []))
    ]
    own = {  # the template's own PRTE_MCA_* entries: kept as written, which the operator does too
        e["name"]
        for c in get(p.spec, "mpiReplicaSpecs", "Launcher", "template", "spec", "containers") or []
        for e in c.get("env", [])
        if e["name"].startswith("PRTE_MCA_")
    }
    prte = [e for e in container["env"] if e["name"].startswith("PRTE_MCA_") and e["name"] not in own]
    assert [e["name"] for e in prte] == [
        name
        for name in (
            "PRTE_MCA_prte_default_hostfile",
            "PRTE_MCA_prte_set_default_slots",
            "PRTE_MCA_plm_ssh_args",
            "PRTE_MCA_prte_keep_fqdn_hostnames",
        )
        if name not in own
    ]
    container["env"] = [e for e in container["env"] if e not in prte]
    return True


def pod_replacement_policy(p: Pair) -> bool:
    """`podReplacementPolicy: Failed` on the launcher Job only for --kube-version 1.29 and newer."""
    if p.options.kube_version is None or tuple(map(int, p.options.kube_version.split("."))) >= (1, 29):
        return False
    launcher = p.theirs[("Job", names.launcher(p.name))]
    assert launcher["spec"].pop("podReplacementPolicy") == "Failed"
    return True


def network_policy(p: Pair) -> bool:
    """--network-policy same-job: mpigen's NetworkPolicy `<job>`."""
    if p.options.network_policy is None:
        return False
    take(p.ours, "NetworkPolicy", p.name)
    return True


def cluster_domain(p: Pair) -> bool:
    """--cluster-domain: the operator's worker DNS search entry stays `<job>.<ns>.svc.cluster.local`
    (hard-coded) while its hostfile uses the domain; mpigen's entry uses the domain too."""
    domain = p.options.cluster_domain
    if not domain or domain == "cluster.local":
        return False
    fired = False
    for obj in p.of_kind(p.theirs, "Pod"):
        searches = obj["spec"]["dnsConfig"]["searches"]
        ours = p.ours[("Pod", obj["metadata"]["name"])]["spec"]["dnsConfig"]["searches"]
        assert [s.removesuffix(".cluster.local") for s in searches] == [
            s.removesuffix(f".{domain}") for s in ours
        ]
        obj["spec"]["dnsConfig"]["searches"] = ours
        fired = True
    return fired


def discover_hosts_order(p: Pair) -> bool:
    """discover_hosts.sh: the operator sorts the running pods' names as strings (`-10` before `-2`);
    mpigen lists the hosts in index order."""
    theirs = p.theirs.get(("ConfigMap", names.config_map(p.name)))
    ours = p.ours.get(("ConfigMap", names.config_map(p.name)))
    if theirs is None or ours is None:
        return False
    their_lines, our_lines = (c["data"]["discover_hosts.sh"].splitlines() for c in (theirs, ours))
    if their_lines == our_lines:
        return False
    assert sorted(their_lines) == sorted(our_lines)
    theirs["data"]["discover_hosts.sh"] = ours["data"]["discover_hosts.sh"]
    return True


def zero_min_resources(p: Pair) -> bool:
    """A gang PodGroup's `minResources`: the operator writes `0` for a resource only replicas outside
    the gang (cut by minAvailable) ask for; mpigen leaves such entries out."""
    fired = False
    for obj in p.of_kind(p.theirs, "PodGroup"):
        resources = obj["spec"].get("minResources", {})
        ours = p.ours[("PodGroup", obj["metadata"]["name"])]["spec"].get("minResources", {})
        for name in [n for n, v in resources.items() if v == "0" and n not in ours]:
            del resources[name]
            fired = True
    return fired


def service_account_alias(p: Pair) -> bool:
    """A template's deprecated `serviceAccount`: the operator copies it onto its pods as written (the
    API server then fills an empty `serviceAccountName` from it, or overwrites it with that name); mpigen
    writes the `serviceAccountName` the API server stores, and no alias."""
    fired = False
    for k, obj in p.theirs.items():
        for spec in pod_specs(obj):
            if "serviceAccount" in spec:
                alias = spec.pop("serviceAccount")
                spec.setdefault("serviceAccountName", alias)
                ours = p.ours.get(k)
                assert ours is not None and all("serviceAccount" not in s for s in pod_specs(ours))
                fired = True
    return fired


def topology(p: Pair) -> bool:
    """--topology required: / preferred: on the operator target: each launcher and worker pod gets a pod
    affinity term, on the topology key, to the job's pods (`training.kubeflow.org/job-name`,
    `operator-name`); the operator has no such option."""
    chosen = placement.placement(p.options.topology)
    if chosen is None:
        return False
    selector = {
        "matchLabels": {
            "training.kubeflow.org/job-name": p.name,
            "training.kubeflow.org/operator-name": "mpi-operator",
        }
    }
    term = {"labelSelector": selector, "topologyKey": chosen.key}
    if chosen.mode == "required":
        field_, added = "requiredDuringSchedulingIgnoredDuringExecution", term
    else:
        assert chosen.mode == "preferred"
        field_, added = (
            "preferredDuringSchedulingIgnoredDuringExecution",
            {"podAffinityTerm": term, "weight": 100},
        )
    fired = False
    for k, obj in p.ours.items():
        if k[0] not in ("Pod", "Job") or k[1] == f"{p.name}{names.SSH_KEYGEN_SUFFIX}":
            continue
        for spec in pod_specs(obj):
            terms = get(spec, "affinity", "podAffinity", field_)
            if terms is None or added not in terms:
                continue
            terms.remove(added)
            if not terms:
                pop(spec, "affinity", "podAffinity", field_)
            fired = True
    assert fired
    return True


def native_gang(p: Pair) -> bool:
    """--gang-scheduler kubernetes: mpigen's Workload and PodGroup `<job>` (scheduling.k8s.io/v1beta1,
    Kubernetes 1.37) and each launcher and worker pod's `spec.schedulingGroup` naming the PodGroup; the
    operator has no such gang (v0.8.2's are Volcano's and scheduler-plugins'), and its pinned k8s.io/api
    (v0.35) no such types, so they are compared here, not by the oracle."""
    if p.options.gang_scheduler != "kubernetes":
        assert not p.unstored and not p.scheduling_groups
        return False
    assert sorted(p.unstored) == [("PodGroup", p.name), ("Workload", p.name)]
    group = p.unstored.pop(("PodGroup", p.name))
    workload = p.unstored.pop(("Workload", p.name))
    [template] = workload["spec"]["podGroupTemplates"]
    assert group["spec"]["workloadRef"] == {"templateName": template["name"], "workloadName": p.name}
    workers = get(p.spec, "mpiReplicaSpecs", "Worker", "replicas") or 0
    gang = get(p.spec, "runPolicy", "schedulingPolicy", "minAvailable") or workers + 1  # the launcher too
    assert group["spec"]["schedulingPolicy"] == template["schedulingPolicy"] == {"gang": {"minCount": gang}}
    chosen = placement.placement(p.options.topology)
    required = [{"key": chosen.key}] if chosen and chosen.mode == "required" else None
    assert get(group, "spec", "schedulingConstraints", "topology") == required
    assert sorted(p.scheduling_groups) == [
        ("Job", names.launcher(p.name)),
        ("StatefulSet", names.worker_set(p.name)),
    ]
    assert all(v == {"podGroupName": p.name} for v in p.scheduling_groups.values())
    p.scheduling_groups.clear()
    assert not any(k[1] == p.name and k[0] in ("PodGroup", "Workload") for k in p.theirs)
    return True


# Row number -> the departure that takes it out. The order is the order they run in.
DEPARTURES: dict[int, Departure] = {
    19: managed_by_multikueue,
    1: owner_references,
    2: namespace,
    9: ssh_keys,
    4: worker_pods,
    30: service_account_alias,
    3: standard_labels,
    27: scheduler_name,
    5: worker_restart_policy,
    6: replica_index,
    7: no_token,
    8: cleanup,
    13: wait_for_workers,
    14: suspended,
    10: cluster_domain,
    11: discover_hosts_order,
    12: open_mpi_5_env,
    15: pod_replacement_policy,
    16: zero_min_resources,
    17: pdb,
    18: network_policy,
    28: topology,
    29: native_gang,
    31: free_disruptions,
}

# Golden error cases the operator runs: the row that says why mpigen refuses them.
REFUSED: dict[str, int] = {
    "error-v2beta1-run-policy-checks": 20,
    "error-v2beta1-scheduling-min-available-negative": 20,
    "error-v2beta1-scheduling-policy-fields": 21,
    "error-v2beta1-reserved-names": 22,
    "error-container-without-image": 24,
    **{
        case: 24
        for case in (
            "error-pod-affinity-selector-without-values",
            "error-pod-block-device-of-emptydir",
            "error-pod-container-name-with-underscore",
            "error-pod-deletion-cost-not-an-integer",
            "error-pod-dns-policy-unsupported",
            "error-pod-duplicate-container-names",
            "error-pod-ephemeral-claim-without-storage",
            "error-pod-gpu-request-not-limit",
            "error-pod-host-port-taken-twice",
            "error-pod-image-pull-policy-unsupported",
            "error-pod-mount-of-missing-volume",
            "error-pod-negative-cpu-request",
            "error-pod-net-sysctl-with-host-network",
            "error-pod-port-out-of-range",
            "error-pod-projected-token-too-short",
            "error-pod-resource-claim-not-declared",
            "error-pod-seccomp-annotation-disagrees-with-field",
            "error-pod-selinux-change-policy-unsupported",
            "error-pod-sleep-longer-than-grace-period",
            "error-pod-toleration-operator-unsupported",
            "error-pod-tolerations-annotation-not-a-list",
            "error-pod-windows-host-process-without-host-network",
        )
    },
    "error-unknown-fields-named-like-types": 25,
    "error-v2beta1-fields-of-other-versions": 25,
    "error-v2beta1-unknown-replica-type": 25,
    "error-v2beta1-option-values": 26,
    "error-gang-kubernetes-kube-version": 26,
    "error-topology-annotation-bad-label-key": 26,
    "error-topology-slice-on-operator-target": 26,
    "error-pod-template-typo": 25,
    "error-pod-template-field-too-new-for-kube-version": 25,
}


# --- the cases: the golden corpus, then jobs beyond it (oracle_suite.Suite runs both) ----------------


# Jobs beyond the golden corpus, for rows it does not show.


def job(name: str, workers: int = 2, annotations: dict[str, str] | None = None, **spec: Any) -> Obj:
    """A small v2beta1 job: a launcher and `workers` workers, spec fields and annotations added."""
    metadata: Obj = {"name": name, "namespace": "team-a"}
    if annotations:
        metadata["annotations"] = annotations
    container = {
        "image": "registry.example/mpi:5",
        "resources": {"limits": {"cpu": "2", "nvidia.com/gpu": "1"}},
    }
    return {
        "apiVersion": API,
        "kind": "MPIJob",
        "metadata": metadata,
        "spec": {
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "launcher",
                                    "image": "registry.example/mpi:5",
                                    "command": ["mpirun", "app"],
                                    "resources": {"requests": {"cpu": "1"}},
                                }
                            ]
                        }
                    },
                },
                "Worker": {
                    "replicas": workers,
                    "template": {"spec": {"containers": [{"name": "worker", **container}]}},
                },
            },
            **spec,
        },
    }


GENERATED: dict[str, Obj] = {
    "cluster-domain": job("dom", annotations={"mpigen.dev/cluster-domain": "example.org"}),
    "twelve-workers": job("many", workers=12),
    "gang-cut-by-min-available": job(
        "cut",
        annotations={"mpigen.dev/gang-scheduler": "volcano"},
        runPolicy={"schedulingPolicy": {"minAvailable": 1}},
    ),
    "gang-scheduler-plugins-cut": job(
        "cut-sp",
        annotations={"mpigen.dev/gang-scheduler": "scheduler-plugins"},
        runPolicy={"schedulingPolicy": {"minAvailable": 1}},
    ),
    "intel-wait-for-workers": job(
        "intel", mpiImplementation="Intel", launcherCreationPolicy="WaitForWorkersReady"
    ),
    "volcano-own-scheduler-name": job(
        "own",
        annotations={"mpigen.dev/gang-scheduler": "volcano", "mpigen.dev/scheduler-name": "team-volcano"},
    ),
    "suspended-gang": job(
        "held", annotations={"mpigen.dev/gang-scheduler": "volcano"}, runPolicy={"suspend": True}
    ),
}


def worker_deadline_job() -> Obj:
    worker = job("deadline")
    worker["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["activeDeadlineSeconds"] = 600
    return worker


# Generated jobs mpigen refuses and the operator runs: the row that says why.
GENERATED_REFUSED: dict[str, tuple[Obj, int]] = {"worker-active-deadline": (worker_deadline_job(), 23)}


SUITE = Suite(API, SECTION, DEPARTURES, REFUSED, GENERATED, GENERATED_REFUSED)


@pytest.mark.parametrize("case", SUITE.success)
def test_golden_job_matches_the_operator(case: str) -> None:
    SUITE.golden_rows(case)


@pytest.mark.parametrize("case", SUITE.errors)
def test_golden_refusal_is_the_operators_or_a_row(case: str) -> None:
    SUITE.assert_refused(case)


def test_every_row_is_seen() -> None:
    """The rows the corpus shows are exactly the numbered rows of the v2beta1 section."""
    SUITE.assert_every_row_seen()


def test_refused_cases_are_still_error_cases() -> None:
    SUITE.assert_refused_cases_are_error_cases()


@pytest.mark.parametrize("name", sorted(GENERATED_REFUSED))
def test_generated_refusal_is_a_row(name: str) -> None:
    SUITE.assert_generated_refused(name)


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_job_matches_the_operator(name: str) -> None:
    compare(DEPARTURES, GENERATED[name])
