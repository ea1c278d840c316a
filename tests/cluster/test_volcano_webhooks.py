"""Volcano v1.14.1's own admission webhooks (vc-webhook-manager, built by the suite from volcano.sh/volcano
v1.14.1: jobs/mutate and jobs/validate) as a judge of the volcano target, on the `volcano_cluster`.

- The mutating webhook changes nothing mpigen renders: every volcano golden case's Job, created with a
  server-side dry run (mutating, then validating webhooks, then the CRD's schema), comes back with the very
  spec mpigen wrote, so the Job runs the same with or without the webhooks (docs/departures.md).
- Refusals: where mpigen refuses a job because Volcano would refuse its Job, Volcano refuses the Job
  mpigen would otherwise have written (the same job rendered within the limit, then given the refused
  value): a pod name over 63 characters (the webhook), a gang larger than the job (since v1.14 only
  Volcano's optional ValidatingAdmissionPolicy `job-validation-policy`, which the chart installs with
  `custom.vap_enable`; the webhook alone admits it). What mpigen cannot know, a queue that does not
  exist, is refused by the webhook alone, as docs/departures.md says.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gotools
import pytest
import pythons
import volcano
import yaml
from controlplane import Cluster

Obj = dict[str, Any]
GOLDEN = Path(__file__).resolve().parents[2] / "golden"
CASES = sorted(p.name for p in GOLDEN.glob("volcano-*") if (p / "expected.yaml").is_file())


@pytest.fixture(scope="module")
def webhooks(volcano_cluster: Cluster) -> Iterator[Cluster]:
    """The volcano cluster with Volcano's Job webhooks on (off again after this module)."""
    configurations = volcano.start_webhooks(volcano_cluster, gotools.require(volcano.WEBHOOK_BINARY))
    try:
        yield volcano_cluster
    finally:
        for obj in configurations:
            volcano_cluster.kubectl(
                "delete", obj["kind"].lower(), obj["metadata"]["name"], "--ignore-not-found", check=False
            )


@pytest.fixture(scope="module")
def namespace(webhooks: Cluster) -> str:
    name = webhooks.create_namespace("vc-webhooks")
    webhooks.wait_for(
        f"serviceaccount default in {name}",
        lambda: webhooks.kubectl(
            "get", "serviceaccount", "default", "-n", name, "--ignore-not-found", "-o", "name"
        ).stdout.strip(),
    )
    return name


def dry_run(cluster: Cluster, job: Obj) -> subprocess.CompletedProcess[str]:
    """`kubectl create --dry-run=server` of one Job: the webhooks and the schema judge it, nothing is stored."""
    return cluster.kubectl(
        "create", "--dry-run=server", "-o", "json", "-f", "-", input=json.dumps(job), check=False
    )


def volcano_job(rendered: str, namespace: str) -> Obj:
    (job,) = [
        doc
        for doc in yaml.safe_load_all(rendered)
        if doc and doc["apiVersion"] == "batch.volcano.sh/v1alpha1" and doc["kind"] == "Job"
    ]
    job["metadata"]["namespace"] = namespace
    return job


def render(job: Obj, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*pythons.mpigen_argv(), "render", "--target", "volcano", *flags, "-"],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def mpijob(name: str, workers: int, **run_policy: Any) -> Obj:
    template = {"spec": {"containers": [{"name": "c", "image": "example.com/mpi:1.0"}]}}
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": name},
        "spec": {
            "runPolicy": run_policy,
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": template},
                "Worker": {"replicas": workers, "template": template},
            },
        },
    }


def _listed(objects: list[Obj]) -> Obj:
    return {"apiVersion": "v1", "kind": "List", "items": objects}


def test_the_webhooks_are_live(webhooks: Cluster, namespace: str) -> None:
    """Controls: the mutating webhook fills what a Job leaves out, the validating one refuses."""
    rendered = render(mpijob("live", 2), "-n", namespace)
    assert rendered.returncode == 0, rendered.stderr
    bare = volcano_job(rendered.stdout, namespace)
    for field in ("queue", "maxRetry", "schedulerName"):
        del bare["spec"][field]
    done = dry_run(webhooks, bare)
    assert done.returncode == 0, done.stderr
    spec = json.loads(done.stdout)["spec"]
    assert (spec["queue"], spec["maxRetry"], spec["schedulerName"]) == ("default", 3, "volcano")


@pytest.mark.parametrize("case", CASES)
def test_the_mutating_webhook_changes_nothing_mpigen_renders(
    webhooks: Cluster, namespace: str, case: str
) -> None:
    job = volcano_job((GOLDEN / case / "expected.yaml").read_text(), namespace)
    queue = job["spec"]["queue"]
    if queue != "default" and not volcano.queue_open(webhooks, queue):
        webhooks.kubectl("apply", "-f", "-", input=json.dumps(volcano.queue(queue)))
        webhooks.wait_for(f"queue {queue} Open", lambda: volcano.queue_open(webhooks, queue))
    done = dry_run(webhooks, job)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["spec"] == job["spec"]


def test_a_gang_larger_than_the_job_is_refused_by_mpigen_and_by_volcano(
    webhooks: Cluster, namespace: str
) -> None:
    refused = render(mpijob("gang", 2, schedulingPolicy={"minAvailable": 5}), "-n", namespace)
    assert refused.returncode == 1 and refused.stdout == ""
    assert "spec.runPolicy.schedulingPolicy.minAvailable" in refused.stderr, refused.stderr
    rendered = render(mpijob("gang", 2, schedulingPolicy={"minAvailable": 3}), "-n", namespace)
    assert rendered.returncode == 0, rendered.stderr
    job = volcano_job(rendered.stdout, namespace)
    assert dry_run(webhooks, job).returncode == 0
    job["spec"]["minAvailable"] = 5
    # v1.14's jobs/validate no longer checks it: only the chart's optional admission policy does.
    assert dry_run(webhooks, job).returncode == 0
    policy = volcano.job_validation_policy()
    webhooks.kubectl("apply", "--server-side", "-f", "-", input=json.dumps(_listed(policy)))
    try:
        message = "job 'minAvailable' should not be greater than total replicas in tasks"
        webhooks.wait_for(  # the API server takes the new policy up within seconds
            "Volcano's job-validation-policy refusing the gang",
            lambda: message in dry_run(webhooks, job).stderr,
            timeout=60,
        )
        job["spec"]["minAvailable"] = 3
        done = dry_run(webhooks, job)  # and it admits mpigen's own Job
        assert done.returncode == 0, done.stderr
    finally:
        for obj in policy:
            webhooks.kubectl("delete", obj["kind"].lower(), obj["metadata"]["name"], check=False)


def test_a_pod_name_over_63_characters_is_refused_by_mpigen_and_by_volcano(
    webhooks: Cluster, namespace: str
) -> None:
    """The longest pod name is the launcher's, `<job>-launcher-0`: a 53-character job name makes it 64."""
    long_name = "n" * 53
    refused = render(mpijob(long_name, 2), "-n", namespace)
    assert refused.returncode == 1 and refused.stdout == ""
    assert "metadata.name: too long" in refused.stderr, refused.stderr
    rendered = render(mpijob("short", 2), "-n", namespace)
    assert rendered.returncode == 0, rendered.stderr
    renamed = volcano_job(rendered.stdout, namespace)
    renamed["metadata"]["name"] = long_name
    done = dry_run(webhooks, renamed)
    assert done.returncode != 0
    assert f"create pod with name {long_name}-launcher-0 validate failed" in done.stderr, done.stderr
    renamed["metadata"]["name"] = "n" * 52  # 63 characters: admitted, and rendered by mpigen
    assert dry_run(webhooks, renamed).returncode == 0
    assert render(mpijob("n" * 52, 2), "-n", namespace).returncode == 0


def test_a_queue_that_does_not_exist_is_refused_by_volcano_alone(webhooks: Cluster, namespace: str) -> None:
    """mpigen cannot know the cluster's queues: it renders the job; Volcano refuses it at creation."""
    rendered = render(mpijob("noqueue", 2, schedulingPolicy={"queue": "missing"}), "-n", namespace)
    assert rendered.returncode == 0, rendered.stderr
    done = dry_run(webhooks, volcano_job(rendered.stdout, namespace))
    assert done.returncode != 0
    assert "unable to find job queue" in done.stderr, done.stderr
