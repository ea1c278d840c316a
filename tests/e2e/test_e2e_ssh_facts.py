"""What each launcher needs in SSH pods: take one piece of the env or DNS away and watch it fail.

These pin the facts tests/e2e/README.md records, so a compiler that renders the v2beta1 launcher
knows why each variable and the workers' DNS search entry are there.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from e2e_harness import StartCluster, v2beta1
from e2e_harness.mpi import Implementation

pytestmark = pytest.mark.e2e

TIMEOUT = 60
Named = Callable[[str], Implementation]


def test_open_mpi_5_ignores_the_operators_orte_variables_and_runs_on_the_launcher(
    implementation_named: Named, start_cluster: StartCluster
) -> None:
    """kubeflow/mpi-operator#842: with only OMPI_MCA_orte_*, mpirun 5 never reads the hostfile."""
    impl = implementation_named("openmpi5")
    objects = v2beta1.objects(impl, "orte", ["mpirun", "-n", "2", "hostname"], slots=1)
    cluster = v2beta1.start(start_cluster, objects, impl)
    launcher = cluster.launcher()
    env = cluster.container_env(launcher.name, launcher.containers[0])
    for name in v2beta1.EXTRA_ENV["openmpi5"]:
        del env[name]
    assert "OMPI_MCA_orte_default_hostfile" in env
    user = cluster.user_of(launcher.containers[0])
    run = cluster.run(launcher.name, launcher.containers[0].argv, env, TIMEOUT, user=user)
    assert run.returncode == 0, run.describe()
    assert run.stdout.split() == ["orte-launcher", "orte-launcher"], run.describe()


def test_open_mpi_4_without_keep_fqdn_hostnames_cannot_resolve_the_short_names(
    implementation_named: Named, start_cluster: StartCluster
) -> None:
    """ORTE cuts `<pod>.<job>.<ns>.svc` to `<pod>` before ssh, which cluster DNS does not resolve."""
    impl = implementation_named("openmpi4")
    objects = v2beta1.objects(impl, "fqdn", ["mpirun", "hostname"], slots=1)
    cluster = v2beta1.start(start_cluster, objects, impl)
    launcher = cluster.launcher()
    env = cluster.container_env(launcher.name, launcher.containers[0])
    del env["OMPI_MCA_orte_keep_fqdn_hostnames"]
    user = cluster.user_of(launcher.containers[0])
    run = cluster.run(launcher.name, launcher.containers[0].argv, env, TIMEOUT, user=user)
    assert run.returncode != 0, run.describe()
    # ORTE gives up at the first daemon that fails, so the other ssh may be killed before it complains
    assert re.search(r"Could not resolve hostname fqdn-worker-[01]:", run.stderr), run.describe()


@pytest.mark.parametrize("name", ["mpich", "intel"])
def test_hydra_proxies_need_the_workers_dns_search_entry_to_reach_the_launcher(
    name: str,
    implementation_named: Named,
    program_for: Callable[[Implementation], Path],
    start_cluster: StartCluster,
) -> None:
    """Hydra's proxies call back to the launcher by its bare hostname: newWorker's search entry
    `<job>.<ns>.svc.cluster.local` is what resolves it (Open MPI's daemons dial an IP and don't care)."""
    impl = implementation_named(name)
    objects = v2beta1.objects(impl, "nosearch", ["mpirun", str(program_for(impl))], worker_search=False)
    run = v2beta1.start(start_cluster, objects, impl).run_launcher(TIMEOUT)
    assert run.returncode != 0, run.describe()
    if name == "mpich":
        assert "unable to get host address for nosearch-launcher" in run.stderr, run.describe()
    else:
        assert "Unable to run bstrap_proxy on nosearch-worker-" in run.stderr, run.describe()
