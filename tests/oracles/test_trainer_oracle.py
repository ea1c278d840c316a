"""The Trainer oracle (tests/oracles/trainer) says what Trainer's controller creates, so a broken oracle fails here.

It runs on the `mpi-distributed` ClusterTrainingRuntime Trainer ships (read from the pinned module in
the Go module cache) with small TrainJobs. The expected values are Trainer's behaviour as its code at the
pinned version reads (pkg/runtime/core, plugins/mpi, plugins/jobset, pkg/constants), not the oracle's
output copied back: the launcher's replicated job carries the `trainer` ancestor label, so the TrainJob's
image, command, env and resourcesPerNode land on the launcher's `node` container; with runLauncherAsNode
the `node` job runs numNodes - 1 pods and the launcher is the first line of the hostfile.
"""

from __future__ import annotations

from typing import Any

import pytest
import trainer_oracle

pytestmark = pytest.mark.slow

Obj = dict[str, Any]


def train_job(name: str = "pi", **trainer: Any) -> Obj:
    spec: Obj = {"runtimeRef": {"name": "mpi-distributed"}}
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
    (runtime,) = trainer_oracle.shipped("manifests/base/runtimes/mpi_distributed.yaml")
    assert runtime["kind"] == "ClusterTrainingRuntime" and runtime["metadata"]["name"] == "mpi-distributed"
    return runtime


def by_kind(objects: list[Obj]) -> dict[str, Obj]:
    found = {obj["kind"]: obj for obj in objects}
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
        env=[{"name": "FOO", "value": "bar"}],
        resourcesPerNode={"requests": {"cpu": "1"}},
    )
    objects = trainer_oracle.run([mpi_runtime, job])
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [
        ("ConfigMap", "pi-mpi-hostfile"),
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
    for obj in objects:
        assert obj["metadata"]["namespace"] == "team"
        assert obj["metadata"]["ownerReferences"] == [owner]
    found = by_kind(objects)

    assert found["ConfigMap"]["data"] == {
        "hostfile": "pi-launcher-0-0.pi slots=2\npi-node-0-0.pi slots=2\npi-node-0-1.pi slots=2\n"
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
    assert list(jobs) == ["launcher", "node"]
    assert [
        (j["replicas"], j["template"]["spec"]["parallelism"], j["template"]["spec"]["completions"])
        for j in jobs.values()
    ] == [(1, 1, 1), (1, 2, 2)]

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
    # The TrainJob's trainer fields reach only the launcher: the node job keeps the runtime's container.
    assert node["image"] == "mpioperator/mpi-pi:openmpi"
    # (Trainer converts the runtime's typed template to an apply configuration: `resources: {}` stays.)
    assert node["command"] == ["/usr/sbin/sshd"] and node["resources"] == {} and env(node) == {}
    assert node["volumeMounts"] == [{"name": "mpi-ssh-auth", "mountPath": "/home/mpiuser/.ssh"}]

    ssh_volume = {
        "name": "mpi-ssh-auth",
        "secret": {
            "secretName": "pi-mpi-ssh-auth",
            "items": [
                {"key": "ssh-privatekey", "path": "id_rsa"},
                {"key": "ssh-publickey", "path": "id_rsa.pub"},
                {"key": "ssh-publickey", "path": "authorized_keys"},
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


def test_runtime_defaults_without_trainer_fields(mpi_runtime: Obj) -> None:
    """No numNodes: the node job keeps its template's parallelism (none: 1), so two hosts, one slot each."""
    found = by_kind(trainer_oracle.run([mpi_runtime, train_job("bare")]))
    assert (
        found["ConfigMap"]["data"]["hostfile"]
        == "bare-launcher-0-0.bare slots=1\nbare-node-0-0.bare slots=1\n"
    )
    launcher = container(replicated_jobs(found["JobSet"])["launcher"])
    assert launcher["image"] == "mpioperator/mpi-pi:openmpi"
    assert env(launcher)["OMPI_MCA_orte_set_default_slots"] == "1"


def test_output_is_stable(mpi_runtime: Obj) -> None:
    job = train_job(numNodes=2)
    assert trainer_oracle.run([mpi_runtime, job]) == trainer_oracle.run([job, mpi_runtime])


@pytest.mark.parametrize(
    ("job", "message"),
    [
        (train_job(numProcPerNode="auto"), "spec.trainer.numProcPerNode: Invalid value"),
        (train_job("Pi"), "metadata.name: Invalid value"),
        ({**train_job(), "spec": {"runtimeRef": {"name": "missing"}}}, "missing"),
    ],
)
def test_refusals(mpi_runtime: Obj, job: Obj, message: str) -> None:
    with pytest.raises(trainer_oracle.OracleRefused, match=message):
        trainer_oracle.run([mpi_runtime, job])
