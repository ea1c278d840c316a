"""Golden cases (tests/golden.py): every case through render, the kustomize plugin and the KRM function.

`pytest --update-golden` rewrites render's expected files and then fails, so an update run never passes.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from jobs import load_all

from golden import CASES, GOLDEN, RENDER_ONLY, STREAM_PROBLEMS, Case, assert_case


def test_cases_exist() -> None:
    assert len(CASES) >= 10, f"no golden cases found under {GOLDEN}"
    for case in CASES:
        files = {p.name for p in (GOLDEN / case).iterdir()}
        assert "input.yaml" in files, f"{case}: no input.yaml"
        assert ("expected.yaml" in files) != ("errors.txt" in files), (
            f"{case}: needs exactly one of expected.yaml or errors.txt"
        )


def test_only_inputs_that_are_not_objects_skip_the_krm_function_and_the_plugin() -> None:
    assert {case for case in CASES if Case(case).documents is None} == RENDER_ONLY
    assert all(Case(case).failing for case in RENDER_ONLY)
    assert STREAM_PROBLEMS <= {case for case in CASES if Case(case).failing} - RENDER_ONLY


@pytest.mark.parametrize("case", CASES)
def test_golden(case: str, request: pytest.FixtureRequest) -> None:
    assert_case(case, update=bool(request.config.getoption("--update-golden")))


# Fields mpigen emits only for newer Kubernetes versions (--kube-version), by kind: (field path, first
# version). A case rendered for the newest version is checked against 1.25 without them, which is
# what `--kube-version 1.25` renders (pinned by golden/v2beta1-kube-version-1.28).
# "*": every item of a list.
NEWER_FIELDS = {
    "Job": [(("spec", "podReplacementPolicy"), "1.29")],
    "JobSet": [(("spec", "replicatedJobs", "*", "template", "spec", "podReplacementPolicy"), "1.29")],
}


def _drop(node: Any, path: tuple[str, ...]) -> None:
    if len(path) == 1:
        if isinstance(node, dict):
            node.pop(path[0], None)
        return
    children = (
        node
        if path[0] == "*" and isinstance(node, list)
        else [node.get(path[0]) if isinstance(node, dict) else None]
    )
    for child in children:
        if child is not None:
            _drop(child, path[1:])


def without_newer_fields(obj: dict[str, Any], version: str) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    for path, since in NEWER_FIELDS.get(obj["kind"], []):
        if tuple(map(int, version.split("."))) < tuple(map(int, since.split("."))):
            _drop(obj, path)
    return obj


@pytest.mark.parametrize("case", [c for c in CASES if not Case(c).failing])
def test_golden_output_is_valid_kubernetes(case: str) -> None:
    """Every expected object passes the strict schema of its kind, for the oldest and newest version."""
    from mpigen.checks.kube.validator import validate_object
    from mpigen.checks.kube.versions import DEFAULT_KUBE_VERSION
    from mpigen.targets import all_kinds

    objects = [obj for obj in load_all((GOLDEN / case / "expected.yaml").read_text()) if obj]
    assert objects
    # Other Kubeflow kinds and other projects' MPIJobs pass through; Kubernetes ships no schema for them.
    from mpigen.inputs import foreign_mpijob

    objects = [
        obj
        for obj in objects
        if not obj["apiVersion"].startswith("kubeflow.org/") and not foreign_mpijob(obj)
    ]
    # --gang-scheduler kubernetes is refused below 1.37 (scheduling.k8s.io/v1beta1 is served from 1.37 on).
    native_gang = any(obj["apiVersion"] == "scheduling.k8s.io/v1beta1" for obj in objects)
    for version in (DEFAULT_KUBE_VERSION,) if native_gang else ("1.25", DEFAULT_KUBE_VERSION):
        problems = [
            f"{obj['kind']}/{obj['metadata']['name']}: {issue.text()}"
            for obj in objects
            for issue in validate_object(without_newer_fields(obj, version), version, all_kinds())
        ]
        assert problems == [], f"Kubernetes {version}"
