"""Real mpirun through the volcano target's manifests (kubectl-exec transport): the pods are those Volcano's
controller makes of the Job's tasks (`<job>-worker-<i>`, `<job>-launcher-0`, hostname = pod name, the
svc plugin's subdomain), the launcher's wait-for-workers and kubexec.sh reach the workers by those names,
and every rank runs in the slot mpigen's hostfile gives it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from e2e_harness import StartCluster, jobs, one, parse_hostfile
from e2e_harness.openmpi import RUN_AS_ROOT_ENV
from e2e_harness.ranks import check_allreduce, check_hostnames

pytestmark = pytest.mark.e2e

TIMEOUT = 60
Render = Callable[..., list[dict[str, Any]]]

JOBS = {
    "v1alpha1": (lambda name, cmd: jobs.v1alpha1_replicas(name, cmd, replicas=3, cpus="2"), [2, 2, 2]),
    "v1alpha2": (lambda name, cmd: jobs.v1alpha2(name, cmd, workers=3, slots=2), [2, 2, 2]),
    "v1": (lambda name, cmd: jobs.v1(name, cmd, workers=2, slots=2), [2, 2]),
}


def volcano_objects(render: Render, job: dict[str, Any]) -> list[dict[str, Any]]:
    objects = render(job, target="volcano")
    assert [o["kind"] for o in objects if o["apiVersion"] == "batch.volcano.sh/v1alpha1"] == ["Job"]
    return objects


@pytest.mark.parametrize("case", sorted(JOBS))
def test_mpirun_hostname_runs_once_per_slot_on_every_volcano_worker(
    case: str, mpi: str, render: Render, start_cluster: StartCluster
) -> None:
    make, slots = JOBS[case]
    name = f"vc-{case}"
    objects = volcano_objects(render, make(name, ["mpirun", "hostname"]))
    hostfile = parse_hostfile(one(objects, "ConfigMap")["data"]["hostfile"])
    assert hostfile == [(f"{name}-worker-{i}", n) for i, n in enumerate(slots)]
    cluster = start_cluster(objects)
    check_hostnames(cluster.run_launcher(TIMEOUT, RUN_AS_ROOT_ENV), hostfile)


@pytest.mark.parametrize("case", sorted(JOBS))
def test_allreduce_over_volcano_pod_names(
    case: str, program: Path, render: Render, start_cluster: StartCluster
) -> None:
    make, _ = JOBS[case]
    objects = volcano_objects(render, make(f"vc-{case}", ["mpirun", str(program)]))
    cluster = start_cluster(objects)
    check_allreduce(
        cluster.run_launcher(TIMEOUT, RUN_AS_ROOT_ENV),
        parse_hostfile(one(objects, "ConfigMap")["data"]["hostfile"]),
    )
