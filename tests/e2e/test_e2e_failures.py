"""Failures through the rendered manifests: they end fast, non-zero and readable; hangs end by timeout.

A worker pod that does not exist, a rank that exits non-zero and a command that hangs: each must fail
the launcher (or the test, by the harness's per-run timeout), never block the suite.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from e2e_harness import RunTimeout, StartCluster, jobs, netns
from e2e_harness.openmpi import RUN_AS_ROOT_ENV

pytestmark = pytest.mark.e2e

Render = Callable[..., list[dict[str, Any]]]
FAST = 20  # seconds: what "fails fast" means here; each run's timeout is larger so a hang is reported


def test_missing_worker_fails_mpirun_fast_and_names_the_pod(
    mpi: str, render: Render, start_cluster: StartCluster
) -> None:
    """A worker gone (never started, deleted) when mpirun runs: kubectl's NotFound, then ORTE's error."""
    objects = render(jobs.v1alpha2("gone", ["mpirun", "hostname"], workers=2, slots=1))
    cluster = start_cluster(objects, absent=frozenset({"gone-worker-1"}))
    launcher = cluster.launcher()
    (delivery,) = [init for init in launcher.init_containers if init.name == "kubectl-delivery"]
    assert cluster.run_container(launcher.name, delivery, 20).returncode == 0  # skip wait-for-workers
    run = cluster.run_container(launcher.name, launcher.containers[0], 60, RUN_AS_ROOT_ENV)
    assert run.returncode != 0 and run.seconds < FAST, run.describe()
    assert 'Error from server (NotFound): pods "gone-worker-1" not found' in run.stderr
    assert "ORTE was unable to reliably start one or more daemons" in run.stderr


def test_missing_worker_times_out_the_wait_init_container(
    render: Render, start_cluster: StartCluster
) -> None:
    """With the launcher started before its workers, wait-for-workers gives up readably at its timeout."""
    objects = render(
        jobs.v1alpha2("late", ["mpirun", "hostname"], workers=2, slots=1), wait_timeout_seconds=1
    )
    cluster = start_cluster(objects, absent=frozenset({"late-worker-1"}))
    run = cluster.run_launcher(60, RUN_AS_ROOT_ENV)
    assert run.argv[:1] == ("/bin/sh",) and run.returncode == 1, run.describe()
    # the smallest timeout (1 s) ends at the wait loop's next poll
    assert re.search(r"timed out after \d+s; not Ready: 1/2 workers: late-worker-1\n", run.stderr), (
        run.describe()
    )


def test_a_rank_exiting_non_zero_fails_the_launcher(
    program: Path, render: Render, start_cluster: StartCluster
) -> None:
    objects = render(
        jobs.v1alpha2("crash", ["mpirun", str(program), "--fail-rank", "2:7"], workers=2, slots=2)
    )
    run = start_cluster(objects).run_launcher(60, RUN_AS_ROOT_ENV)
    assert run.returncode == 7 and run.seconds < FAST, run.describe()
    assert "mpirun detected that one or more processes exited with non-zero status" in run.stderr
    assert "Exit code:    7" in run.stderr


def test_a_hanging_run_is_killed_at_its_timeout_with_everything_it_started(
    mpi: str, render: Render, start_cluster: StartCluster
) -> None:
    objects = render(jobs.v1alpha2("hang", ["mpirun", "sleep", "600"], workers=2, slots=1))
    cluster = start_cluster(objects)
    started = time.monotonic()
    with pytest.raises(RunTimeout, match="timed out after 3s") as caught:
        cluster.run_launcher(3, RUN_AS_ROOT_ENV)
    assert time.monotonic() - started < FAST
    assert caught.value.run.returncode != 0
    # Only the pods' holders and worker containers are left: no mpirun, orted or sleep 600.
    left = netns.pids_in(netns.netns_inodes(cluster.netns.values()))
    commands = [Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode() for pid in left]
    assert not [c for c in commands if "orted" in c or "mpirun" in c or "600" in c], commands
