"""Large jobs: more than 64 workers, where Open MPI 4.1 starts its daemons as a tree by default.

With the default `routed=radix` (`routed_radix=64`), mpirun launches only the daemons that are its
direct children in the routing tree and each of those launches the rest through the rsh agent. Here
that agent is kubexec.sh, and a worker pod has kubexec.sh but no kubectl (only the launcher gets the
kubectl-delivery volume), so every daemon beyond the 64th cannot start: `/opt/kube/kubectl: not found`.
`OMPI_MCA_plm_rsh_no_tree_spawn=1` makes mpirun launch every daemon itself; the launcher Job must
carry it (up to 64 workers the default works; 65 is the first size that fails).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from e2e_harness import Cluster, jobs, one, parse_hostfile, plan_pods
from e2e_harness.openmpi import RUN_AS_ROOT_ENV
from e2e_harness.ranks import check_hostnames

pytestmark = pytest.mark.e2e

WORKERS = 70
TIMEOUT = 90
FIX = {"OMPI_MCA_plm_rsh_no_tree_spawn": "1"}
Render = Callable[..., list[dict[str, Any]]]


@pytest.fixture(scope="module")
def large(mpi: str) -> Iterator[tuple[list[dict[str, Any]], Cluster]]:
    """A rendered 70-worker job (1 slot each, `mpirun hostname`) running as 71 pods, shared by the tests."""
    import mpigen

    objects = mpigen.compile(
        jobs.v1alpha2("big", ["mpirun", "hostname"], workers=WORKERS, slots=1), mpigen.Options()
    )
    with Cluster(plan_pods(objects)) as cluster:
        yield objects, cluster


def test_tree_spawn_fails_without_the_fix(large: tuple[list[dict[str, Any]], Cluster]) -> None:
    """The rendered launcher env minus the fix: daemons on workers call kubexec.sh and find no kubectl."""
    _, cluster = large
    launcher = cluster.launcher()
    env = cluster.container_env(launcher.name, launcher.containers[0])
    for name in FIX:
        env.pop(name, None)
    try:
        run = cluster.run(launcher.name, launcher.containers[0].argv, {**env, **RUN_AS_ROOT_ENV}, TIMEOUT)
    finally:
        cluster.reap()
    assert run.returncode != 0, run.describe()
    assert re.search(r"/etc/mpi/kubexec.sh: \d+: /opt/kube/kubectl: not found", run.stderr), run.describe()


def test_rendered_launcher_runs_70_workers(large: tuple[list[dict[str, Any]], Cluster]) -> None:
    """Exactly the rendered env (plus run-as-root): one `hostname` per worker pod."""
    objects, cluster = large
    env = cluster.launcher().containers[0].env_dict()
    hint = f"the launcher container's env must carry {FIX} (it has {env})"
    try:
        run = cluster.run_launcher(TIMEOUT, RUN_AS_ROOT_ENV)
    finally:
        cluster.reap()
    assert run.returncode == 0, f"{hint}\n{run.describe()}"
    check_hostnames(run, parse_hostfile(one(objects, "ConfigMap")["data"]["hostfile"]))
