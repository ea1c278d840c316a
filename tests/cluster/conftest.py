"""Fixtures for the tests against a real Kubernetes control plane (marker `cluster`; see README.md here).

`cluster` starts etcd and kube-apiserver built by gotools.py (or, with MPIGEN_CLUSTER=existing, uses the
cluster of $KUBECONFIG) and installs the PodGroup CRDs built from mpigen's schemas. `workloads` starts a
second control plane of the suite's own, with kube-controller-manager, kube-scheduler and kwok fake
nodes: its controllers never meet the hundreds of objects the apply tests leave in `cluster`.
`volcano_cluster` is a third one with Volcano instead of kube-scheduler (volcano.py).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import controlplane
import crds
import gotools
import jobset
import volcano

from tools import find_kubectl


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.cluster)


def _existing() -> bool:
    return os.environ.get("MPIGEN_CLUSTER", "") == "existing"


def _install_crds(cluster: controlplane.Cluster) -> None:
    _install_volcano_job_crd(cluster)
    for crd in crds.podgroup_crds() + crds.passed_through_crds():
        name = crd["metadata"]["name"]
        present = cluster.kubectl("get", "crd", name, "--ignore-not-found", "-o", "name").stdout.strip()
        if present and not cluster.owned:
            continue  # an existing cluster's own Volcano or scheduler-plugins CRD: leave it alone
        cluster.kubectl("apply", "-f", "-", input=json.dumps(crd))
        cluster.kubectl("wait", "--for=condition=Established", f"crd/{name}", "--timeout=60s")
    # The JobSet CRD of the pinned module, for the jobset target's golden cases (no controller here: the
    # JobSet tests have one of their own). Server-side: too large for a client-side apply's annotation.
    missing = [
        crd
        for crd in jobset.crds(gotools.require_module("jobset"))
        if not cluster.kubectl(
            "get", "crd", crd["metadata"]["name"], "--ignore-not-found", "-o", "name"
        ).stdout.strip()
    ]
    jobset.create_all(cluster, missing)


def _install_volcano_job_crd(cluster: controlplane.Cluster) -> None:
    """Volcano v1.14.1's own Job CRD, from the module (the volcano target's output), beside mpigen's
    PodGroup CRDs; server-side, as its 210 kB would pass client-side apply's annotation limit."""
    gotools.require_module(volcano.TOOL)
    (crd,) = [crd for crd in volcano.crds() if crd["metadata"]["name"] == "jobs.batch.volcano.sh"]
    present = cluster.kubectl(
        "get", "crd", crd["metadata"]["name"], "--ignore-not-found", "-o", "name"
    ).stdout.strip()
    if present and not cluster.owned:
        return  # an existing cluster's own Volcano
    cluster.kubectl(
        "apply", "--server-side", "--field-manager=mpigen-tests", "-f", "-", input=json.dumps(crd)
    )

    # `kubectl wait` fails on a CRD whose status has no conditions yet (just after the apply).
    def established() -> bool:
        conditions = cluster.get("crd", crd["metadata"]["name"]).get("status", {}).get("conditions") or []
        return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

    cluster.wait_for("the Volcano Job CRD Established", established)


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[controlplane.Cluster]:
    kubectl = find_kubectl()
    if _existing():
        config = os.environ.get("KUBECONFIG") or str(Path.home() / ".kube" / "config")
        existing = controlplane.Cluster(
            kubectl_path=kubectl,
            admin_kubeconfig=Path(config.split(os.pathsep)[0]),
            workdir=tmp_path_factory.mktemp("cluster"),
            owned=False,
        )
        _install_crds(existing)
        yield existing
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        # A terminated test run (CI timeout, `kill`) unwinds like Ctrl-C, so the control plane's teardown
        # runs; the processes die with pytest in any case (PR_SET_PDEATHSIG), this also removes the files.
        signal.signal(signal.SIGTERM, signal.default_int_handler)
    started = _own_control_plane(kubectl)
    try:
        yield started
    finally:
        started.stop()


def _own_control_plane(kubectl: str) -> controlplane.Cluster:
    if not shutil.which("openssl"):
        pytest.skip("the control plane's certificates are made with openssl, which is not on PATH")
    binaries = {name: gotools.require(name) for name in ("etcd", "kube-apiserver")}
    started = controlplane.start_control_plane(binaries, kubectl)
    try:
        _install_crds(started)
    except BaseException:
        started.stop()
        raise
    return started


@pytest.fixture(scope="session")
def workloads() -> Iterator[controlplane.Cluster]:
    """A control plane of its own with controllers, a scheduler and kwok fake nodes (only where the suite
    runs its own control planes): `cluster` keeps every apply case's objects, which controllers started
    there would reconcile, or the namespace controller delete, for minutes. Independent of `cluster`, so
    a pytest-xdist worker running only these tests starts only this one."""
    if _existing():
        pytest.skip(
            "job lifecycle tests need the suite's own control plane with kwok fake nodes "
            "(unset MPIGEN_CLUSTER=existing)"
        )
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, signal.default_int_handler)  # as in `cluster`: teardown runs on TERM
    started = _own_control_plane(find_kubectl())
    try:
        binaries = {
            name: gotools.require(name) for name in ("kube-controller-manager", "kube-scheduler", "kwok")
        }
        controlplane.start_workloads(started, binaries)
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="session")
def jobset_cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[controlplane.Cluster]:
    """A control plane of its own with controllers, scheduler, kwok fake nodes and the JobSet controller
    with its webhooks (tests/cluster/jobset.py), and Kueue too when a selected test asks for
    `kueue_cluster` (started together; built only then). The processes' logs are copied under pytest's
    temporary directory at the end (`jobset-cluster-logs*`) and their ends shown with a failing test's
    report."""
    if _existing():
        pytest.skip(
            "JobSet tests need the suite's own control plane with kwok fake nodes "
            "(unset MPIGEN_CLUSTER=existing)"
        )
    if not shutil.which("openssl"):
        pytest.skip("the control plane's certificates are made with openssl, which is not on PATH")
    with_kueue = any("kueue_cluster" in getattr(item, "fixturenames", ()) for item in request.session.items)
    started = jobset.start(find_kubectl(), kueue=with_kueue)
    try:
        yield started
    finally:
        logs = started.workdir / "logs"
        if logs.is_dir():
            shutil.copytree(logs, tmp_path_factory.mktemp("jobset-cluster-logs"), dirs_exist_ok=True)
        started.stop()


@pytest.fixture(scope="session")
def kueue_cluster(jobset_cluster: controlplane.Cluster) -> controlplane.Cluster:
    """`jobset_cluster` with Kueue (batch/Job and JobSet integrations, a ResourceFlavor); each test makes
    its own queues with `jobset.queue(cluster, namespace, cpu, memory)`. Stops with it."""
    if "kueue" not in jobset_cluster.processes:
        jobset.add_kueue(jobset_cluster)  # asked for at run time (getfixturevalue), not at collection
    return jobset_cluster


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    funcargs = getattr(item, "funcargs", {})
    started = funcargs.get("jobset_cluster") or funcargs.get("kueue_cluster")
    if report.failed and isinstance(started, controlplane.Cluster):
        report.sections.append(("controllers' logs (last lines)", started.logs_tail(25)))
    return report


@pytest.fixture
def namespace(cluster: controlplane.Cluster, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace for one test; deleted afterwards on an existing cluster (the suite's own
    cluster is thrown away whole)."""
    name = cluster.create_namespace("t-" + request.node.name.lower().replace("_", "-")[:40].strip("-[]"))
    yield name
    if not cluster.owned:
        cluster.kubectl("delete", "namespace", name, "--wait=false", check=False)


@pytest.fixture(scope="session")
def volcano_cluster() -> Iterator[controlplane.Cluster]:
    """A control plane of its own with Volcano v1.14's CRDs, vc-controller-manager, vc-scheduler (gang),
    kube-controller-manager's garbage collector and three kwok nodes, and the Open queues `default` and
    `test`; no kube-scheduler, so only Volcano binds pods."""
    if _existing():
        pytest.skip(
            "the Volcano tests need the suite's own control plane with kwok fake nodes "
            "(unset MPIGEN_CLUSTER=existing)"
        )
    kubectl = find_kubectl()
    if not controlplane.shutil.which("openssl"):
        pytest.skip("the control plane's certificates are made with openssl, which is not on PATH")
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, signal.default_int_handler)  # as in `cluster`: teardown runs on TERM
    binaries = {
        name: gotools.require(name)
        for name in ("etcd", "kube-apiserver", "kube-controller-manager", "kwok", *volcano.BINARIES)
    }
    started = controlplane.start_control_plane(binaries, kubectl)
    try:
        volcano.start(started, binaries)
        yield started
    finally:
        started.stop()
