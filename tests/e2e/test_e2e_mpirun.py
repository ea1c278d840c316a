"""Real mpirun through mpigen's manifests: every rank runs in the worker pod and slot the hostfile names.

Each job is rendered by mpigen and run as pods (namespaces); the launcher pod's init containers run
first (kubectl-delivery and wait-for-workers, each its own command), then its container's command with exactly
the env of the rendered Job plus `RUN_AS_ROOT_ENV` (the harness runs as root).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import pythons
import yaml
from e2e_harness import StartCluster, jobs, one, parse_hostfile
from e2e_harness.openmpi import RUN_AS_ROOT_ENV
from e2e_harness.ranks import check_allreduce, check_hostnames

pytestmark = pytest.mark.e2e

TIMEOUT = 60
Render = Callable[..., list[dict[str, Any]]]
JobFactory = Callable[[str, Sequence[str]], dict[str, Any]]

JOBS: dict[str, tuple[JobFactory, list[tuple[int, int]]]] = {
    # name: (job, [(worker index, slots), ...] the hostfile must hold)
    "v1alpha1-gpus": (
        lambda name, cmd: jobs.v1alpha1_gpus(name, cmd, gpus=4, gpus_per_node=2),
        [(0, 2), (1, 2)],
    ),
    "v1alpha1-replicas": (
        lambda name, cmd: jobs.v1alpha1_replicas(name, cmd, replicas=3, cpus="2"),
        [(0, 2), (1, 2), (2, 2)],
    ),
    "v1alpha2": (lambda name, cmd: jobs.v1alpha2(name, cmd, workers=3, slots=2), [(0, 2), (1, 2), (2, 2)]),
    "v1": (lambda name, cmd: jobs.v1(name, cmd, workers=2, slots=2), [(0, 2), (1, 2)]),
}


def hostfile_of(objects: list[dict[str, Any]]) -> list[tuple[str, int]]:
    return parse_hostfile(one(objects, "ConfigMap")["data"]["hostfile"])


@pytest.mark.parametrize("case", sorted(JOBS))
def test_mpirun_hostname_runs_once_per_slot_on_every_worker(
    case: str, mpi: str, render: Render, start_cluster: StartCluster
) -> None:
    make, expected = JOBS[case]
    objects = render(make(case, ["mpirun", "hostname"]))
    hostfile = hostfile_of(objects)
    assert hostfile == [(f"{case}-worker-{i}", slots) for i, slots in expected]
    cluster = start_cluster(objects)
    check_hostnames(cluster.run_launcher(TIMEOUT, RUN_AS_ROOT_ENV), hostfile)


@pytest.mark.parametrize("case", sorted(JOBS))
def test_allreduce_ranks_sit_in_the_hostfile_slots_and_sum_right(
    case: str, program: Path, render: Render, start_cluster: StartCluster
) -> None:
    make, _ = JOBS[case]
    objects = render(make(case, ["mpirun", str(program)]))
    cluster = start_cluster(objects)
    run = cluster.run_launcher(TIMEOUT, RUN_AS_ROOT_ENV)
    check_allreduce(run, hostfile_of(objects))


def test_the_yaml_that_mpigen_render_prints_runs_too(
    program: Path, tmp_path: Path, start_cluster: StartCluster
) -> None:
    """The CLI's YAML stream (what `kubectl apply -f -` would read), parsed back, runs the same way."""
    job = tmp_path / "job.yaml"
    job.write_text(json.dumps(jobs.v1alpha1_gpus("cli", ["mpirun", str(program)], gpus=4, gpus_per_node=2)))
    done = subprocess.run(
        [*pythons.mpigen_argv(), "render", str(job)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    objects = [doc for doc in yaml.safe_load_all(done.stdout) if doc]
    run = start_cluster(objects).run_launcher(TIMEOUT, RUN_AS_ROOT_ENV)
    check_allreduce(run, hostfile_of(objects))


def test_launcher_waits_for_workers_to_become_ready(
    program: Path, render: Render, start_cluster: StartCluster
) -> None:
    """The rendered wait-for-workers init container polls until every worker is Ready, then mpirun runs."""
    objects = render(jobs.v1alpha2("ready", ["mpirun", str(program)], workers=2, slots=1))
    cluster = start_cluster(objects)
    cluster.script_ready("ready-worker-0", ["NotFound", "True"])
    cluster.script_ready("ready-worker-1", ["False", "True"])
    run = cluster.run_launcher(TIMEOUT, RUN_AS_ROOT_ENV)
    check_allreduce(run, hostfile_of(objects))
    delivery, wait = cluster.init_runs
    assert delivery.returncode == 0 and wait.returncode == 0
    assert "waiting for 2/2 workers: ready-worker-0 ready-worker-1" in wait.stdout
    assert wait.stdout.rstrip().endswith("all 2 workers ready")


def test_v1_gpu_launcher_is_the_first_host_and_runs_its_ranks_itself(
    program: Path, render: Render, start_cluster: StartCluster
) -> None:
    """A kubeflow.org/v1 launcher that asks for a GPU is the hostfile's first host (training-operator
    isGPULauncher). mpigen gives the launcher Job's pod that host name as its hostname, so Open MPI
    starts the launcher's ranks itself: there is no pod `<job>-launcher` to kubectl exec into."""
    job = jobs.v1("gpu", ["mpirun", str(program)], workers=2, slots=1)
    launcher = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    launcher["resources"] = {"limits": {"nvidia.com/gpu": 1}}
    objects = render(job)
    hostfile = hostfile_of(objects)
    assert hostfile == [("gpu-launcher", 1), ("gpu-worker-0", 1), ("gpu-worker-1", 1)]
    run = start_cluster(objects).run_launcher(TIMEOUT, RUN_AS_ROOT_ENV)
    check_allreduce(run, hostfile)
