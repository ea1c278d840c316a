"""Golden cases: `golden/<case>/input.yaml` rendered by the real CLI, compared byte for byte.

A case holds `input.yaml`, optionally `args` (extra command-line arguments, one per line), and either
`expected.yaml` (stdout, exit 0; warnings, if any, in `warnings.txt`) or `errors.txt` (stderr, exit 1,
nothing on stdout). `pytest --update-golden` rewrites the expected files and then fails, so an update
run never passes.
"""

from __future__ import annotations

import copy
import difflib
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mpigen.cli import cli

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if p.is_dir()) if GOLDEN.is_dir() else []


def test_cases_exist() -> None:
    assert len(CASES) >= 10, f"no golden cases found under {GOLDEN}"
    for case in CASES:
        files = {p.name for p in (GOLDEN / case).iterdir()}
        assert "input.yaml" in files, f"{case}: no input.yaml"
        assert ("expected.yaml" in files) != ("errors.txt" in files), (
            f"{case}: needs exactly one of expected.yaml or errors.txt"
        )


def run_case(case: str) -> tuple[int, str, str]:
    directory = GOLDEN / case
    args_file = directory / "args"
    args = args_file.read_text().split("\n") if args_file.exists() else []
    runner = CliRunner()
    cwd = os.getcwd()
    os.chdir(directory)
    try:
        result = runner.invoke(cli, ["render", *[a for a in args if a], "input.yaml"], catch_exceptions=False)
    finally:
        os.chdir(cwd)
    return result.exit_code, result.stdout, result.stderr


def compare(path: Path, actual: str, update: bool) -> None:
    if update:
        if actual:
            path.write_text(actual)
        elif path.exists():
            path.unlink()
        return
    expected = path.read_text() if path.exists() else ""
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                actual.splitlines(keepends=True),
                f"{path} (expected)",
                f"{path} (actual)",
            )
        )
        pytest.fail(f"{diff}\nIf the change is right, update with: python -m pytest tests/test_golden.py --update-golden")


@pytest.mark.parametrize("case", CASES)
def test_golden(case: str, request: pytest.FixtureRequest) -> None:
    update = bool(request.config.getoption("--update-golden"))
    directory = GOLDEN / case
    code, stdout, stderr = run_case(case)
    if (directory / "errors.txt").exists():
        assert stdout == "", "an invalid input must print nothing on stdout"
        assert code == 1, f"exit code {code}, stderr:\n{stderr}"
        compare(directory / "errors.txt", stderr, update)
    else:
        assert code == 0, f"exit code {code}, stderr:\n{stderr}"
        compare(directory / "expected.yaml", stdout, update)
        compare(directory / "warnings.txt", stderr, update)
    if update:
        pytest.fail(f"golden files of {case} rewritten; review the diff and run again without --update-golden")


# Fields mpigen emits only for newer Kubernetes versions (--kube-version), by kind: (field path, first
# version). A case rendered for the newest version is checked against 1.25 without them, which is
# what `--kube-version 1.25` renders (pinned by golden/v2beta1-kube-version-1.28).
NEWER_FIELDS = {"Job": [(("spec", "podReplacementPolicy"), "1.29")]}


def without_newer_fields(obj: dict[str, Any], version: str) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    for path, since in NEWER_FIELDS.get(obj["kind"], []):
        if tuple(map(int, version.split("."))) < tuple(map(int, since.split("."))):
            parent = obj
            for key in path[:-1]:
                parent = parent.get(key) or {}
            parent.pop(path[-1], None)
    return obj


@pytest.mark.parametrize("case", [c for c in CASES if (GOLDEN / c / "expected.yaml").exists()])
def test_golden_output_is_valid_kubernetes(case: str) -> None:
    """Every expected object passes the strict schema of its kind, for the oldest and newest version."""
    import yaml

    from mpigen.kube.validator import validate_object
    from mpigen.kube.versions import DEFAULT_KUBE_VERSION

    objects = [obj for obj in yaml.safe_load_all((GOLDEN / case / "expected.yaml").read_text()) if obj]
    assert objects
    # Other Kubeflow kinds pass through; Kubernetes ships no schema for them.
    objects = [obj for obj in objects if not obj["apiVersion"].startswith("kubeflow.org/")]
    for version in ("1.25", DEFAULT_KUBE_VERSION):
        problems = [
            f"{obj['kind']}/{obj['metadata']['name']}: {issue.text()}"
            for obj in objects
            for issue in validate_object(without_newer_fields(obj, version), version)
        ]
        assert problems == [], f"Kubernetes {version}"
