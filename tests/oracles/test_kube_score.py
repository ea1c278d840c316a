"""kube-score v1.20 (built from its Go module by tests/cluster/gotools.py) over every golden output: on
mpigen's own containers it finds only what the README's security section lists with its reason (the
helper image's tag and pull policy, which the operators' defaults and `--kubectl-delivery-image` decide;
the key Job's user, which is the worker's). Everything else it checks on them (requests and limits,
ephemeral storage, read-only root, non-root user and group, security context) holds."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cluster import gotools

pytestmark = pytest.mark.slow

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
OWN = {"kubectl-delivery", "wait-for-workers", "cleanup", "ssh-keygen", "store"}
# (check, container) -> why it stays (README, "Security").
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
    ("container-security-context-user-group-id", "store"): "the worker's user, who must read the key",
}


def findings() -> list[tuple[str, str, str]]:
    """(check id, container or "", summary) for every finding over every golden output."""
    binary = gotools.require("kube-score")
    found: list[tuple[str, str, str]] = []
    outputs = sorted(GOLDEN.glob("*/expected.yaml"))
    assert len(outputs) > 100
    done = subprocess.run(
        [binary, "score", "-o", "json", *map(str, outputs)],
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
