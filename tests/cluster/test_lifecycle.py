"""A job's whole life on the control plane with kube-controller-manager, kube-scheduler and kwok nodes:
apply -> (v2beta1: the key Job, with its own token, stores an SSH key pair into the job's Secret, and a
re-apply keeps it) -> workers scheduled and Ready -> the wait script, run with the launcher's token, returns -> the
launcher pod ends (Succeeded, or Failed with no retry left) -> the launcher Job finishes -> the clean-up
script, run with the clean-up's token, adopts its ServiceAccount and Role, scales the workers to 0 and deletes
its RoleBinding -> the clean-up Job's ttlSecondsAfterFinished removes it and the garbage collector removes the
RBAC it adopted.

kwok plays the kubelet: pods on its fake nodes become Running and Ready and never end by themselves; the
test ends each pod as its container would have, by a status update. What a pod's container would run (the
scripts) runs on the host with that pod's ServiceAccount token.
"""

from __future__ import annotations

import base64
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from controlplane import Cluster, end_pod
from mpijobs import compiled, find, job, manifest, run_script, script

CASES = [
    ("v1alpha1", None, "Succeeded"),
    ("v1alpha2", "Running", "Succeeded"),
    ("v1alpha2", "All", "Succeeded"),
    ("v1alpha2", "None", "Succeeded"),
    ("v1alpha2", "Running", "Failed"),
    ("v2beta1", "Running", "Succeeded"),
    ("v2beta1", "All", "Failed"),
    ("v2beta1", "None", "Succeeded"),
    ("v1", "Running", "Succeeded"),
    ("v1", "None", "Failed"),
]


def job_pod(cluster: Cluster, namespace: str, job_name: str) -> str:
    def running() -> str | None:
        pods = cluster.get("pods", "-n", namespace, "-l", f"job-name={job_name}")["items"]
        live = [p for p in pods if p.get("status", {}).get("phase") == "Running"]
        return live[0]["metadata"]["name"] if live else None

    found: str = cluster.wait_for(f"a running pod of job/{job_name}", running)
    return found


def conditions(cluster: Cluster, namespace: str, kind: str, name: str) -> set[str]:
    obj = cluster.get(kind, name, "-n", namespace)
    return {c["type"] for c in obj.get("status", {}).get("conditions", []) if c["status"] == "True"}


def exists(cluster: Cluster, namespace: str, kind: str, name: str) -> bool:
    return cluster.find(kind, name, "-n", namespace) is not None


def spec_of(version: str, policy: str | None, outcome: str) -> dict[str, Any]:
    """The MPIJob spec fields that ask for `policy` (None: the version's default) and, for a failing
    launcher, no retry. v2beta1 and v1 keep them in runPolicy; v2beta1 waits for the workers only when
    asked to."""
    run: dict[str, Any] = {} if policy is None else {"cleanPodPolicy": policy}
    if outcome == "Failed":
        run["backoffLimit"] = 0
    if version == "v2beta1":
        return {"launcherCreationPolicy": "WaitForWorkersReady", "runPolicy": run}
    if version == "v1":
        return {"runPolicy": run}
    return run


@pytest.fixture
def namespace(workloads: Cluster, request: pytest.FixtureRequest) -> str:
    """A fresh namespace of the workloads' control plane (thrown away whole after the tests)."""
    return workloads.create_namespace("t-" + request.node.name.lower().replace("_", "-")[:40].strip("-[]"))


@pytest.mark.parametrize(
    ("version", "policy", "outcome"), CASES, ids=[f"{v}-{p or 'default'}-{o.lower()}" for v, p, o in CASES]
)
def test_job_lifecycle(
    workloads: Cluster, namespace: str, tmp_path: Path, version: str, policy: str | None, outcome: str
) -> None:
    cluster = workloads
    name = "life"
    objects = compiled(job(version, name, workers=2, **spec_of(version, policy, outcome)), namespace)
    cleanup_job = [o for o in objects if o["kind"] == "Job" and o["metadata"]["name"] == f"{name}-cleanup"]
    assert bool(cleanup_job) == (policy not in ("None", None) or version == "v1alpha1"), (
        "a clean-up Job exactly when cleanPodPolicy is not None"
    )
    cluster.kubectl("apply", "-f", "-", input=manifest(objects))
    if version == "v2beta1":
        ssh_keys_are_made_once(cluster, namespace, tmp_path, objects, name)

    # Workers scheduled onto fake nodes and Ready.
    statefulset = f"{name}-worker"
    cluster.wait_for(
        "2 ready workers",
        lambda: (
            cluster.get("statefulset", statefulset, "-n", namespace).get("status", {}).get("readyReplicas")
            == 2
        ),
        timeout=90,
    )
    nodes = {cluster.get("pod", f"{statefulset}-{i}", "-n", namespace)["spec"]["nodeName"] for i in range(2)}
    assert all(node.startswith("fake-") for node in nodes)

    # The launcher's wait-for-workers init container, with the launcher's token, returns.
    launcher = cluster.token_kubeconfig(namespace, f"{name}-launcher", tmp_path)
    waited = run_script(script(objects, "wait-for-workers.sh", cluster.kubectl_path, interval=1), launcher)
    assert waited.returncode == 0, waited.stdout + waited.stderr
    assert "all 2 workers ready" in waited.stdout and waited.stderr == "", waited.stdout + waited.stderr

    # The launcher pod ends; the launcher Job finishes accordingly.
    launcher_pod = job_pod(cluster, namespace, f"{name}-launcher")
    end_pod(cluster, namespace, launcher_pod, outcome)
    final = "Complete" if outcome == "Succeeded" else "Failed"
    cluster.wait_for(
        f"job/{name}-launcher {final}",
        lambda: final in conditions(cluster, namespace, "job", f"{name}-launcher"),
        timeout=60,
    )

    if not cleanup_job:
        # Nothing scales the workers down: they stay, as with the operator's cleanPodPolicy None.
        time.sleep(2)
        assert cluster.get("statefulset", statefulset, "-n", namespace)["spec"]["replicas"] == 2
        return
    workers_are_cleaned_up(cluster, namespace, tmp_path, objects, name, final)


def ssh_keys_are_made_once(
    cluster: Cluster, namespace: str, tmp_path: Path, objects: list[dict[str, Any]], name: str
) -> None:
    """The key Job's pod stores the pair its init container made (here: ssh-keygen on the host) with the
    key Job's own token; the Secret then holds it, a second run and a re-apply keep it, and nothing of
    the key reaches the output."""
    keys = tmp_path / "keys"
    keys.mkdir()
    made = subprocess.run(
        ["ssh-keygen", "-q", "-t", "ecdsa", "-N", "", "-f", str(keys / "id")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    job_pod(cluster, namespace, f"{name}-ssh-keygen")  # kwok has started the key Job's pod
    keygen = cluster.token_kubeconfig(namespace, f"{name}-ssh-keygen", tmp_path)
    stored = run_script(
        script(objects, "ssh-keygen.sh", cluster.kubectl_path, interval=1, keys=str(keys)), keygen
    )
    assert stored.returncode == 0, stored.stdout + stored.stderr
    assert f"stored a new key pair in secret/{name}-ssh" in stored.stdout, stored.stdout
    assert "PRIVATE KEY" not in stored.stdout + stored.stderr
    secret = cluster.get("secret", f"{name}-ssh", "-n", namespace)
    private = base64.b64decode(secret["data"]["ssh-privatekey"])
    assert private == (keys / "id").read_bytes()
    # Its last request deleted its own RoleBinding (never patched): the key Job's token holds nothing now.
    assert f"deleted rolebinding/{name}-ssh-keygen" in stored.stdout, stored.stdout
    assert not exists(cluster, namespace, "rolebinding", f"{name}-ssh-keygen")
    assert (
        cluster.kubectl(
            "get", "secret", f"{name}-ssh", "-n", namespace, kubeconfig=keygen, check=False
        ).returncode
        != 0
    )

    # A re-apply binds it again; the key Job run once more keeps the keys.
    cluster.kubectl("apply", "-f", "-", input=manifest(objects))
    again = run_script(
        script(objects, "ssh-keygen.sh", cluster.kubectl_path, interval=1, keys=str(keys)), keygen
    )
    assert again.returncode == 0 and f"secret/{name}-ssh already holds a key pair: kept" in again.stdout, (
        again.stdout
    )
    cluster.kubectl("apply", "-f", "-", input=manifest(objects))
    cluster.kubectl("apply", "--server-side", "-f", "-", input=manifest(objects))
    kept = cluster.get("secret", f"{name}-ssh", "-n", namespace)
    assert kept["data"] == secret["data"], "re-applying the job must keep its keys"


def workers_are_cleaned_up(
    cluster: Cluster, namespace: str, tmp_path: Path, objects: list[dict[str, Any]], name: str, final: str
) -> None:
    """The clean-up Job's pod runs cleanup.sh with its own token: the workers go, then the Job expires
    and takes its RBAC with it; the launcher's side stays."""
    statefulset = f"{name}-worker"
    cleanup_pod = job_pod(cluster, namespace, f"{name}-cleanup")
    cleanup = cluster.token_kubeconfig(namespace, f"{name}-cleanup", tmp_path)
    ran = run_script(script(objects, "cleanup.sh", cluster.kubectl_path, interval=1, clock_step=1), cleanup)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stderr == "", ran.stderr
    assert f"job/{name}-launcher is {final}: scaling the workers down" in ran.stdout, ran.stdout
    for kind in ("serviceaccount", "role"):
        assert f"{kind}/{name}-cleanup is now owned by job/{name}-cleanup" in ran.stdout, ran.stdout
    # The binding that grants its rights it never patches: it deletes it, last.
    assert ran.stdout.endswith(f"deleted rolebinding/{name}-cleanup\n"), ran.stdout
    assert not exists(cluster, namespace, "rolebinding", f"{name}-cleanup")
    assert cluster.get("statefulset", statefulset, "-n", namespace)["spec"]["replicas"] == 0
    selector = find(objects, "StatefulSet")["spec"]["selector"]["matchLabels"]
    labels = ",".join(f"{key}={value}" for key, value in sorted(selector.items()))
    cluster.wait_for(
        "worker pods gone",
        lambda: not cluster.get("pods", "-n", namespace, "-l", labels)["items"],
        timeout=60,
    )

    # The clean-up container exits 0; its Job completes, and (ttlSecondsAfterFinished shortened on the
    # live object, a mutable field) the TTL controller deletes it and the garbage collector its RBAC.
    assert find(objects, "Job", "-cleanup")["spec"]["ttlSecondsAfterFinished"] > 0
    end_pod(cluster, namespace, cleanup_pod, "Succeeded")
    cluster.wait_for(
        f"job/{name}-cleanup Complete",
        lambda: "Complete" in conditions(cluster, namespace, "job", f"{name}-cleanup"),
        timeout=60,
    )
    cluster.kubectl(
        "patch",
        "job",
        f"{name}-cleanup",
        "-n",
        namespace,
        "--type=merge",
        "-p",
        '{"spec":{"ttlSecondsAfterFinished":1}}',
    )
    cluster.wait_for(
        f"job/{name}-cleanup deleted after its TTL",
        lambda: not exists(cluster, namespace, "job", f"{name}-cleanup"),
        timeout=60,
    )
    for kind in ("serviceaccount", "role", "rolebinding"):
        cluster.wait_for(
            f"{kind}/{name}-cleanup collected",
            lambda kind=kind: not exists(cluster, namespace, kind, f"{name}-cleanup"),
            timeout=60,
        )
    # The launcher's side is untouched: its Job (with its record of the run) and its RBAC stay.
    for kind, obj_name in (
        ("job", f"{name}-launcher"),
        ("serviceaccount", f"{name}-launcher"),
        ("statefulset", statefulset),
        ("configmap", f"{name}-config"),
    ):
        assert exists(cluster, namespace, kind, obj_name), f"{kind}/{obj_name}"
