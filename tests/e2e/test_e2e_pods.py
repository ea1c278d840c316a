"""The harness itself: rendered pods become isolated namespaces, and the fake kubectl acts like kubectl.

No Open MPI here: these tests pin what the MPI tests rely on (hostname, /dev/shm, /tmp and the
ConfigMap files per pod; `kubectl exec` and `kubectl get` as the rendered scripts call them; the
network stays inside the harness; everything is cleaned up, also when a start fails).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from e2e_harness import Cluster, HarnessError, StartCluster, jobs, one, plan_pods
from e2e_harness.netns import existing_netns

pytestmark = pytest.mark.e2e

READY = '{.status.conditions[?(@.type=="Ready")].status}'
COLUMNS = 'custom-columns=NAME:.metadata.name,READY:.status.conditions[?(@.type=="Ready")].status'
SH = {"PATH": "/usr/bin:/bin"}


@pytest.fixture()
def objects(namespaces: None, render: Callable[..., list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """A small rendered job: pods-worker-0..1 and the launcher (skips where pods cannot run)."""
    return render(jobs.v1alpha2("pods", ["mpirun", "hostname"], workers=2, slots=1))


def sh(cluster: Cluster, pod: str, script: str, timeout: float = 20) -> tuple[int, str, str]:
    done = cluster.run(pod, ["sh", "-c", script], SH, timeout)
    return done.returncode, done.stdout, done.stderr


def delivered(cluster: Cluster) -> Cluster:
    """The cluster after the launcher's kubectl-delivery init container ran its own command."""
    pod = cluster.launcher()
    (init,) = [c for c in pod.init_containers if c.name == "kubectl-delivery"]
    done = cluster.run_container(pod.name, init, 20)
    assert done.returncode == 0, done.describe()
    return cluster


def test_each_pod_has_its_own_hostname_shm_tmp_and_network(
    objects: list[dict[str, Any]], start_cluster: StartCluster
) -> None:
    cluster = start_cluster(objects)
    launcher = cluster.launcher().name
    for pod in ("pods-worker-0", "pods-worker-1", launcher):
        rc, out, _ = sh(
            cluster, pod, "hostname; echo x > /dev/shm/mark; echo x > /tmp/mark; ls /dev/shm; ls /tmp"
        )
        assert rc == 0
        assert out.split() == [pod, "mark", "mark"]
    address = cluster.address["pods-worker-0"]
    rc, routes, _ = sh(cluster, "pods-worker-0", "ip route")
    # one subnet on the harness's bridge, no default route: no packet can leave the harness's namespaces
    assert (rc, routes.split()) == (
        0,
        f"10.244.0.0/16 dev eth0 proto kernel scope link src {address}".split(),
    )
    rc, links, _ = sh(cluster, "pods-worker-0", "ip -o link | cut -d: -f2 | cut -d@ -f1")
    assert links.split() == ["lo", "eth0"]
    assert not os.path.exists("/etc/mpi") and not os.path.exists("/opt/kube")  # the machine is unchanged


def test_configmap_files_and_kubectl_appear_where_the_manifests_mount_them(
    objects: list[dict[str, Any]], start_cluster: StartCluster
) -> None:
    cluster = delivered(start_cluster(objects))
    launcher = cluster.launcher().name
    config = one(objects, "ConfigMap")["data"]
    rc, out, _ = sh(cluster, launcher, "stat -c '%n %a' /etc/mpi/* /opt/kube/kubectl; cat /etc/mpi/hostfile")
    assert rc == 0
    assert (
        "/etc/mpi/hostfile 444" in out and "/etc/mpi/kubexec.sh 555" in out and "/opt/kube/kubectl 755" in out
    )
    assert out.endswith(config["hostfile"])
    rc, out, _ = sh(cluster, "pods-worker-0", "ls /etc/mpi; ls /opt/kube 2>&1; touch /etc/mpi/x 2>&1")
    assert "kubexec.sh" in out and "hostfile" not in out
    assert "No such file" in out and "Read-only file system" in out
    rc, out, _ = sh(cluster, "pods-worker-0", "cat /etc/mpi/kubexec.sh")
    assert out == config["kubexec.sh"]


def test_kubectl_exec_runs_in_the_pod_with_a_clean_env_and_propagates_the_exit_code(
    objects: list[dict[str, Any]], start_cluster: StartCluster
) -> None:
    cluster = delivered(start_cluster(objects))
    launcher = cluster.launcher().name
    kubectl = "/opt/kube/kubectl exec pods-worker-1 -- sh -c"
    rc, out, err = sh(cluster, launcher, f"LEAK=1 {kubectl} 'hostname; env | sort; exit 3'")
    assert rc == 3
    assert out.split() == [
        "pods-worker-1",
        "HOME=/root",
        "HOSTNAME=pods-worker-1",
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "PWD=/",
    ]
    assert err == "command terminated with exit code 3\n"
    rc, out, _ = sh(cluster, launcher, f"echo in | {kubectl} 'cat; echo done'")
    assert (rc, out) == (0, "done\n")  # no -i: stdin not attached, like kubectl
    rc, out, _ = sh(cluster, launcher, "echo in | /opt/kube/kubectl exec -i pods-worker-1 -- cat")
    assert (rc, out) == (0, "in\n")


def test_kubectl_fails_like_kubectl_for_a_missing_pod(
    objects: list[dict[str, Any]], start_cluster: StartCluster
) -> None:
    cluster = delivered(start_cluster(objects, absent=frozenset({"pods-worker-1"})))
    launcher = cluster.launcher().name
    for command in ("exec pods-worker-1 -- true", f"get pod pods-worker-1 -o jsonpath='{READY}'"):
        rc, out, err = sh(cluster, launcher, f"/opt/kube/kubectl {command}")
        assert (rc, out, err) == (1, "", 'Error from server (NotFound): pods "pods-worker-1" not found\n')
    rc, out, err = sh(
        cluster,
        launcher,
        f"/opt/kube/kubectl get pod pods-worker-0 pods-worker-1 --no-headers -o '{COLUMNS}'",
    )
    assert (rc, out) == (1, "pods-worker-0   True\n")
    assert err == 'Error from server (NotFound): pods "pods-worker-1" not found\n'


def test_kubectl_get_reports_ready_as_scripted(
    objects: list[dict[str, Any]], start_cluster: StartCluster
) -> None:
    cluster = delivered(start_cluster(objects))
    launcher = cluster.launcher().name
    cluster.script_ready("pods-worker-0", ["NotFound", "", "False", "True"])
    get = f"/opt/kube/kubectl get pod pods-worker-0 -o jsonpath='{READY}'"
    seen = [sh(cluster, launcher, get)[:2] for _ in range(5)]
    assert seen == [(1, ""), (0, ""), (0, "False"), (0, "True"), (0, "True")]
    cluster.script_ready("pods-worker-1", ["", "True"])
    table = f"/opt/kube/kubectl get pods pods-worker-0 pods-worker-1 -o '{COLUMNS}'"
    expected = "NAME            READY\npods-worker-0   True\npods-worker-1   <none>\n"
    assert sh(cluster, launcher, table)[:2] == (0, expected)


def test_stop_removes_everything_and_a_taken_name_is_refused(objects: list[dict[str, Any]]) -> None:
    cluster = Cluster(plan_pods(objects))
    with cluster:
        delivered(cluster)
        assert cluster.leftovers()  # namespaces, holder processes and the work dir exist
        sh(
            cluster,
            cluster.launcher().name,
            "(sleep 600; /opt/kube/kubectl exec pods-worker-0 -- sleep 600) >/dev/null 2>&1 &",
        )
        twin = Cluster(plan_pods(objects), prefix=cluster.prefix)
        with pytest.raises(HarnessError, match="already exist"):
            twin.start()
    assert cluster.leftovers() == []
    assert not [name for name in existing_netns() if name.startswith(cluster.prefix)]


def test_a_failed_start_cleans_up(objects: list[dict[str, Any]]) -> None:
    spec = one(objects, "StatefulSet")["spec"]["template"]["spec"]
    spec["containers"][0]["volumeMounts"].append({"name": "mpi-job-config", "mountPath": "/no-such-dir/x"})
    failing = Cluster(plan_pods(objects))
    with pytest.raises(HarnessError, match="no parent directory"):
        failing.start()  # fails after the namespaces were made
    assert failing.leftovers() == []


def test_an_mpi_prefix_under_tmp_is_refused_with_the_reason(
    namespaces: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Each pod mounts a /tmp of its own, so a PyPI MPI installed under /tmp would be missing in every
    pod: the harness says so rather than letting mpirun fail to load libmpi."""
    import pypi
    from e2e_harness import mpi

    monkeypatch.setattr(pypi, "CACHE", Path("/tmp") / tmp_path.name)
    with pytest.raises(RuntimeError, match="under /tmp, which every e2e pod replaces with a /tmp of its own"):
        mpi.ensure("mpich")


def test_an_mpi_prefix_the_non_root_pods_cannot_reach_is_refused_with_what_to_do(
    namespaces: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache under a 0700 home (root's own, say): the non-root pods' mpirun would not find libmpi, so
    the harness says so, and what to do, before it installs anything there."""
    import tempfile

    import pypi
    from e2e_harness import mpi

    with tempfile.TemporaryDirectory(dir="/var/tmp") as base:
        home = Path(base) / "home"
        home.mkdir(mode=0o700)
        Path(base).chmod(0o755)
        monkeypatch.setattr(pypi, "CACHE", home / ".cache" / "mpigen-tests")
        with pytest.raises(RuntimeError, match=f"out of reach of uid 1000.*{home} has mode 0700"):
            mpi.ensure("mpich")
        assert not (home / ".cache").exists()  # nothing installed
