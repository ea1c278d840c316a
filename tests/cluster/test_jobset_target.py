"""`--target jobset` against the real JobSet v0.12 controller and webhooks, and Kueue v0.19 (jobset.py):
every jobset golden case is admitted by the JobSet webhooks; for each input version mpigen's own JobSet
holds its launcher back until every worker is Ready, completes when the launcher succeeds and is removed
by its TTL; a failing launcher restarts the whole JobSet up to the run policy's backoffLimit, then it
fails; with --queue, Kueue keeps the JobSet suspended, without a pod, until its whole quota is free.

kwok makes pods Running and Ready and never ends them: the tests end the launcher pod as its mpirun would,
and hold worker pods Pending with HOLD_ANNOTATION, put on the rendered worker template.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import crds
import jobset
import pytest
import yaml
from controlplane import HOLD_ANNOTATION, Cluster, end_pod
from jobs import V1, V1ALPHA1, V1ALPHA2, V2BETA1, make_job
from test_jobset import (
    REPLICATED_JOB,
    RESTART_ATTEMPT,
    conditions,
    gone,
    never,
    pods_of,
    ready,
    running_launcher,
    workload_of,
)

import mpigen
from mpigen.options import Options

ROOT = Path(__file__).resolve().parents[2]
# Kubernetes' own gang (scheduling.k8s.io/v1beta1 Workload and PodGroup) is served only by an API server with
# the GenericWorkload gate: those cases are applied on tests/cluster/test_workload_gang.py's gated cluster.
GOLDEN = sorted(
    path
    for path in ROOT.glob("golden/jobset-*/expected.yaml")
    if "apiVersion: scheduling.k8s.io/v1beta1\n" not in path.read_text()
)
VERSIONS = {"v1alpha1": V1ALPHA1, "v1alpha2": V1ALPHA2, "v1": V1, "v2beta1": V2BETA1}
NAMESPACE_LINE = re.compile(r"^(\s*(?:- )?namespace: )(\S+)$", re.MULTILINE)


@pytest.fixture
def namespace(jobset_cluster: Cluster, request: pytest.FixtureRequest) -> str:
    return jobset_cluster.create_namespace(
        "js-" + re.sub(r"[^a-z0-9]+", "-", request.node.name.lower())[:40].strip("-")
    )


@pytest.fixture(scope="module")
def podgroup_crds(jobset_cluster: Cluster) -> None:
    jobset.create_missing(jobset_cluster, crds.podgroup_crds())


def rendered(job: dict[str, Any], options: Options) -> list[dict[str, Any]]:
    return mpigen.compile(job, options.replace(target="jobset"))


def apply(cluster: Cluster, namespace: str, objects: list[dict[str, Any]]) -> None:
    cluster.kubectl(
        "apply",
        "--server-side",
        "-n",
        namespace,
        "-f",
        "-",
        input=json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}),
    )


def the_jobset(objects: list[dict[str, Any]]) -> dict[str, Any]:
    [found] = [obj for obj in objects if obj["kind"] == "JobSet"]
    return found


def hold_workers(objects: list[dict[str, Any]]) -> None:
    worker = the_jobset(objects)["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    worker.setdefault("metadata", {}).setdefault("annotations", {})[HOLD_ANNOTATION] = "true"


@pytest.mark.parametrize("golden", GOLDEN, ids=[p.parent.name for p in GOLDEN])
def test_every_jobset_golden_is_admitted_by_the_jobset_webhooks(
    jobset_cluster: Cluster, namespace: str, podgroup_crds: None, golden: Path
) -> None:
    text = NAMESPACE_LINE.sub(lambda m: m[1] + namespace, golden.read_text())
    done = jobset_cluster.kubectl(
        "apply", "--server-side", "-n", namespace, "-f", "-", input=text, check=False
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    objects = [doc for doc in yaml.safe_load_all(text) if doc]
    assert len(done.stdout.splitlines()) == len(objects)
    [name] = [o["metadata"]["name"] for o in objects if o["kind"] == "JobSet"]
    stored = jobset_cluster.get("jobset", name, "-n", namespace)
    sent = the_jobset(objects)["spec"]
    # The webhook had nothing to default that mpigen left out.
    for key in ("network", "successPolicy", "suspend", "ttlSecondsAfterFinished", "managedBy"):
        assert stored["spec"].get(key) == sent.get(key), key
    jobset_cluster.kubectl("delete", "jobset", name, "-n", namespace, "--wait=false")


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_the_launcher_starts_after_every_worker_is_ready_and_the_jobset_completes(
    jobset_cluster: Cluster, namespace: str, version: str
) -> None:
    cluster, name = jobset_cluster, "run"
    extra: dict[str, Any] = (
        {"runPolicy": {"ttlSecondsAfterFinished": 3}} if version in ("v1", "v2beta1") else {}
    )
    job = make_job(VERSIONS[version], 2, name=name, namespace=namespace, **extra)
    objects = rendered(job, Options(ssh_secret="keys") if version == "v2beta1" else Options())
    hold_workers(objects)
    apply(cluster, namespace, objects)

    workers = cluster.wait_for(
        "2 worker pods",
        lambda: (
            pods_of(cluster, namespace, name, "worker")
            if len(pods_of(cluster, namespace, name, "worker")) == 2
            else None
        ),
        timeout=60,
    )
    assert sorted(p["spec"]["hostname"] for p in workers) == [f"{name}-worker-0-0", f"{name}-worker-0-1"]
    assert {p["spec"]["subdomain"] for p in workers} == {name}
    never(
        cluster,
        "a launcher pod while no worker is Ready",
        lambda: pods_of(cluster, namespace, name, "launcher"),
        3,
    )
    first, second = sorted(p["metadata"]["name"] for p in workers)
    cluster.kubectl("annotate", "pod", first, "-n", namespace, f"{HOLD_ANNOTATION}-")
    cluster.wait_for(f"{first} Ready", lambda: ready(cluster.get("pod", first, "-n", namespace)), timeout=30)
    never(
        cluster,
        "a launcher pod while 1 of 2 workers is Ready",
        lambda: pods_of(cluster, namespace, name, "launcher"),
        3,
    )
    cluster.kubectl("annotate", "pod", second, "-n", namespace, f"{HOLD_ANNOTATION}-")
    launcher = running_launcher(cluster, namespace, name)
    pod = cluster.get("pod", launcher, "-n", namespace)
    assert pod["spec"]["hostname"] == f"{name}-launcher-0-0"
    if version != "v2beta1":  # kubexec.sh reads its restart attempt from the downward API
        env = {e["name"]: e for e in pod["spec"]["containers"][0]["env"]}
        assert env["MPIGEN_RESTART_ATTEMPT"]["valueFrom"]["fieldRef"]["fieldPath"].endswith(
            f"['{RESTART_ATTEMPT}']"
        )

    end_pod(cluster, namespace, launcher, "Succeeded")
    cluster.wait_for(
        f"jobset/{name} Completed", lambda: "Completed" in conditions(cluster, namespace, name), timeout=60
    )
    if extra:
        cluster.wait_for(
            f"jobset/{name} removed by its TTL", lambda: gone(cluster, namespace, name), timeout=60
        )
    else:
        cluster.wait_for(
            "the workers ended", lambda: not pods_of(cluster, namespace, name, "worker"), timeout=60
        )


@pytest.mark.parametrize("version", ["v1alpha2", "v2beta1"])
def test_a_failing_launcher_restarts_the_whole_jobset_up_to_the_backoff_limit(
    jobset_cluster: Cluster, namespace: str, version: str
) -> None:
    cluster, name = jobset_cluster, "fails"
    limit = {"backoffLimit": 1}
    extra: dict[str, Any] = {"runPolicy": limit} if version == "v2beta1" else limit
    objects = rendered(
        make_job(VERSIONS[version], 2, name=name, namespace=namespace, **extra),
        Options(ssh_secret="keys") if version == "v2beta1" else Options(),
    )
    assert the_jobset(objects)["spec"]["failurePolicy"]["maxRestarts"] == 1
    apply(cluster, namespace, objects)
    for attempt in (0, 1):
        launcher = running_launcher(cluster, namespace, name, attempt)
        assert {
            p["metadata"]["labels"][RESTART_ATTEMPT] for p in pods_of(cluster, namespace, name, "worker")
        } == {str(attempt)}
        end_pod(cluster, namespace, launcher, "Failed")
    cluster.wait_for(
        f"jobset/{name} Failed", lambda: "Failed" in conditions(cluster, namespace, name), timeout=60
    )
    assert cluster.get("jobset", name, "-n", namespace)["status"]["restarts"] == 1
    cluster.wait_for(
        "the workers deleted", lambda: not pods_of(cluster, namespace, name, "worker"), timeout=60
    )
    never(
        cluster,
        "a third attempt",
        lambda: [
            p for p in pods_of(cluster, namespace, name) if p["metadata"]["labels"][RESTART_ATTEMPT] == "2"
        ],
        3,
    )


def _with_cpu(job: dict[str, Any]) -> dict[str, Any]:
    for replica in job["spec"]["mpiReplicaSpecs"].values():
        for container in replica["template"]["spec"]["containers"]:
            container["resources"] = {"requests": {"cpu": "1", "memory": "64Mi"}}
    return job


def test_kueue_admits_the_whole_jobset_only_when_its_quota_is_free(
    kueue_cluster: Cluster, namespace: str
) -> None:
    cluster = kueue_cluster
    queue = jobset.queue(cluster, namespace, cpu="3", memory="1Gi")
    options = Options(queue=queue)
    # v1alpha2: a kubeflow.org/v1 launcher's kubectl-delivery asks for ephemeral-storage, which this
    # ClusterQueue does not cover (mpigen warns of it: tests/unit/targets/test_jobset_objects.py).
    first = rendered(_with_cpu(make_job(V1ALPHA2, 2, name="first", namespace=namespace)), options)
    second = rendered(_with_cpu(make_job(V1ALPHA2, 2, name="second", namespace=namespace)), options)
    assert the_jobset(second)["spec"]["suspend"] is True
    apply(cluster, namespace, first)
    launcher = running_launcher(cluster, namespace, "first")
    workload = workload_of(cluster, namespace, "first")
    assert workload is not None
    assert {p["name"]: p["count"] for p in workload["spec"]["podSets"]} == {"worker": 2, "launcher": 1}

    apply(cluster, namespace, second)
    cluster.wait_for(
        "a Workload for jobset/second", lambda: workload_of(cluster, namespace, "second"), timeout=30
    )
    never(
        cluster,
        "a pod of jobset/second while jobset/first holds the quota",
        lambda: pods_of(cluster, namespace, "second"),
        5,
    )
    assert cluster.get("jobset", "second", "-n", namespace)["spec"]["suspend"] is True

    end_pod(cluster, namespace, launcher, "Succeeded")
    cluster.wait_for(
        "jobset/second started whole",
        lambda: len([p for p in pods_of(cluster, namespace, "second", "worker") if ready(p)]) == 2,
        timeout=90,
    )
    running_launcher(cluster, namespace, "second")
    assert {p["metadata"]["labels"][REPLICATED_JOB] for p in pods_of(cluster, namespace, "second")} == {
        "worker",
        "launcher",
    }


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_a_restricted_job_runs_where_restricted_is_enforced(
    jobset_cluster: Cluster, namespace: str, version: str
) -> None:
    """In a namespace that enforces Pod Security restricted, the jobset golden whose templates meet it
    runs: the Job controller creates every worker pod, the launcher pod once they are Ready, and (v2beta1)
    the key Job's pod; none is refused (tests/cluster/test_admission.py does the same for the operator
    target)."""
    cluster, name = jobset_cluster, "pi"
    cluster.kubectl(
        "label",
        "namespace",
        namespace,
        "pod-security.kubernetes.io/enforce=restricted",
        "pod-security.kubernetes.io/enforce-version=latest",
    )
    job = yaml.safe_load(
        (ROOT / "golden" / f"jobset-{version}-restricted-templates" / "input.yaml").read_text()
    )
    job["metadata"]["namespace"] = namespace
    objects = rendered(job, Options(network_policy="same-job"))
    apply(cluster, namespace, objects)
    cluster.wait_for(
        "2 Ready worker pods",
        lambda: len([p for p in pods_of(cluster, namespace, name, "worker") if ready(p)]) == 2,
        timeout=60,
    )
    running_launcher(cluster, namespace, name)
    if version == "v2beta1":
        cluster.wait_for(
            "the key Job's pod",
            lambda: cluster.get("pods", "-n", namespace, "-l", "job-name=pi-ssh-keygen")["items"],
            timeout=60,
        )
    events = cluster.get("events", "-n", namespace)["items"]
    refused = [e["message"] for e in events if "PodSecurity" in e.get("message", "")]
    assert refused == []
    # --network-policy same-job selects the JobSet's launcher and workers as the Job controller made
    # them, not the key Job's pod.
    policy = cluster.get("networkpolicy", name, "-n", namespace)["spec"]["podSelector"]["matchLabels"]
    selector = ",".join(f"{key}={value}" for key, value in sorted(policy.items()))
    selected = cluster.get("pods", "-n", namespace, "-l", selector)["items"]
    assert sorted(p["metadata"]["labels"][REPLICATED_JOB] for p in selected) == [
        "launcher",
        "worker",
        "worker",
    ]
