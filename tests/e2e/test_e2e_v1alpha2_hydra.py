"""kubeflow.org/v1alpha2 `mpiDistribution: MPICH` and `IntelMPI` through kubexec.sh (mpi-operator v0.3.0's
shape): Hydra's mpiexec in the launcher pod starts its proxies in the worker pods through kubexec.sh, which
it calls as it would call ssh (`kubexec.sh -x <pod> <command>`: the leading options are skipped), and reads
the `host:slots` hostfile from the launcher's env (`HYDRA_HOST_FILE` / `I_MPI_HYDRA_HOST_FILE`). The pods
resolve only their own names (no hosts file of the workers, which v0.3.0's kubectl-delivery wrote), so the
launcher's env also names the interface whose address the proxies dial back (`HYDRA_IFACE` /
`I_MPI_HYDRA_IFACE`), as docs/departures.md (v1alpha2, row 10) tells users to.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from e2e_harness import StartCluster, jobs, one, parse_hostfile
from e2e_harness.mpi import Implementation
from e2e_harness.ranks import check_allreduce

pytestmark = pytest.mark.e2e

TIMEOUT = 60
# implementation -> (mpiDistribution, the interface variable)
HYDRA = {"mpich": ("MPICH", "HYDRA_IFACE"), "intel": ("IntelMPI", "I_MPI_HYDRA_IFACE")}


@pytest.mark.parametrize("name", sorted(HYDRA))
def test_hydra_ranks_sit_in_the_hostfile_slots_through_kubexec(
    name: str,
    implementation_named: Callable[[str], Implementation],
    program_for: Callable[[Implementation], Any],
    render: Callable[..., list[dict[str, Any]]],
    start_cluster: StartCluster,
) -> None:
    impl = implementation_named(name)
    distribution, iface = HYDRA[name]
    job = jobs.v1alpha2(f"hydra-{name}", ["mpiexec", str(program_for(impl))], workers=2, slots=2)
    job["spec"]["mpiDistribution"] = distribution
    launcher = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    launcher["env"] = [{"name": iface, "value": "eth0"}]
    objects = render(job)
    hostfile = parse_hostfile(one(objects, "ConfigMap")["data"]["hostfile"])
    assert hostfile == [(f"hydra-{name}-worker-{i}", 2) for i in range(2)]
    cluster = start_cluster(objects, image=impl.image())
    check_allreduce(cluster.run_launcher(TIMEOUT, {}), hostfile)
