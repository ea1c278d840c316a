"""Facts about Open MPI 4.1 under Kubernetes that the rendered manifests depend on, shown by counterexample.

Each test renders a job with mpigen, changes one thing the way a plausible mistake would (and asserts
the change took), and shows what Open MPI does then; the unchanged manifests pass in the other e2e
tests. These pin why kubexec.sh is written as it is and what a pod must give Open MPI.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from e2e_harness import RunTimeout, StartCluster, jobs, one, parse_hostfile
from e2e_harness.openmpi import RUN_AS_ROOT_ENV
from e2e_harness.ranks import check_allreduce, parse_ranks

pytestmark = pytest.mark.e2e

Render = Callable[..., list[dict[str, Any]]]
SH_C = '-- /bin/sh -c "$*"'


def small_job(render: Render, name: str, command: list[str], workers: int = 2) -> list[dict[str, Any]]:
    return render(jobs.v1alpha2(name, command, workers=workers, slots=2))


def hostfile_of(objects: list[dict[str, Any]]) -> list[tuple[str, int]]:
    return parse_hostfile(one(objects, "ConfigMap")["data"]["hostfile"])


def test_kubexec_must_hand_the_orted_command_to_sh_c(
    mpi: str, render: Render, start_cluster: StartCluster
) -> None:
    """Open MPI passes ` orted -mca ess "env" ... "JOBID.0;tcp://IP:PORT"` as many arguments with quotes
    inside, meant for a remote shell; exec'd as they are (`-- "$@"`), they are no command."""
    # One worker: mpirun starts its daemons at once, and two kubexec.sh traces would interleave on stderr.
    objects = small_job(render, "args", ["mpirun", "hostname"], workers=1)
    data = one(objects, "ConfigMap")["data"]
    assert SH_C in data["kubexec.sh"]
    data["kubexec.sh"] = data["kubexec.sh"].replace(SH_C, '-- "$@"')
    run = start_cluster(objects).run_launcher(60, RUN_AS_ROOT_ENV)
    assert run.returncode != 0, run.describe()
    # kubexec.sh's `set -x` trace shows the words as they arrived: a leading-space " orted", quotes kept.
    # (The worker's `env: ' orted': No such file or directory` usually follows, unless mpirun gives up
    # before reading it.)
    assert "--  orted " in run.stderr and ' -mca ess "env" ' in run.stderr, run.describe()
    assert ";tcp://" in run.stderr and "ORTE" in run.stderr, run.describe()


def test_root_needs_allow_run_as_root(mpi: str, render: Render, start_cluster: StartCluster) -> None:
    objects = small_job(render, "root", ["mpirun", "hostname"])
    run = start_cluster(objects).run_launcher(60)  # the rendered env only
    assert run.returncode == 1
    assert "mpirun has detected an attempt to run as root" in run.stderr


@pytest.mark.parametrize(
    ("shared", "crashes"),
    [
        ({"shared_hostname": True, "shared_shm": True}, True),
        ({"shared_hostname": True}, False),
        ({"shared_shm": True}, False),
    ],
    ids=["hostname+shm", "hostname", "shm"],
)
def test_pods_sharing_hostname_and_dev_shm_crash_the_shared_memory_transport(
    shared: dict[str, bool], crashes: bool, program: Path, render: Render, start_cluster: StartCluster
) -> None:
    """vader names its /dev/shm segments after the hostname: two pods alike in both map each other's.

    The ranks then write into each other's queues: most runs die in vader with a segmentation fault,
    some spin forever on a queue no peer reads. Either way no rank reports its sum."""
    objects = small_job(render, "shm", ["mpirun", str(program)])
    cluster = start_cluster(objects, **shared)
    if not crashes:
        run = cluster.run_launcher(60, RUN_AS_ROOT_ENV)
        assert run.returncode == 0, run.describe()
        n = sum(slots for _, slots in hostfile_of(objects))
        assert [(r.rank, r.sum) for r in parse_ranks(run.stdout)] == [(i, n * (n + 1) // 2) for i in range(n)]
        return
    try:
        run = cluster.run_launcher(60, RUN_AS_ROOT_ENV)
    except RunTimeout as hung:
        assert "orted" in hung.run.stderr, hung.run.describe()  # the daemons started: it hung in the ranks
        assert parse_ranks(hung.run.stdout) == [], hung.run.describe()
    else:
        assert run.returncode != 0, run.describe()
        assert "mca_btl_vader" in run.stderr and "Segmentation fault" in run.stderr, run.describe()


def test_an_unroutable_second_interface_needs_btl_tcp_if_include(
    program: Path, render: Render, start_cluster: StartCluster
) -> None:
    """With a second interface whose subnet reaches nowhere, the TCP BTL tries it and the job hangs;
    OMPI_MCA_btl_tcp_if_include=eth0 (or the pod CIDR) fixes it. OOB needed no setting here."""
    objects = small_job(render, "twonic", ["mpirun", str(program)])
    cluster = start_cluster(objects, unroutable_interface=True)
    with pytest.raises(RunTimeout) as hung:
        cluster.run_launcher(8, RUN_AS_ROOT_ENV)
    assert "Open MPI failed to TCP connect to a peer MPI process" in hung.value.run.stderr
    fixed = cluster.run_launcher(60, {**RUN_AS_ROOT_ENV, "OMPI_MCA_btl_tcp_if_include": "eth0"})
    check_allreduce(fixed, hostfile_of(objects))


def test_open_mpi_needs_no_name_resolution(
    program: Path, render: Render, start_cluster: StartCluster
) -> None:
    """Not even the pod's own name in /etc/hosts: kubexec.sh finds pods by name, the daemons dial IPs."""
    objects = small_job(render, "nodns", ["mpirun", str(program)])
    run = start_cluster(objects, hosts="none").run_launcher(60, RUN_AS_ROOT_ENV)
    check_allreduce(run, hostfile_of(objects))
