"""Volcano v1.14 itself, with hand-written Volcano Jobs shaped as an MPI job: a `master` task (one pod) and a
`worker` task (N pods), `minAvailable` every pod, the `ssh`, `svc` and `env` plugins, the master's
`TaskCompleted` -> `CompleteJob` and `PodFailed` -> `RestartJob`, the Job's `PodEvicted` -> `RestartJob`,
`maxRetry` and `ttlSecondsAfterFinished`. These Jobs are fixtures of the suite, not mpigen's output: they pin
down what Volcano's controller and scheduler do with that shape, which a Volcano target builds on.

kwok plays the kubelet (pods become Running and never end by themselves); a test ends the master pod as its
container would have, by a status update. No kube-scheduler runs, so a pod with a node was bound by Volcano.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
import volcano
from controlplane import FAKE_NODE_ANNOTATION, Cluster, end_pod

Obj = dict[str, Any]
IMAGE = "example.com/mpi:1.0"


def mpi_job(
    name: str,
    workers: int,
    *,
    max_retry: int = 1,
    ttl: int = 3,
    cpu: str = "100m",
    queue: str = "test",
    master_restart: str = "Never",
    master_max_retry: int = 1,
) -> Obj:
    """An MPI-shaped Volcano Job that spells out every field Volcano's mutating webhook would default.
    The workers' task has `maxRetry: 3`, Volcano's default (v1.14's CRD refuses -1, "no limit"): sshd
    restarts in place, and a TaskFailed of the workers has no policy, so it only syncs the Job."""

    def task(task_name: str, replicas: int, command: list[str], restart: str, policies: list[Obj]) -> Obj:
        container = {
            "name": task_name,
            "image": IMAGE,
            "command": command,
            "resources": {"requests": {"cpu": cpu}},
        }
        retries = master_max_retry if task_name == "master" else 3
        spec: Obj = {
            "name": task_name,
            "replicas": replicas,
            "minAvailable": replicas,
            "maxRetry": retries,
            "template": {"spec": {"restartPolicy": restart, "containers": [container]}},
        }
        if policies:
            spec["policies"] = policies
        return spec

    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": volcano.SCHEDULER_NAME,
            "queue": queue,
            "minAvailable": 1 + workers,
            "maxRetry": max_retry,
            "ttlSecondsAfterFinished": ttl,
            "plugins": {"ssh": [], "svc": [], "env": []},
            "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
            "tasks": [
                task(
                    "master",
                    1,
                    ["mpirun", "hostname"],
                    master_restart,
                    [
                        {"event": "TaskCompleted", "action": "CompleteJob"},
                        {"event": "PodFailed", "action": "RestartJob"},
                        {"event": "TaskFailed", "action": "RestartJob"},
                    ],
                ),
                task("worker", workers, ["/usr/sbin/sshd", "-De"], "Always", []),
            ],
        },
    }


@pytest.fixture
def namespace(volcano_cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace with its `default` ServiceAccount (a pod cannot be created before it exists).
    When the test fails, its report shows Volcano's objects, the events and the processes' log ends
    (printed at teardown, which pytest shows with a failed test)."""
    name = volcano_cluster.create_namespace(
        "v-" + request.node.name.lower().replace("_", "-")[:40].strip("-[]")
    )
    volcano_cluster.wait_for(
        f"serviceaccount default in {name}",
        lambda: volcano_cluster.kubectl(
            "get", "serviceaccount", "default", "-n", name, "--ignore-not-found", "-o", "name"
        ).stdout.strip(),
    )
    failed_before = request.session.testsfailed
    yield name
    if request.session.testsfailed > failed_before:
        print(volcano.diagnostics(volcano_cluster))


def apply(cluster: Cluster, namespace: str, obj: Obj) -> None:
    cluster.kubectl("apply", "-n", namespace, "-f", "-", input=json.dumps(obj))


def phase(cluster: Cluster, namespace: str, job: str) -> str | None:
    done = cluster.find("vcjob", job, "-n", namespace)
    if done is None:
        return None
    found: str = done.get("status", {}).get("state", {}).get("phase", "")
    return found


def exists(cluster: Cluster, namespace: str, kind: str, name: str) -> bool:
    return cluster.find(kind, name, "-n", namespace) is not None


def pods(cluster: Cluster, namespace: str, job: str) -> list[Obj]:
    items: list[Obj] = cluster.get("pods", "-n", namespace, "-l", f"volcano.sh/job-name={job}")["items"]
    return items


def live(items: list[Obj]) -> list[Obj]:
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def running_pods(cluster: Cluster, namespace: str, job: str, count: int) -> dict[str, Obj]:
    """Wait until `count` pods of the job run (bound and started); return them by name."""

    def all_running() -> dict[str, Obj] | None:
        found = {
            p["metadata"]["name"]: p
            for p in live(pods(cluster, namespace, job))
            if p.get("status", {}).get("phase") == "Running"
        }
        return found if len(found) == count else None

    found: dict[str, Obj] = cluster.wait_for(f"{count} running pods of vcjob/{job}", all_running, timeout=90)
    return found


def podgroup(cluster: Cluster, namespace: str, job: str) -> Obj:
    uid = cluster.get("vcjob", job, "-n", namespace)["metadata"]["uid"]
    found: Obj = cluster.get("podgroup", f"{job}-{uid}", "-n", namespace)
    return found


def test_gang_runs_completes_and_expires(volcano_cluster: Cluster, namespace: str) -> None:
    """The whole gang is bound by Volcano; the plugins' objects are there as recorded; the master's success
    completes the Job, which ends the workers and the plugins' objects; the TTL then deletes the Job."""
    cluster, job, workers = volcano_cluster, "pi", 2
    apply(cluster, namespace, mpi_job(job, workers, max_retry=3, ttl=3))
    started = running_pods(cluster, namespace, job, 1 + workers)
    uid = cluster.get("vcjob", job, "-n", namespace)["metadata"]["uid"]

    # Pod names <job>-<task>-<index>; bound by Volcano to fake nodes; the svc plugin's DNS identity.
    assert set(started) == {"pi-master-0", "pi-worker-0", "pi-worker-1"}
    for name, pod in started.items():
        task, index = name.split("-")[1:]
        assert pod["spec"]["schedulerName"] == "volcano"
        assert pod["spec"]["nodeName"].startswith("fake-")
        assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == (name, job)
        labels, annotations = pod["metadata"]["labels"], pod["metadata"]["annotations"]
        assert (labels["volcano.sh/task-spec"], labels["volcano.sh/task-index"]) == (task, index)
        assert labels["volcano.sh/queue-name"] == "test" and labels["volcano.sh/job-namespace"] == namespace
        assert annotations["volcano.sh/job-retry-count"] == "0"
        assert annotations["scheduling.k8s.io/group-name"] == f"{job}-{uid}"
        container = pod["spec"]["containers"][0]
        env = {e["name"]: e for e in container.get("env", [])}
        # env plugin: the index in the task; svc plugin: host lists from its ConfigMap.
        assert env["VC_TASK_INDEX"]["value"] == env["VK_TASK_INDEX"]["value"] == index
        for var in ("VC_MASTER_HOSTS", "VC_MASTER_NUM", "VC_WORKER_HOSTS", "VC_WORKER_NUM"):
            assert env[var]["valueFrom"]["configMapKeyRef"] == {"name": f"{job}-svc", "key": var}
        mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
        volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
        # ssh plugin: /root/.ssh from the Secret <job>-ssh (items under .ssh/, mode 0600); svc: /etc/volcano.
        assert mounts["/root/.ssh"]["name"] == f"{job}-ssh" and mounts["/root/.ssh"]["subPath"] == ".ssh"
        secret = volumes[f"{job}-ssh"]["secret"]
        assert secret["secretName"] == f"{job}-ssh" and secret["defaultMode"] == 0o600
        assert {i["path"] for i in secret["items"]} == {
            ".ssh/id_rsa",
            ".ssh/id_rsa.pub",
            ".ssh/authorized_keys",
            ".ssh/config",
        }
        assert volumes[mounts["/etc/volcano"]["name"]]["configMap"]["name"] == f"{job}-svc"

    # One PodGroup <job>-<uid>, every pod in the gang, in the Job's queue.
    group = podgroup(cluster, namespace, job)
    assert group["spec"]["minMember"] == 1 + workers and group["spec"]["queue"] == "test"
    assert group["spec"]["minTaskMember"] == {"master": 1, "worker": workers}
    cluster.wait_for(
        "podgroup Running",
        lambda: podgroup(cluster, namespace, job).get("status", {}).get("phase") == "Running",
    )

    # svc plugin: the headless Service <job> over every pod of the job, the ConfigMap <job>-svc, a
    # NetworkPolicy <job> letting in only the job's own pods.
    service = cluster.get("service", job, "-n", namespace)
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["selector"] == {"volcano.sh/job-name": job, "volcano.sh/job-namespace": namespace}
    assert not service["spec"].get("publishNotReadyAddresses")
    hosts = cluster.get("configmap", f"{job}-svc", "-n", namespace)["data"]
    assert hosts == {
        "master.host": "pi-master-0.pi",
        "worker.host": "pi-worker-0.pi\npi-worker-1.pi",
        "VC_MASTER_HOSTS": "pi-master-0.pi",
        "VC_WORKER_HOSTS": "pi-worker-0.pi,pi-worker-1.pi",
        "VC_MASTER_NUM": "1",
        "VC_WORKER_NUM": "2",
    }
    policy = cluster.get("networkpolicy", job, "-n", namespace)["spec"]
    assert policy["policyTypes"] == ["Ingress"]
    assert policy["ingress"] == [{"from": [{"podSelector": {"matchLabels": service["spec"]["selector"]}}]}]
    # ssh plugin: a fresh RSA key pair made by the controller, and an ssh config naming every pod.
    secret = cluster.get("secret", f"{job}-ssh", "-n", namespace)["data"]
    keys = {key: base64.b64decode(value).decode() for key, value in secret.items()}
    assert set(keys) == {"id_rsa", "id_rsa.pub", "authorized_keys", "config"}
    assert keys["id_rsa"].startswith("-----BEGIN RSA PRIVATE KEY-----")
    assert keys["authorized_keys"] == keys["id_rsa.pub"] and keys["id_rsa.pub"].startswith("ssh-rsa ")
    assert keys["config"] == (
        "StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n"
        + "".join(
            f"Host {pod}\n  HostName {pod}.{job}\n" for pod in ("pi-master-0", "pi-worker-0", "pi-worker-1")
        )
    )
    for kind, name in (
        ("service", job),
        ("configmap", f"{job}-svc"),
        ("secret", f"{job}-ssh"),
        ("networkpolicy", job),
    ):
        owners = cluster.get(kind, name, "-n", namespace)["metadata"]["ownerReferences"]
        assert [(o["kind"], o["name"], o.get("controller")) for o in owners] == [("Job", job, True)], kind
    assert cluster.wait_for("vcjob Running", lambda: phase(cluster, namespace, job) == "Running")

    # The master's container exits 0: TaskCompleted -> CompleteJob; the workers are deleted, and with
    # them (OnJobDelete of each plugin) the Service, ConfigMap, Secret and NetworkPolicy.
    end_pod(cluster, namespace, "pi-master-0", "Succeeded")
    cluster.wait_for("vcjob Completed", lambda: phase(cluster, namespace, job) == "Completed", timeout=60)
    cluster.wait_for(
        "workers gone",
        lambda: (
            not any(
                p["metadata"]["name"].startswith("pi-worker-") for p in live(pods(cluster, namespace, job))
            )
        ),
        timeout=60,
    )
    for kind, name in (
        ("service", job),
        ("configmap", f"{job}-svc"),
        ("secret", f"{job}-ssh"),
        ("networkpolicy", job),
    ):
        cluster.wait_for(
            f"{kind}/{name} deleted with the job's end",
            lambda kind=kind, name=name: not exists(cluster, namespace, kind, name),
            timeout=30,
        )

    # ttlSecondsAfterFinished: vc-controller-manager's gc-controller deletes the Job (foreground), and
    # with it the master pod and the PodGroup.
    cluster.wait_for(
        "vcjob deleted after its TTL", lambda: phase(cluster, namespace, job) is None, timeout=60
    )
    cluster.wait_for(
        "pods and podgroup collected",
        lambda: not pods(cluster, namespace, job) and not cluster.get("podgroups", "-n", namespace)["items"],
        timeout=60,
    )


def test_gang_binds_no_pod_until_all_fit(volcano_cluster: Cluster, namespace: str) -> None:
    """4 pods of 600 CPUs on 3 nodes of 1000: the PodGroup is admitted (2400 CPUs fit the cluster's
    3000) and the pods are created, but no pod is bound while all 4 cannot be; a fourth node lets the
    whole gang be bound at once."""
    cluster, job = volcano_cluster, "big"
    assert len(cluster.get("nodes")["items"]) == 3
    apply(cluster, namespace, mpi_job(job, 3, cpu="600"))
    cluster.wait_for("4 pods created", lambda: len(pods(cluster, namespace, job)) == 4, timeout=60)
    cluster.wait_for(
        "podgroup Inqueue and unschedulable",
        lambda: (
            (group := podgroup(cluster, namespace, job).get("status", {})).get("phase") == "Inqueue"
            and any(c["type"] == "Unschedulable" for c in group.get("conditions", []))
        ),
        timeout=60,
    )
    time.sleep(5)  # ten scheduling periods
    assert [p["spec"].get("nodeName") for p in pods(cluster, namespace, job)] == [None] * 4
    assert phase(cluster, namespace, job) == "Pending"

    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": "fake-gang",
            "annotations": {FAKE_NODE_ANNOTATION: "fake"},
            "labels": {"kubernetes.io/hostname": "fake-gang", "type": "kwok"},
        },
    }
    cluster.kubectl("apply", "-f", "-", input=json.dumps(node))
    try:
        cluster.kubectl("taint", "node", "fake-gang", "node.kubernetes.io/not-ready:NoSchedule-", check=False)
        bound = running_pods(cluster, namespace, job, 4)
        assert len({p["spec"]["nodeName"] for p in bound.values()}) == 4, "one 600-CPU pod per 1000-CPU node"
    finally:
        cluster.kubectl("delete", "vcjob", job, "-n", namespace, "--cascade=foreground", "--timeout=60s")
        cluster.kubectl("delete", "node", "fake-gang")


def test_too_large_for_the_cluster_creates_no_pod(volcano_cluster: Cluster, namespace: str) -> None:
    """A gang needing more than the cluster has (4 x 1000 CPUs on 3 000) is never enqueued: the PodGroup
    stays Pending and the controller creates no pod at all."""
    cluster, job = volcano_cluster, "huge"
    apply(cluster, namespace, mpi_job(job, 3, cpu="1000"))
    cluster.wait_for("podgroup", lambda: cluster.get("podgroups", "-n", namespace)["items"])
    time.sleep(5)
    assert podgroup(cluster, namespace, job).get("status", {}).get("phase") == "Pending"
    assert pods(cluster, namespace, job) == []
    assert phase(cluster, namespace, job) == "Pending"


@pytest.fixture
def cleanup(volcano_cluster: Cluster, namespace: str) -> Iterator[None]:
    yield
    volcano_cluster.kubectl("delete", "vcjob", "--all", "-n", namespace, "--wait=false", check=False)


def test_failing_master_is_retried_up_to_max_retry(
    volcano_cluster: Cluster, namespace: str, cleanup: None
) -> None:
    """maxRetry counts runs, not retries: with maxRetry 2 the gang runs twice. Each master failure
    (PodFailed -> RestartJob) deletes every pod of the job and makes them again (annotated with the retry
    count, with a new SSH key pair); the second failure fails the Job, which no TTL here removes."""
    cluster, job = volcano_cluster, "flaky"
    apply(cluster, namespace, mpi_job(job, 1, max_retry=2, ttl=600))
    keys = []
    for attempt in range(2):
        started = running_pods(cluster, namespace, job, 2)
        retries = {p["metadata"]["annotations"]["volcano.sh/job-retry-count"] for p in started.values()}
        assert retries == {str(attempt)}
        keys.append(cluster.get("secret", f"{job}-ssh", "-n", namespace)["data"]["id_rsa"])
        cluster.wait_for("vcjob Running", lambda: phase(cluster, namespace, job) == "Running")
        end_pod(cluster, namespace, f"{job}-master-0", "Failed")
        if attempt == 0:
            cluster.wait_for(
                "the job restarted",
                lambda: cluster.get("vcjob", job, "-n", namespace).get("status", {}).get("retryCount") == 1,
                timeout=60,
            )
    cluster.wait_for("vcjob Failed", lambda: phase(cluster, namespace, job) == "Failed", timeout=60)
    status = cluster.get("vcjob", job, "-n", namespace)["status"]
    assert status["retryCount"] == 2
    assert keys[0] != keys[1], "the ssh plugin makes a new key pair for each run"
    time.sleep(3)
    # At the last run the controller keeps the failed master (soft retain) and deletes the running worker.
    remaining = {p["metadata"]["name"]: p["status"]["phase"] for p in live(pods(cluster, namespace, job))}
    assert remaining == {f"{job}-master-0": "Failed"}


def test_depends_on_with_a_whole_gang_never_starts(volcano_cluster: Cluster, namespace: str) -> None:
    """The master `dependsOn` the workers while `minAvailable` counts every pod: the controller holds the
    master pod back until the workers run, and the gang scheduler binds no worker until the master pod
    exists too. Nothing ever starts, so waiting for the workers cannot be left to `dependsOn`."""
    cluster, job = volcano_cluster, "dep"
    spec = mpi_job(job, 2)
    spec["spec"]["tasks"][0]["dependsOn"] = {"name": ["worker"]}
    apply(cluster, namespace, spec)
    cluster.wait_for("2 worker pods created", lambda: len(pods(cluster, namespace, job)) == 2, timeout=60)
    time.sleep(5)
    assert sorted(p["metadata"]["name"] for p in pods(cluster, namespace, job)) == [
        "dep-worker-0",
        "dep-worker-1",
    ]
    assert [p["spec"].get("nodeName") for p in pods(cluster, namespace, job)] == [None, None]
    assert phase(cluster, namespace, job) == "Pending"


def restart_container(cluster: Cluster, namespace: str, pod: str, restarts: int) -> None:
    """What the kubelet reports when a container of a pod with `restartPolicy: OnFailure` has failed and
    been restarted in place `restarts` times in all."""
    current = cluster.get("pod", pod, "-n", namespace)
    statuses = [{**status, "restartCount": restarts} for status in current["status"]["containerStatuses"]]
    cluster.kubectl(
        "patch",
        "pod",
        pod,
        "-n",
        namespace,
        "--subresource=status",
        "--type=strategic",
        "-p",
        json.dumps({"status": {"containerStatuses": statuses}}),
    )


def test_launcher_restarting_in_place_fails_the_job_at_its_task_max_retry(
    volcano_cluster: Cluster, namespace: str, cleanup: None
) -> None:
    """A master with `restartPolicy: OnFailure` restarts in place; once its restarts reach the task's
    `maxRetry` (2) Volcano raises TaskFailed, and `TaskFailed -> RestartJob` with the Job's `maxRetry: 1`
    (one run) fails the Job: no new pod is made."""
    cluster, job = volcano_cluster, "inplace"
    apply(
        cluster,
        namespace,
        mpi_job(job, 1, max_retry=1, ttl=600, master_restart="OnFailure", master_max_retry=2),
    )
    running_pods(cluster, namespace, job, 2)
    cluster.wait_for("vcjob Running", lambda: phase(cluster, namespace, job) == "Running")
    restart_container(cluster, namespace, f"{job}-master-0", 1)
    time.sleep(3)
    assert phase(cluster, namespace, job) == "Running", "one restart is below the task's maxRetry"
    restart_container(cluster, namespace, f"{job}-master-0", 2)
    cluster.wait_for("vcjob Failed", lambda: phase(cluster, namespace, job) == "Failed", timeout=60)
    assert cluster.get("vcjob", job, "-n", namespace)["status"]["retryCount"] == 1


def test_workers_restarting_in_place_past_their_max_retry_leave_the_job_running(
    volcano_cluster: Cluster, namespace: str, cleanup: None
) -> None:
    """The workers' task has no TaskFailed policy: restarts in place past its `maxRetry` (3) raise TaskFailed,
    which only syncs the Job (mpigen's worker and launcher tasks rely on this since v1.14 refuses -1)."""
    cluster, job = volcano_cluster, "wrestart"
    apply(cluster, namespace, mpi_job(job, 2, max_retry=1, ttl=600))
    running_pods(cluster, namespace, job, 3)
    cluster.wait_for("vcjob Running", lambda: phase(cluster, namespace, job) == "Running")
    uids = {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods(cluster, namespace, job)}
    restart_container(cluster, namespace, f"{job}-worker-0", 5)
    restart_container(cluster, namespace, f"{job}-worker-1", 4)
    time.sleep(5)
    assert phase(cluster, namespace, job) == "Running"
    assert {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods(cluster, namespace, job)} == uids
    assert cluster.get("vcjob", job, "-n", namespace)["status"].get("retryCount", 0) == 0
