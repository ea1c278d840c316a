"""The Trainer oracle (tests/oracles/trainer) says what Trainer's controller creates, so a broken oracle fails here.

It runs on the `deepspeed-distributed` ClusterTrainingRuntime Trainer v2.3.0 ships (read from the pinned
module in the Go module cache) with small TrainJobs. The expected values are Trainer's behaviour as its
code at the pinned version reads (pkg/runtime/core, plugins/mpi, plugins/jobset, pkg/constants), not the
oracle's output copied back: the launcher's replicated job carries the `trainer` ancestor label, so the
TrainJob's image, command and args land on the launcher's `node` container; with runLauncherAsNode the
`node` job runs numNodes - 1 pods, its `node` container gets the TrainJob's env and resourcesPerNode too
(merged into the runtime's resources), and the launcher, second in the runtime, is the hostfile's last
line; the SSH volume carries file modes; the runtime read is stored in `<job>-runtime-snapshot`.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import trainer_oracle

pytestmark = pytest.mark.slow

Obj = dict[str, Any]


def train_job(name: str = "pi", **trainer: Any) -> Obj:
    spec: Obj = {"runtimeRef": {"name": "deepspeed-distributed"}}
    if trainer:
        spec["trainer"] = trainer
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name, "namespace": "team"},
        "spec": spec,
    }


@pytest.fixture(scope="module")
def mpi_runtime() -> Obj:
    (runtime,) = trainer_oracle.shipped("manifests/base/runtimes/deepspeed_distributed.yaml")
    assert (
        runtime["kind"] == "ClusterTrainingRuntime" and runtime["metadata"]["name"] == "deepspeed-distributed"
    )
    return runtime


def by_kind(objects: list[Obj]) -> dict[str, Obj]:
    """The objects by kind; the ConfigMaps by name."""
    found = {obj["kind"]: obj for obj in objects if obj["kind"] != "ConfigMap"}
    found |= {obj["metadata"]["name"]: obj for obj in objects if obj["kind"] == "ConfigMap"}
    assert len(found) == len(objects), [obj["kind"] for obj in objects]
    return found


def replicated_jobs(jobset: Obj) -> dict[str, Obj]:
    return {job["name"]: job for job in jobset["spec"]["replicatedJobs"]}


def pod_spec(job: Obj) -> Obj:
    spec: Obj = job["template"]["spec"]["template"]["spec"]
    return spec


def container(job: Obj) -> Obj:
    only: Obj
    (only,) = pod_spec(job)["containers"]
    assert only["name"] == "node"
    return only


def env(c: Obj) -> dict[str, str]:
    return {var["name"]: var.get("value", "") for var in c.get("env", [])}


def test_mpi_runtime_with_a_trainjob(mpi_runtime: Obj) -> None:
    job = train_job(
        numNodes=3,
        numProcPerNode=2,
        image="registry.example/pi:1",
        command=["mpirun"],
        args=["/home/mpiuser/pi"],
        env=[{"name": "FOO", "value": "bar"}],
        resourcesPerNode={"requests": {"cpu": "1"}},
    )
    objects = trainer_oracle.run([mpi_runtime, job])
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [
        ("ConfigMap", "pi-mpi-hostfile"),
        ("ConfigMap", "pi-runtime-snapshot"),
        ("JobSet", "pi"),
        ("Secret", "pi-mpi-ssh-auth"),
    ]
    owner = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "name": "pi",
        "uid": "",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    found = by_kind(objects)
    for obj in objects:
        assert obj["metadata"]["namespace"] == "team"
        if obj is not found["pi-runtime-snapshot"]:
            assert obj["metadata"]["ownerReferences"] == [owner]
    assert "name: deepspeed-distributed" in found["pi-runtime-snapshot"]["data"]["runtime"]

    assert found["pi-mpi-hostfile"]["data"] == {
        "hostfile": "pi-node-0-0.pi slots=2\npi-node-0-1.pi slots=2\npi-launcher-0-0.pi slots=2\n"
    }
    secret = found["Secret"]
    assert secret["type"] == "kubernetes.io/ssh-auth" and secret["immutable"] is True
    assert sorted(secret["data"]) == ["ssh-privatekey", "ssh-publickey"]
    assert "P-521" in secret["data"]["ssh-privatekey"]

    jobset = found["JobSet"]
    assert jobset["apiVersion"] == "jobset.x-k8s.io/v1alpha2"
    assert jobset["spec"]["suspend"] is False  # the TrainJob CRD's default, passed on
    assert jobset["spec"]["successPolicy"] == {"operator": "All", "targetReplicatedJobs": ["launcher"]}
    assert jobset["spec"]["network"] == {"publishNotReadyAddresses": True}
    jobs = replicated_jobs(jobset)
    assert list(jobs) == ["node", "launcher"]
    assert jobs["launcher"]["dependsOn"] == [{"name": "node", "status": "Ready"}]
    assert [
        (j["replicas"], j["template"]["spec"]["parallelism"], j["template"]["spec"]["completions"])
        for j in jobs.values()
    ] == [(1, 2, 2), (1, 1, 1)]

    launcher, node = container(jobs["launcher"]), container(jobs["node"])
    assert launcher["image"] == "registry.example/pi:1"
    assert (launcher["command"], launcher["args"]) == (["mpirun"], ["/home/mpiuser/pi"])
    assert launcher["resources"] == {"requests": {"cpu": "1"}}
    assert env(launcher) == {
        "OMPI_MCA_orte_default_hostfile": "/etc/mpi/hostfile",
        "OMPI_MCA_orte_keep_fqdn_hostnames": "true",
        "OMPI_MCA_orte_set_default_slots": "2",
        "OMPI_MCA_plm_rsh_args": "-o ConnectionAttempts=10",
        "FOO": "bar",
    }
    assert launcher["volumeMounts"] == [
        {"name": "mpi-ssh-auth", "mountPath": "/home/mpiuser/.ssh"},
        {"name": "mpi-hostfile", "mountPath": "/etc/mpi"},
    ]
    # The launcher runs as a node: the node job's `node` container gets the env and the resources too,
    # not the image, command or args.
    assert node["image"] == "ghcr.io/kubeflow/trainer/deepspeed-runtime"
    assert node["command"] == ["/usr/sbin/sshd"] and node["resources"] == {"requests": {"cpu": "1"}}
    assert env(node) == {"FOO": "bar"}
    assert node["volumeMounts"] == [{"name": "mpi-ssh-auth", "mountPath": "/home/mpiuser/.ssh"}]

    ssh_volume = {
        "name": "mpi-ssh-auth",
        "secret": {
            "secretName": "pi-mpi-ssh-auth",
            "defaultMode": 0o400,
            "items": [
                {"key": "ssh-privatekey", "path": "id_rsa", "mode": 0o640},
                {"key": "ssh-publickey", "path": "id_rsa.pub", "mode": 0o644},
                {"key": "ssh-publickey", "path": "authorized_keys", "mode": 0o644},
            ],
        },
    }
    hostfile_volume = {
        "name": "mpi-hostfile",
        "configMap": {
            "name": "pi-mpi-hostfile",
            "items": [
                {"key": "hostfile", "path": "hostfile", "mode": 0o444},
            ],
        },
    }
    assert pod_spec(jobs["launcher"])["volumes"] == [ssh_volume, hostfile_volume]
    assert pod_spec(jobs["node"])["volumes"] == [ssh_volume]


def test_slots_from_the_gpu_count(mpi_runtime: Obj) -> None:
    """numProcPerNode unset and the runtime's 1: the MPI plugin takes resourcesPerNode's GPU count."""
    found = by_kind(
        trainer_oracle.run(
            [mpi_runtime, train_job("gpu", numNodes=2, resourcesPerNode={"limits": {"nvidia.com/gpu": "4"}})]
        )
    )
    assert (
        found["gpu-mpi-hostfile"]["data"]["hostfile"]
        == "gpu-node-0-0.gpu slots=4\ngpu-launcher-0-0.gpu slots=4\n"
    )


def test_runtime_defaults_without_trainer_fields(mpi_runtime: Obj) -> None:
    """No numNodes: the node job keeps its template's parallelism (none: 1), so two hosts, one slot each."""
    found = by_kind(trainer_oracle.run([mpi_runtime, train_job("bare")]))
    assert (
        found["bare-mpi-hostfile"]["data"]["hostfile"]
        == "bare-node-0-0.bare slots=1\nbare-launcher-0-0.bare slots=1\n"
    )
    launcher = container(replicated_jobs(found["JobSet"])["launcher"])
    assert launcher["image"] == "ghcr.io/kubeflow/trainer/deepspeed-runtime"
    assert env(launcher)["OMPI_MCA_orte_set_default_slots"] == "1"


def test_output_is_stable(mpi_runtime: Obj) -> None:
    job = train_job(numNodes=2)
    assert trainer_oracle.run([mpi_runtime, job]) == trainer_oracle.run([job, mpi_runtime])


@pytest.mark.parametrize(
    ("job", "message"),
    [
        (train_job(numProcPerNode="auto"), "numProcPerNode"),
        (
            train_job(env=[{"name": "OMPI_MCA_plm_rsh_args", "value": "x"}]),
            r"must not have reserved envs, invalid envs configured: \[OMPI_MCA_plm_rsh_args\]",
        ),
        (
            {
                **train_job(),
                "spec": {
                    "runtimeRef": {"name": "deepspeed-distributed"},
                    "runtimePatches": [{"manager": "x"}],
                },
            },
            "must be a domain-prefixed path",
        ),
        (train_job("Pi"), "metadata.name: Invalid value"),
        ({**train_job(), "spec": {"runtimeRef": {"name": "missing"}}}, "missing"),
    ],
)
def test_refusals(mpi_runtime: Obj, job: Obj, message: str) -> None:
    with pytest.raises(trainer_oracle.OracleRefused, match=message):
        trainer_oracle.run([mpi_runtime, job])


def test_a_patch_naming_an_unknown_job_passes_trainers_webhook(mpi_runtime: Obj) -> None:
    """Trainer v2.3.0 validates runtime patches against the runtime info built after merging them
    (`ValidateObjects` calls `newRuntimeInfo` first), so its "must not have replicated job that doesn't
    exist" never fires: the patch adds a job with no pod template, first (an unknown name sorts as index 0),
    which the JobSet's API server validation refuses later. mpigen refuses the patch (departure 15)."""
    job = {
        **train_job("unknown"),
        "spec": {
            "runtimeRef": {"name": "deepspeed-distributed"},
            "runtimePatches": [
                {
                    "manager": "example.com/x",
                    "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [{"name": "worker"}]}}},
                }
            ],
        },
    }
    jobs = replicated_jobs(by_kind(trainer_oracle.run([mpi_runtime, job]))["JobSet"])
    assert list(jobs) == ["worker", "node", "launcher"]
    assert "containers" not in (jobs["worker"]["template"]["spec"]["template"].get("spec") or {})


def test_trainer_adds_no_failure_policy_and_passes_a_runtimes_own_through(mpi_runtime: Obj) -> None:
    """Trainer v2.3.0 sets no failure policy of its own (the JobSet plugin builds the JobSet from the
    runtime's template as written): the shipped runtime gives a JobSet with none, its pods' restartPolicy
    left to the JobSet webhook (OnFailure), so every disruption counts; a runtime's own `failurePolicy`
    and `podFailurePolicy` reach the JobSet unchanged. mpigen's free disruptions are departure 16."""
    jobset = by_kind(trainer_oracle.run([mpi_runtime, train_job("plain", numNodes=2)]))["JobSet"]
    assert "failurePolicy" not in jobset["spec"]
    for job in replicated_jobs(jobset).values():
        assert "podFailurePolicy" not in job["template"]["spec"]
        assert "restartPolicy" not in pod_spec(job)
    runtime = copy.deepcopy(mpi_runtime)
    spec = runtime["spec"]["template"]["spec"]
    failure = {
        "maxRestarts": 2,
        "rules": [{"name": "x", "action": "FailJobSet", "onJobFailureReasons": ["A"]}],
    }
    spec["failurePolicy"] = failure
    node = spec["replicatedJobs"][0]["template"]["spec"]
    own = {
        "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]
    }
    node["podFailurePolicy"] = own
    node["template"]["spec"]["restartPolicy"] = "Never"
    jobset = by_kind(trainer_oracle.run([runtime, train_job("own", numNodes=2)]))["JobSet"]
    assert {k: v for k, v in jobset["spec"]["failurePolicy"].items() if k != "restartStrategy"} == failure
    jobs = replicated_jobs(jobset)
    assert jobs["node"]["template"]["spec"]["podFailurePolicy"] == own
    assert "podFailurePolicy" not in jobs["launcher"]["template"]["spec"]
