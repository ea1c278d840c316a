"""kube-score v1.20 (built from its Go module by tests/cluster/gotools.py) over every golden output: on
mpigen's own containers it finds only what docs/explanation/security.md lists with its reason (the
helper image's tag and pull policy, which the operators' defaults and `--kubectl-delivery-image` decide;
the key Job's user, which is the worker's; no ephemeral storage under Kueue). Everything else it checks on them (requests and limits,
ephemeral storage, read-only root, non-root user and group, security context) holds. kube-score reads no
custom resource, so each JobSet replicated job's and Volcano task's pod template is handed to it as a
batch/v1 Job of the same name (`<object>-<replicated job or task>`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from cluster import gotools

pytestmark = pytest.mark.slow

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
OWN = {"kubectl-delivery", "wait-for-workers", "cleanup", "ssh-keygen", "store"}
# (check, container) -> why it stays (docs/explanation/security.md).
LISTED = {
    **{
        (
            "container-image-tag",
            name,
        ): "the operators' default helper image is :latest; pin it with --kubectl-delivery-image"
        for name in ("kubectl-delivery", "wait-for-workers", "cleanup", "store")
    },
    ("container-image-tag", "ssh-keygen"): "the worker's own image",
    (
        "container-image-pull-policy",
        "kubectl-delivery",
    ): "the training-operator's IfNotPresent (v1), or a pinned image",
    (
        "container-image-pull-policy",
        "wait-for-workers",
    ): "a pinned --kubectl-delivery-image without a pull policy",
    ("container-image-pull-policy", "ssh-keygen"): "the worker's own pull policy",
    ("container-security-context-user-group-id", "ssh-keygen"): "the worker's user, who must own the key",
    (
        "container-ephemeral-storage-request-and-limit",
        "kubectl-delivery",
    ): "under --queue: a ClusterQueue that does not cover ephemeral-storage would never admit the JobSet",
    ("container-security-context-user-group-id", "store"): "the worker's user, who must read the key",
}


def as_jobs(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """A JobSet's replicated jobs and a Volcano Job's tasks as batch/v1 Jobs; other objects as they are."""
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    templates = [(job["name"], job["template"]["spec"]["template"]) for job in spec.get("replicatedJobs", [])]
    if obj.get("apiVersion", "").startswith("batch.volcano.sh/"):
        templates += [(task["name"], task["template"]) for task in spec.get("tasks", [])]
    if not templates:
        return [obj]
    return [
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {**meta, "name": f"{meta['name']}-{name}"},
            "spec": {"template": template},
        }
        for name, template in templates
    ]


def scanned_text(outputs: list[Path]) -> tuple[str, int]:
    """Every golden output as one stream (its documents as written; a JobSet or Volcano Job turned into
    Jobs, written as JSON), and how many custom resources were turned."""
    documents, turned = [], 0
    for path in outputs:
        for text in path.read_text().split("\n---\n"):
            if "\nkind: JobSet\n" in f"\n{text}\n" or text.startswith("apiVersion: batch.volcano.sh/"):
                turned += 1
                documents += [json.dumps(job) for job in as_jobs(yaml.safe_load(text))]
            else:
                documents.append(text.removeprefix("---\n"))
    return "\n---\n".join(documents), turned


def findings() -> list[tuple[str, str, str]]:
    """(check id, container or "", summary) for every finding over every golden output."""
    binary = gotools.require("kube-score")
    found: list[tuple[str, str, str]] = []
    outputs = sorted(GOLDEN.glob("*/expected.yaml"))
    assert len(outputs) > 100
    text, turned = scanned_text(outputs)
    assert turned > 40, turned  # the jobset and volcano goldens' JobSets and Volcano Jobs
    done = subprocess.run(
        [binary, "score", "-o", "json", "-"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.stdout.startswith("["), done.stderr
    report: list[dict[str, Any]] = json.loads(done.stdout)
    for obj in report:
        for check in obj["checks"]:
            if check.get("skipped") or check["grade"] >= 10:
                continue
            for comment in check.get("comments") or []:
                found.append((check["check"]["id"], comment.get("path") or "", comment["summary"]))
    return found


def test_kube_score_finds_on_mpigens_own_containers_only_what_is_listed() -> None:
    found = findings()
    # The scanner is live: the user's containers (left as written) draw its resource findings.
    assert any(check == "container-resources" and path not in OWN for check, path, _ in found)
    unlisted = sorted(
        {
            (check, path, summary)
            for check, path, summary in found
            if path in OWN and (check, path) not in LISTED
        }
    )
    assert unlisted == []
