"""The launcher's kubectl-delivery init container runs what it really runs: mpigen's command delivers
kubectl and mpirun starts; the same launcher without that command runs the default image's own
(mpi-operator's cmd/kubectl-delivery Dockerfile: copy kubectl, then the kubectl-delivery program, built from
the Go module github.com/kubeflow/mpi-operator v0.3.0), which exits with a fatal error, so the launcher
never starts. That was mpigen's v1alpha1 and v1alpha2 launcher before the command (issue #39). Here the
program stops at its client configuration (the harness has no API server); in a cluster its next step,
opening /etc/mpi/hostfile (not mounted in that container), is fatal the same way, and with a hostfile its
watch on the namespace's pods is forbidden by the launcher's Role."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

import pytest
from e2e_harness import HarnessError, StartCluster, jobs, plan_pods
from e2e_harness.openmpi import RUN_AS_ROOT_ENV
from e2e_harness.published import argv
from e2e_harness.ranks import check_hostnames

pytestmark = pytest.mark.e2e

TIMEOUT = 60
Render = Callable[..., list[dict[str, Any]]]
# klog's fatal line: `F<mmdd> <time> <pid> <file>:<line>] <message>`.
KLOG_FATAL = re.compile(r"^F\d{4} [\d:.]+ +\d+ \S+:\d+\] ", re.MULTILINE)


def delivery(objects: list[dict[str, Any]]) -> dict[str, Any]:
    """The launcher Job's kubectl-delivery init container (the object itself, to edit)."""
    (job,) = [o for o in objects if o["kind"] == "Job" and o["metadata"]["name"] == "kd-launcher"]
    (init,) = [
        c for c in job["spec"]["template"]["spec"]["initContainers"] if c["name"] == "kubectl-delivery"
    ]
    return init


@pytest.mark.parametrize(
    "make",
    [
        lambda: jobs.v1alpha1_replicas("kd", ["mpirun", "hostname"], replicas=2, cpus="1"),
        lambda: jobs.v1alpha2("kd", ["mpirun", "hostname"], workers=2, slots=1),
        lambda: jobs.v1("kd", ["mpirun", "hostname"], workers=2, slots=1),
    ],
    ids=["v1alpha1", "v1alpha2", "v1"],
)
def test_the_rendered_delivery_copies_kubectl_and_mpirun_runs(
    make: Callable[[], dict[str, Any]], mpi: str, render: Render, start_cluster: StartCluster
) -> None:
    objects = render(make())
    cluster = start_cluster(objects)
    done = cluster.run_launcher(TIMEOUT, RUN_AS_ROOT_ENV)
    delivered = cluster.init_runs[0]
    assert delivered.argv[-3:] == ("cp", "/bin/kubectl", "/opt/kube/kubectl"), delivered.describe()
    assert (delivered.returncode, delivered.stdout, delivered.stderr) == (0, "", "")
    check_hostnames(done, [("kd-worker-0", 1), ("kd-worker-1", 1)])


def test_without_a_command_the_default_image_runs_its_own_program_and_the_launcher_never_starts(
    mpi: str, render: Render, start_cluster: StartCluster
) -> None:
    objects = render(jobs.v1alpha2("kd", ["mpirun", "hostname"], workers=2, slots=1))
    assert delivery(objects)["image"] == "mpioperator/kubectl-delivery:latest"
    old = copy.deepcopy(objects)
    del delivery(old)["command"]  # what mpigen rendered before issue #39
    cluster = start_cluster(old)
    done = cluster.run_launcher(TIMEOUT, RUN_AS_ROOT_ENV)
    assert done is cluster.init_runs[0] and len(cluster.init_runs) == 1  # mpirun never ran
    assert done.argv[-3:] == (
        "/bin/sh",
        "-c",
        "cp /bin/kubectl /opt/kube/kubectl; /bin/kubectl-delivery -alsologtostderr",
    )
    # The program itself ran (its klog start lines) and died with a fatal error.
    assert done.returncode == 255, done.describe()
    assert "Scoping operator to namespace" in done.stderr and KLOG_FATAL.search(done.stderr), done.describe()


def test_a_container_without_a_command_whose_image_is_unknown_is_refused_not_emulated(
    render: Render, namespaces: None
) -> None:
    objects = render(jobs.v1alpha2("kd", ["mpirun", "hostname"], workers=1, slots=1))
    init_spec = delivery(objects)
    del init_spec["command"]
    init_spec["image"] = "registry.example/kubectl-delivery:v9"
    pod = next(p for p in plan_pods(objects) if p.role == "launcher")
    (init,) = [c for c in pod.init_containers if c.name == "kubectl-delivery"]
    with pytest.raises(HarnessError, match=r"registry\.example/kubectl-delivery:v9.*published\.py"):
        argv(init)
