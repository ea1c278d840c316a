"""The code passes the linters the project is held to: `ruff check`, `ruff format --check` and
`mypy --strict` on the package and its developer tools (pyproject.toml configures both; the test extra installs them with the type
stubs mypy needs, so `python -m pytest` runs them wherever the suite runs).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHECKED = ["mpigen", "tools"]


def _run(tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec(tool) is None:
        pytest.skip(f"{tool} is not installed: pip install -e '.[test]' brings it")
    return subprocess.run(
        [sys.executable, "-m", tool, *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_ruff_check() -> None:
    done = _run("ruff", "check", "--no-cache", *CHECKED)
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format() -> None:
    """One layout for all of the code, tests included: `ruff format` changes nothing."""
    done = _run("ruff", "format", "--check", "--no-cache", *CHECKED, "tests")
    assert done.returncode == 0, "run `ruff format mpigen tools tests`:\n" + done.stdout + done.stderr


@pytest.mark.slow  # a cold mypy run reads the package and its libraries' stubs: tens of seconds
def test_mypy_strict() -> None:
    done = _run("mypy", "--strict", *CHECKED)
    assert done.returncode == 0, done.stdout + done.stderr
