"""`mpigen render --target volcano` on the real Volcano v1.14.1 (vc-controller-manager, vc-scheduler, kwok
nodes; the `volcano_cluster` fixture), for each input version: what mpigen renders is applied with one
`kubectl apply -f -`, and Volcano runs it as one gang. A job too large for the cluster gets no pod; one
that fits runs every pod at once under mpigen's hostfile names; the launcher's success completes the Job,
which ends the workers, and the TTL then deletes it; a failing launcher is retried until `maxRetry`
(backoffLimit + 1 runs) is spent.

kwok plays the kubelet (pods run and never end by themselves); a test ends the launcher pod as its
container would have (controlplane.end_pod).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pythons
import volcano
import yaml
from controlplane import Cluster, end_pod

Obj = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
IMAGE = "example.com/mpi:1.0"
VERSIONS = ("v1alpha1", "v1alpha2", "v1", "v2beta1")
# Versions whose run policy has ttlSecondsAfterFinished (v0.2.0's have none).
WITH_TTL = ("v1", "v2beta1")


def mpijob(
    version: str, name: str, workers: int, *, cpu: str = "100m", backoff: int = 0, ttl: int = 3
) -> Obj:
    """A small MPIJob of `version`: a launcher that restarts Never, `workers` workers asking for `cpu`."""

    def container(role: str, command: list[str] | None = None) -> Obj:
        found: Obj = {
            "name": role,
            "image": IMAGE,
            "resources": {"requests": {"cpu": cpu}, "limits": {"cpu": cpu}},
        }
        if command:
            found["command"] = command
        return found

    if version == "v1alpha1":
        spec: Obj = {
            "replicas": workers,
            "processingResourceType": "cpu",
            "backoffLimit": backoff,
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [container("train", ["mpirun", "hostname"])]}
            },
        }
    else:
        launcher = {
            "replicas": 1,
            "restartPolicy": "Never",
            "template": {"spec": {"containers": [container("launcher", ["mpirun", "hostname"])]}},
        }
        worker = {"replicas": workers, "template": {"spec": {"containers": [container("worker")]}}}
        spec = {"mpiReplicaSpecs": {"Launcher": launcher, "Worker": worker}}
        if version == "v1alpha2":
            spec["backoffLimit"] = backoff
        else:
            spec["runPolicy"] = {
                "backoffLimit": backoff,
                "ttlSecondsAfterFinished": ttl,
                "schedulingPolicy": {"queue": "test"},
            }
    return {
        "apiVersion": f"kubeflow.org/{version}",
        "kind": "MPIJob",
        "metadata": {"name": name},
        "spec": spec,
    }


def render(job: Obj, namespace: str) -> str:
    done = subprocess.run(
        [*pythons.mpigen_argv(), "render", "--target", "volcano", "-n", namespace, "-"],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def namespace(volcano_cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[str]:
    name = volcano_cluster.create_namespace(
        "vt-" + request.node.name.lower().replace("_", "-")[-40:].strip("-[]")
    )
    volcano_cluster.wait_for(
        f"serviceaccount default in {name}",
        lambda: volcano_cluster.kubectl(
            "get", "serviceaccount", "default", "-n", name, "--ignore-not-found", "-o", "name"
        ).stdout.strip(),
    )
    failed_before = request.session.testsfailed
    yield name
    volcano_cluster.kubectl("delete", "vcjob", "--all", "-n", name, "--wait=false", check=False)
    if request.session.testsfailed > failed_before:
        print(volcano.diagnostics(volcano_cluster))


def apply(cluster: Cluster, namespace: str, job: Obj) -> list[Obj]:
    """Render `job` for the volcano target and apply all of it in one `kubectl apply -f -`."""
    rendered = render(job, namespace)
    cluster.kubectl("apply", "-f", "-", input=rendered)
    return [doc for doc in yaml.safe_load_all(rendered) if doc]


def phase(cluster: Cluster, namespace: str, job: str) -> str | None:
    done = cluster.find("vcjob", job, "-n", namespace)
    if done is None:
        return None
    found: str = done.get("status", {}).get("state", {}).get("phase", "")
    return found


def live_pods(cluster: Cluster, namespace: str, job: str) -> list[Obj]:
    items: list[Obj] = cluster.get("pods", "-n", namespace, "-l", f"volcano.sh/job-name={job}")["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def running(cluster: Cluster, namespace: str, job: str, count: int) -> dict[str, Obj]:
    def all_running() -> dict[str, Obj] | None:
        found = {
            p["metadata"]["name"]: p
            for p in live_pods(cluster, namespace, job)
            if p.get("status", {}).get("phase") == "Running"
        }
        return found if len(found) == count else None

    found: dict[str, Obj] = cluster.wait_for(f"{count} running pods of vcjob/{job}", all_running, timeout=90)
    return found


def hostfile_hosts(objects: list[Obj], job: str) -> list[str]:
    (config,) = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == f"{job}-config"]
    return [line.split()[0].split(":")[0] for line in config["data"]["hostfile"].splitlines()]


@pytest.mark.parametrize("version", VERSIONS)
def test_gang_runs_completes_and_expires(volcano_cluster: Cluster, namespace: str, version: str) -> None:
    cluster, job, workers = volcano_cluster, "pi", 2
    objects = apply(cluster, namespace, mpijob(version, job, workers, ttl=3))
    started = running(cluster, namespace, job, 1 + workers)

    # Volcano's pod names are the ones mpigen's hostfile, Role and kubexec.sh name; each pod's DNS name
    # (hostname, subdomain: the svc plugin's Service) is the hostfile's.
    assert set(started) == {f"{job}-launcher-0", *(f"{job}-worker-{i}" for i in range(workers))}
    hosts = hostfile_hosts(objects, job)
    expected = [f"{job}-worker-{i}" for i in range(workers)]
    if version == "v2beta1":
        expected = [f"{pod}.{job}.{namespace}.svc" for pod in expected]
    assert hosts == expected
    for name, pod in started.items():
        assert pod["spec"]["nodeName"].startswith("fake-"), "bound by Volcano (no other scheduler runs)"
        assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == (name, job)
    for role in (o for o in objects if o["kind"] == "Role"):
        assert role["rules"][0]["resourceNames"] == sorted(n for n in started if "-worker-" in n)

    # One gang: Volcano's PodGroup counts every pod, in the job's queue.
    uid = cluster.get("vcjob", job, "-n", namespace)["metadata"]["uid"]
    group = cluster.get("podgroup", f"{job}-{uid}", "-n", namespace)["spec"]
    assert group["minMember"] == 1 + workers
    assert group["minTaskMember"] == {"launcher": 1, "worker": workers}
    assert group["queue"] == ("test" if version in WITH_TTL else "default")
    service = cluster.get("service", job, "-n", namespace)["spec"]
    assert service["clusterIP"] == "None"
    if version == "v2beta1":
        keys = cluster.get("secret", f"{job}-ssh", "-n", namespace)["data"]
        assert set(keys) == {"id_rsa", "id_rsa.pub", "authorized_keys", "config"}, "keys made in the cluster"
        launcher = started[f"{job}-launcher-0"]["spec"]["containers"][0]
        assert {m["mountPath"] for m in launcher["volumeMounts"]} >= {"/root/.ssh", "/etc/mpi"}
    # Volcano's svc plugin keeps its own per-job NetworkPolicy (ingress from the job's pods only).
    policies = cluster.kubectl("get", "networkpolicy", "-n", namespace, "-o", "name").stdout.split()
    assert policies == [f"networkpolicy.networking.k8s.io/{job}"]

    # The launcher succeeds: TaskCompleted -> CompleteJob; Volcano deletes the running workers.
    cluster.wait_for("vcjob Running", lambda: phase(cluster, namespace, job) == "Running")
    end_pod(cluster, namespace, f"{job}-launcher-0", "Succeeded")
    cluster.wait_for("vcjob Completed", lambda: phase(cluster, namespace, job) == "Completed", timeout=60)
    cluster.wait_for(
        "workers gone",
        lambda: not any("-worker-" in p["metadata"]["name"] for p in live_pods(cluster, namespace, job)),
        timeout=60,
    )
    if version in WITH_TTL:
        cluster.wait_for(
            "vcjob deleted after its TTL", lambda: phase(cluster, namespace, job) is None, timeout=60
        )
        cluster.wait_for("pods collected", lambda: not live_pods(cluster, namespace, job), timeout=60)
    else:
        time.sleep(5)
        assert phase(cluster, namespace, job) == "Completed", "no TTL in the input: the Job stays"


@pytest.mark.parametrize("version", VERSIONS)
def test_too_large_for_the_cluster_starts_no_pod(
    volcano_cluster: Cluster, namespace: str, version: str
) -> None:
    """5 pods of 1000 CPUs (v1alpha1: the launcher asks for none) on 3 nodes of 1000: never enqueued, no pod."""
    cluster, job = volcano_cluster, "huge"
    apply(cluster, namespace, mpijob(version, job, 4, cpu="1000"))
    cluster.wait_for("podgroup", lambda: cluster.get("podgroups", "-n", namespace)["items"])
    time.sleep(5)
    uid = cluster.get("vcjob", job, "-n", namespace)["metadata"]["uid"]
    group = cluster.get("podgroup", f"{job}-{uid}", "-n", namespace)
    assert group["spec"]["minMember"] == 5
    assert group.get("status", {}).get("phase") == "Pending"
    assert live_pods(cluster, namespace, job) == []
    assert phase(cluster, namespace, job) == "Pending"


@pytest.mark.parametrize("version", VERSIONS)
def test_failing_launcher_is_retried_up_to_max_retry(
    volcano_cluster: Cluster, namespace: str, version: str
) -> None:
    """backoffLimit 1 renders maxRetry 2: the gang runs twice (the second run's pods annotated retry 1),
    then the Job fails."""
    cluster, job = volcano_cluster, "flaky"
    objects = apply(cluster, namespace, mpijob(version, job, 1, backoff=1, ttl=600))
    (vcjob,) = [o for o in objects if o["kind"] == "Job"]
    assert vcjob["spec"]["maxRetry"] == 2
    for attempt in range(2):
        started = running(cluster, namespace, job, 2)
        assert {p["metadata"]["annotations"]["volcano.sh/job-retry-count"] for p in started.values()} == {
            str(attempt)
        }
        cluster.wait_for("vcjob Running", lambda: phase(cluster, namespace, job) == "Running")
        end_pod(cluster, namespace, f"{job}-launcher-0", "Failed")
        if attempt == 0:
            cluster.wait_for(
                "the job restarted",
                lambda: cluster.get("vcjob", job, "-n", namespace).get("status", {}).get("retryCount") == 1,
                timeout=60,
            )
    cluster.wait_for("vcjob Failed", lambda: phase(cluster, namespace, job) == "Failed", timeout=60)
    assert cluster.get("vcjob", job, "-n", namespace)["status"]["retryCount"] == 2


@pytest.mark.parametrize("version", VERSIONS)
def test_a_restricted_job_runs_where_restricted_is_enforced(
    volcano_cluster: Cluster, namespace: str, version: str
) -> None:
    """In a namespace that enforces Pod Security restricted, the volcano golden whose templates meet it
    runs: Volcano creates the launcher and every worker pod, none refused (tests/cluster/test_admission.py
    does the same for the operator target)."""
    cluster, job = volcano_cluster, "pi"
    cluster.kubectl(
        "label",
        "namespace",
        namespace,
        "pod-security.kubernetes.io/enforce=restricted",
        "pod-security.kubernetes.io/enforce-version=latest",
    )
    source = ROOT / "golden" / f"volcano-{version}-restricted-templates" / "input.yaml"
    mpijob_ = yaml.safe_load(source.read_text())
    del mpijob_["metadata"]["namespace"]
    mpijob_["metadata"]["annotations"] = {"mpigen.dev/network-policy": "same-job"}
    apply(cluster, namespace, mpijob_)
    started = running(cluster, namespace, job, 3)
    assert set(started) == {f"{job}-launcher-0", f"{job}-worker-0", f"{job}-worker-1"}
    events = cluster.get("events", "-n", namespace)["items"]
    refused = [e["message"] for e in events if "PodSecurity" in e.get("message", "")]
    assert refused == []
    # mpigen's NetworkPolicy (the svc plugin's own is disabled) selects exactly the pods Volcano made.
    policies = cluster.get("networkpolicy", "-n", namespace)["items"]
    assert [p["metadata"]["name"] for p in policies] == [job]
    labels = policies[0]["spec"]["podSelector"]["matchLabels"]
    selector = ",".join(f"{key}={value}" for key, value in sorted(labels.items()))
    selected = {p["metadata"]["name"] for p in cluster.get("pods", "-n", namespace, "-l", selector)["items"]}
    assert selected == set(started)
