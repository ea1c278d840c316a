"""End-to-end fixtures: real Open MPI through mpigen's rendered manifests, pods as Linux namespaces.

Every test module here sets `pytestmark = pytest.mark.e2e` (`pytest -m "not e2e"` leaves them out).
They need root, `ip netns`, `unshare`/`nsenter` and Open MPI; Open MPI is installed with apt-get when
missing (once per machine, under a lock); without root or namespaces the tests skip and say why.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from e2e_harness import Cluster, ClusterOptions, StartCluster, netns, openmpi, plan_pods
from e2e_harness import mpi as implementations
from e2e_harness.cluster import PREFIX, WORKDIR_BASE

Objects = list[dict[str, Any]]


@pytest.fixture(scope="session")
def namespaces() -> None:
    """Skip unless this machine can run pods as namespaces (root, ip netns, unshare, nsenter)."""
    reason = openmpi.missing_prerequisite()
    if reason:
        pytest.skip(reason)
    netns.remove_stale(PREFIX, WORKDIR_BASE)


@pytest.fixture(scope="session")
def mpi(namespaces: None) -> str:
    """Open MPI is installed (installing it if missing and possible); its version line."""
    reason = openmpi.ensure_openmpi()
    if reason:
        pytest.skip(reason)
    return openmpi.openmpi_version()


@pytest.fixture(scope="session")
def program(mpi: str) -> Iterator[Path]:
    """allreduce.c built with mpicc, in a directory every pod sees (pods get their own /tmp)."""
    build = Path(tempfile.mkdtemp(prefix="mpigen-e2e-build-", dir="/var/tmp"))
    build.chmod(0o755)
    try:
        yield openmpi.build_program(build)
    finally:
        shutil.rmtree(build, ignore_errors=True)


@pytest.fixture(scope="session")
def build_dir() -> Iterator[Path]:
    """A directory every pod sees (pods get their own /tmp) for programs built by the tests."""
    build = Path(tempfile.mkdtemp(prefix="mpigen-e2e-build-", dir="/var/tmp"))
    build.chmod(0o755)
    try:
        yield build
    finally:
        shutil.rmtree(build, ignore_errors=True)


_IMPLEMENTATIONS: dict[str, tuple[implementations.Implementation | None, str | None]] = {}


@pytest.fixture(scope="session")
def implementation_named(namespaces: None) -> Callable[[str], implementations.Implementation]:
    """`implementation_named(name)`: that MPI (with sshd), installed once per session, or skip."""

    def get(name: str) -> implementations.Implementation:
        if name not in _IMPLEMENTATIONS:
            _IMPLEMENTATIONS[name] = implementations.ensure(name)
        impl, reason = _IMPLEMENTATIONS[name]
        if impl is None:
            pytest.skip(reason or f"{name} is not available")
        return impl

    return get


@pytest.fixture(params=implementations.NAMES)
def implementation(
    request: pytest.FixtureRequest, implementation_named: Callable[[str], implementations.Implementation]
) -> implementations.Implementation:
    """Each MPI implementation the v2beta1 API names (Open MPI 4 and 5, MPICH, Intel MPI)."""
    return implementation_named(request.param)


_PROGRAMS: dict[str, Path] = {}


@pytest.fixture(scope="session")
def program_for(build_dir: Path) -> Callable[[implementations.Implementation], Path]:
    """`program_for(impl)`: allreduce.c built with that implementation's mpicc (once per session)."""

    def build(impl: implementations.Implementation) -> Path:
        reason = implementations.have_compiler()
        if reason:
            pytest.skip(reason)
        if impl.name not in _PROGRAMS:
            _PROGRAMS[impl.name] = impl.build_program(build_dir)
        return _PROGRAMS[impl.name]

    return build


@pytest.fixture()
def mpi_program(
    implementation: implementations.Implementation,
    program_for: Callable[[implementations.Implementation], Path],
) -> Path:
    """allreduce.c built with the implementation's mpicc."""
    return program_for(implementation)


@pytest.fixture()
def render() -> Callable[..., Objects]:
    """`render(job, **options)`: mpigen's output for one MPIJob, as the tests' only source of manifests."""
    import mpigen

    def run(job: dict[str, Any], **options: Any) -> Objects:
        return mpigen.compile(job, mpigen.Options(**options))

    return run


@pytest.fixture()
def start_cluster(namespaces: None) -> Iterator[StartCluster]:
    """`start_cluster(objects, **ClusterOptions)`: the job's pods running; all stopped after the test."""
    with ExitStack() as stack:

        def start(objects: Sequence[dict[str, Any]], **options: Any) -> Cluster:
            cluster = Cluster(plan_pods(objects), ClusterOptions(**options))
            stack.enter_context(cluster)
            return cluster

        yield start
