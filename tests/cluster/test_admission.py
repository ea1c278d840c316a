"""Pod Security admission on the real API server: in a namespace labelled
`pod-security.kubernetes.io/enforce: restricted`, a job whose templates meet restricted is applied and
every pod mpigen renders for it (launcher with its init containers, workers, the key Job, the clean-up
Job) is admitted and scheduled onto kwok nodes; the same namespace refuses the pods of a job whose
templates do not meet it, naming the user's container only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from controlplane import Cluster
from mpijobs import manifest

import mpigen

GOLDEN = Path(__file__).resolve().parents[2] / "golden"


def restricted_namespace(cluster: Cluster, prefix: str) -> str:
    name = cluster.create_namespace(prefix)
    cluster.kubectl(
        "label",
        "namespace",
        name,
        "pod-security.kubernetes.io/enforce=restricted",
        "pod-security.kubernetes.io/enforce-version=latest",
    )
    return name


def render(case: str, namespace: str) -> list[dict[str, Any]]:
    job = yaml.safe_load((GOLDEN / case / "input.yaml").read_text())
    job["metadata"]["namespace"] = namespace
    return mpigen.compile(job)


def pods_of(cluster: Cluster, namespace: str) -> dict[str, str]:
    """Each pod's owner kind and name prefix -> its phase."""
    items = cluster.get("pods", "-n", namespace)["items"]
    return {pod["metadata"]["name"]: pod["status"].get("phase", "") for pod in items}


@pytest.mark.parametrize("version", ["v1alpha1", "v1alpha2", "v1", "v2beta1"])
def test_a_restricted_job_runs_where_restricted_is_enforced(workloads: Cluster, version: str) -> None:
    cluster = workloads
    namespace = restricted_namespace(cluster, f"psa-{version}")
    objects = render(f"{version}-restricted-templates", namespace)
    done = cluster.kubectl("apply", "-f", "-", input=manifest(objects))
    assert "would violate PodSecurity" not in done.stderr, done.stderr
    expected = {"pi-worker-0", "pi-worker-1"}
    jobs = [o["metadata"]["name"] for o in objects if o["kind"] == "Job"]
    assert "pi-launcher" in jobs and "pi-cleanup" in jobs, jobs
    assert ("pi-ssh-keygen" in jobs) is (version == "v2beta1")

    def admitted() -> bool:
        pods = pods_of(cluster, namespace)
        have_jobs = {job for job in jobs if any(pod.startswith(f"{job}-") for pod in pods)}
        return expected <= pods.keys() and have_jobs == set(jobs)

    cluster.wait_for(f"every pod of the {version} job admitted", admitted, timeout=90)
    for obj in objects:
        if obj["kind"] in ("Job", "StatefulSet"):
            done = cluster.kubectl("create", "--dry-run=server", "-f", "-", input=as_pod(obj, namespace))
            assert "PodSecurity" not in done.stderr, done.stderr


def as_pod(obj: dict[str, Any], namespace: str) -> str:
    """A workload's pod template as a Pod, for a server-side dry run (Pod Security enforces on pods)."""
    template = obj["spec"]["template"]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "probe",
            "namespace": namespace,
            "labels": template["metadata"].get("labels", {}),
        },
        "spec": template["spec"],
    }
    return json.dumps(pod)


def test_the_enforced_namespace_refuses_a_job_whose_templates_do_not_meet_it(workloads: Cluster) -> None:
    """The control: the shipped pi example (its containers set only runAsUser) is refused, naming only
    its own containers, none of mpigen's; mpigen's own Jobs (key, clean-up) are admitted."""
    cluster = workloads
    namespace = restricted_namespace(cluster, "psa-refused")
    objects = render("v2beta1-example-pi", namespace)
    cluster.kubectl("apply", "-f", "-", input=manifest(objects))
    cluster.wait_for(
        "the key and clean-up Jobs' pods admitted",
        lambda: all(
            any(pod.startswith(prefix) for pod in pods_of(cluster, namespace))
            for prefix in ("pi-ssh-keygen-", "pi-cleanup-")
        ),
        timeout=90,
    )
    for kind, name, own in (
        ("Job", "pi-launcher", "mpi-launcher"),
        ("StatefulSet", "pi-worker", "mpi-worker"),
    ):
        (obj,) = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
        done = cluster.kubectl(
            "create", "--dry-run=server", "-f", "-", input=as_pod(obj, namespace), check=False
        )
        assert done.returncode != 0 and 'violates PodSecurity "restricted:latest"' in done.stderr, done.stderr
        assert f'"{own}"' in done.stderr
        for helper in ("kubectl-delivery", "wait-for-workers"):
            assert helper not in done.stderr, done.stderr
    assert not [pod for pod in pods_of(cluster, namespace) if pod.startswith(("pi-launcher-", "pi-worker-"))]


def test_the_network_policy_selects_exactly_the_jobs_launcher_and_workers(workloads: Cluster) -> None:
    """`--network-policy same-job`: the API server accepts the NetworkPolicy, and its selector (the same for
    the pods it protects and the peers it admits) picks this job's launcher and worker pods, not its
    clean-up or key Job, not another job's pods in the namespace. (The suite runs no CNI plug-in, so
    packets are not filtered here; what a plug-in enforces is what this selector selects.)"""
    cluster = workloads
    namespace = restricted_namespace(cluster, "netpol")
    job = yaml.safe_load((GOLDEN / "v2beta1-network-policy-same-job" / "input.yaml").read_text())
    job["metadata"]["namespace"] = namespace
    other = yaml.safe_load(yaml.safe_dump(job))
    other["metadata"]["name"] = "other"
    options = mpigen.Options(network_policy="same-job")
    objects = mpigen.compile(job, options) + mpigen.compile(other, options)
    cluster.kubectl("apply", "-f", "-", input=manifest(objects))
    policy = cluster.get("networkpolicy", "pi", "-n", namespace)
    (peer,) = policy["spec"]["ingress"][0]["from"]
    assert peer == {"podSelector": policy["spec"]["podSelector"]}
    expected = {"pi-worker-0", "pi-worker-1"}

    def all_pods() -> dict[str, str] | None:
        pods = pods_of(cluster, namespace)
        wanted = ("pi-launcher-", "pi-cleanup-", "pi-ssh-keygen-", "other-launcher-")
        return (
            pods
            if expected <= pods.keys() and all(any(p.startswith(w) for p in pods) for w in wanted)
            else None
        )

    pods = cluster.wait_for("both jobs' pods", all_pods, timeout=90)
    labels = ",".join(f"{k}={v}" for k, v in sorted(policy["spec"]["podSelector"]["matchLabels"].items()))
    selected = {p["metadata"]["name"] for p in cluster.get("pods", "-n", namespace, "-l", labels)["items"]}
    launcher = {p for p in pods if p.startswith("pi-launcher-")}
    assert selected == expected | launcher, (selected, sorted(pods))
