"""The API server's Pod Security evaluator (tests/oracles/podsecurity: k8s.io/pod-security-admission/policy
at Kubernetes v1.37.2) over every golden output: mpigen's own containers and pods never violate
"restricted", and where a job's templates meet restricted (golden/*restricted-templates, one per
apiVersion and run target) no rendered pod violates it. The evaluator reads the pod templates of a
JobSet's replicated jobs and a Volcano Job's tasks too (named `<object>-<replicated job or task>`)."""

from __future__ import annotations

import json
import re
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from cluster import gotools

pytestmark = pytest.mark.slow

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
OWN_CONTAINERS = {"kubectl-delivery", "wait-for-workers", "cleanup", "ssh-keygen", "store"}
# Pods that hold only mpigen's containers: the clean-up Job, and the key Job (whose pod-level fields are
# the worker pod's: allowed whenever the worker template's pod-level fields are).
OWN_JOBS = re.compile(r".*-(cleanup|ssh-keygen)\Z")
RESTRICTED_CASES = sorted(path.parent.name for path in GOLDEN.glob("*restricted-templates/expected.yaml"))
TARGETS = ("operator", "jobset", "volcano")
# The pods each target's restricted cases must hold at least (so that an evaluator that skipped an
# object could not pass them).
PODS = {
    "operator": {("Job", "launcher"), ("StatefulSet", "worker"), ("Job", "cleanup")},
    "jobset": {("JobSet", "launcher"), ("JobSet", "worker")},
    "volcano": {("Job", "launcher"), ("Job", "worker")},
}


def target_of(case: str) -> str:
    prefix = case.split("-", 1)[0]
    return prefix if prefix in TARGETS else "operator"


@cache
def evaluator() -> str:
    return gotools.require("podsecurity")


def verdicts(text: str, level: str = "restricted") -> list[dict[str, Any]]:
    done = subprocess.run(
        [evaluator(), "-level", level], input=text, capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def named_containers(violation: dict[str, str]) -> set[str]:
    """The containers a violation names (`container "a"`, `containers "a", "b"`); none for a pod-level one."""
    found = re.search(r'\bcontainers? ((?:"[^"]*"(?:, )?)+)', violation["detail"])
    return set(re.findall(r'"([^"]*)"', found.group(1))) if found else set()


def test_the_evaluator_forbids_what_restricted_forbids() -> None:
    """A pod that breaks restricted is refused by name, one that meets it is allowed: the oracle is live."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
    (refused,) = verdicts(json.dumps(pod))
    assert not refused["allowed"]
    assert {
        "allowPrivilegeEscalation != false",
        "unrestricted capabilities",
        "runAsNonRoot != true",
        "seccompProfile",
    } == {v["reason"] for v in refused["violations"]}
    assert all(named_containers(v) == {"c"} for v in refused["violations"] if v["reason"] != "seccompProfile")
    pod["spec"]["containers"][0]["securityContext"] = {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert verdicts(json.dumps(pod)) == [{"kind": "Pod", "name": "p", "allowed": True, "violations": []}]
    assert verdicts(json.dumps(pod), "baseline")[0]["allowed"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("version", ["v1alpha1", "v1alpha2", "v1", "v2beta1"])
def test_each_version_and_target_has_a_restricted_case(version: str, target: str) -> None:
    prefix = "" if target == "operator" else f"{target}-"
    assert f"{prefix}{version}-restricted-templates" in RESTRICTED_CASES


@pytest.mark.parametrize("case", RESTRICTED_CASES)
def test_templates_that_meet_restricted_give_pods_that_meet_it(case: str) -> None:
    found = verdicts((GOLDEN / case / "expected.yaml").read_text())
    kinds = {(v["kind"], v["name"].rsplit("-", 1)[-1]) for v in found}
    assert PODS[target_of(case)] <= kinds, kinds
    if case.endswith("v2beta1-restricted-templates") and target_of(case) != "volcano":
        assert ("Job", "keygen") in kinds, kinds
    assert [v for v in found if not v["allowed"]] == []


def golden_outputs() -> list[str]:
    return sorted(path.parent.name for path in GOLDEN.glob("*/expected.yaml"))


def test_mpigens_own_containers_and_jobs_never_violate_restricted() -> None:
    """Over every golden output: a violation names only the user's containers, and the clean-up and key
    Jobs are allowed unless the worker template's pod-level fields break restricted themselves."""
    cases = golden_outputs()
    assert len(cases) > 100
    text = "".join(f"---\n{(GOLDEN / case / 'expected.yaml').read_text()}" for case in cases)
    checked, own_jobs = 0, 0
    for verdict in verdicts(text):
        checked += 1
        for violation in verdict["violations"]:
            assert not named_containers(violation) & OWN_CONTAINERS, (verdict["name"], violation)
        if OWN_JOBS.match(verdict["name"]) and verdict["kind"] == "Job":
            own_jobs += 1
            pod_level = [v for v in verdict["violations"] if not named_containers(v)]
            assert pod_level == verdict["violations"], verdict
    assert checked > 200 and own_jobs > 20, (checked, own_jobs)
