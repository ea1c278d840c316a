"""`mpigen exec-policy` judged by the real API server's admission: with the policy, the launcher of a
--target jobset job (kubectl exec transport) can exec into its own JobSet's pods only, with its pod-bound
token, as the kubelet gives it; without it, its Role lets it exec into every pod of the namespace.

The pods are plain Pods named as JobSet v0.12 and the Job controller name them (`<jobset>-<rjob>-0-<index>-
<5 random>`), never scheduled: an exec that admission lets through then fails in the API server with "does
not have a host assigned" (the connection to a kubelet comes after admission), one it refuses fails with
the policy's message. The jobs are `alpha`, `alpha-worker-0-1` (a name whose pods start like alpha's
workers) and `beta`; a kubeflow.org/v1 job on the operator target, whose launcher Job's pod is
`<job>-launcher-<5 random>` (as the training-operator's), stands for launchers the policy leaves alone.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pythons
from controlplane import Cluster
from mpijobs import job, manifest

import mpigen

ADMITTED = "does not have a host assigned"  # the API server's pod registry, after admission
DENIED = "mpigen-launcher-exec"  # the policy's message names it
RBAC_FORBIDDEN = "is forbidden: User"  # the RBAC authoriser: `User "..." cannot <verb> resource ...`
JOBS = ("alpha", "alpha-worker-0-1", "beta")
RBAC_KINDS = ("ServiceAccount", "Role", "RoleBinding")
DEFAULT_ACCOUNT = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}}


def _pod(name: str, account: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "example.com/main:1"}]}
    if account is not None:
        spec["serviceAccountName"] = account
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def pods(name: str) -> dict[str, str]:
    """The launcher and two worker pods of JobSet `name`, by role."""
    return {
        "launcher": f"{name}-launcher-0-0-bcdfg",
        "worker-0": f"{name}-worker-0-0-hjklm",
        "worker-1": f"{name}-worker-0-1-npqrs",
    }


@pytest.fixture
def jobs(cluster: Cluster, namespace: str, tmp_path: Path) -> dict[str, Any]:
    """The three jobs' launcher RBAC as mpigen renders it on the jobset target, their pods, an unrelated pod
    and a kubeflow.org/v1 job on the operator target (its RBAC and pods), with a kubeconfig for each launcher
    holding a token bound to its pod."""
    objects: list[dict[str, Any]] = []
    for name in JOBS:
        rendered = mpigen.compile(job("v1", name), mpigen.Options(namespace=namespace, target="jobset"))
        objects += [obj for obj in rendered if obj["kind"] in RBAC_KINDS]
    operator = mpigen.compile(job("v1", "op"), mpigen.Options(namespace=namespace))
    objects += [obj for obj in operator if obj["kind"] in RBAC_KINDS]
    cluster.kubectl("apply", "-f", "-", input=manifest(objects))
    # The `cluster` control plane runs no ServiceAccount controller: the pods' `default` is made here.
    made: list[dict[str, Any]] = [DEFAULT_ACCOUNT, _pod("database-0")]
    for name in JOBS:
        made += [
            _pod(pod, f"{name}-launcher" if role == "launcher" else None) for role, pod in pods(name).items()
        ]
    made += [_pod("op-launcher-x7k2p", "op-launcher"), _pod("op-worker-0")]
    cluster.kubectl("apply", "-n", namespace, "-f", "-", input=manifest(made))
    tokens = {
        name: cluster.token_kubeconfig(namespace, f"{name}-launcher", tmp_path, pods(name)["launcher"])
        for name in JOBS
    }
    tokens["op"] = cluster.token_kubeconfig(namespace, "op-launcher", tmp_path, "op-launcher-x7k2p")
    tokens["alpha-unbound"] = cluster.token_kubeconfig(namespace, "alpha-launcher", tmp_path)
    return {"namespace": namespace, "tokens": tokens}


@pytest.fixture
def policy(cluster: Cluster) -> Iterator[None]:
    """`mpigen exec-policy | kubectl apply -f -`, removed afterwards (it is cluster-wide): on an existing
    cluster that already has it, it is left as it was."""
    there = cluster.kubectl("get", "validatingadmissionpolicy", DENIED, check=False).returncode == 0
    text = subprocess.run(
        [*pythons.mpigen_argv(), "exec-policy"], capture_output=True, text=True, check=True
    ).stdout
    cluster.kubectl("apply", "-f", "-", input=text)
    yield
    if not there:
        cluster.kubectl("delete", "-f", "-", input=text, check=False)


def exec_into(cluster: Cluster, kubeconfig: Path | None, namespace: str, pod: str) -> str:
    """ADMITTED, DENIED or RBAC_FORBIDDEN: what stopped `kubectl exec` into `pod` (it never runs: no node)."""
    done = cluster.kubectl("exec", "-n", namespace, pod, "--", "true", kubeconfig=kubeconfig, check=False)
    said = done.stdout + done.stderr
    assert done.returncode != 0, said
    found = [verdict for verdict in (ADMITTED, DENIED, RBAC_FORBIDDEN) if verdict in said]
    assert len(found) == 1, said
    return found[0]


def _wait_denied(cluster: Cluster, jobs: dict[str, Any]) -> None:
    """The binding reaches the API server's policy cache a moment after it is created."""
    cluster.wait_for(
        "the policy to be enforced",
        lambda: exec_into(cluster, jobs["tokens"]["alpha"], jobs["namespace"], "database-0") == DENIED,
    )


def test_without_the_policy_the_role_lets_a_launcher_exec_into_every_pod(
    cluster: Cluster, jobs: dict[str, Any]
) -> None:
    """What holds without it: RBAC alone, a namespace-wide `pods/exec`; only other namespaces are refused."""
    if cluster.kubectl("get", "validatingadmissionpolicy", DENIED, check=False).returncode == 0:
        pytest.skip(f"the cluster has the policy {DENIED} installed")
    namespace, tokens = jobs["namespace"], jobs["tokens"]
    for pod in ("database-0", "op-worker-0", *pods("beta").values(), *pods("alpha-worker-0-1").values()):
        assert exec_into(cluster, tokens["alpha"], namespace, pod) == ADMITTED
    elsewhere = cluster.create_namespace("t-exec-elsewhere")
    cluster.kubectl(
        "apply",
        "-n",
        elsewhere,
        "-f",
        "-",
        input=manifest([DEFAULT_ACCOUNT, _pod(pods("alpha")["worker-0"])]),
    )
    assert exec_into(cluster, tokens["alpha"], elsewhere, pods("alpha")["worker-0"]) == RBAC_FORBIDDEN


def test_with_the_policy_a_launcher_execs_into_its_own_jobs_pods_only(
    cluster: Cluster, jobs: dict[str, Any], policy: None
) -> None:
    _wait_denied(cluster, jobs)
    namespace, tokens = jobs["namespace"], jobs["tokens"]
    for name in JOBS:
        for other in JOBS:
            for role, pod in pods(other).items():
                wanted = ADMITTED if other == name else DENIED
                assert exec_into(cluster, tokens[name], namespace, pod) == wanted, (name, other, role)
        assert exec_into(cluster, tokens[name], namespace, "database-0") == DENIED
        assert exec_into(cluster, tokens[name], namespace, "op-worker-0") == DENIED
    denied = cluster.kubectl(
        "exec", "-n", namespace, "database-0", "--", "true", kubeconfig=tokens["beta"], check=False
    )
    assert (
        f"the launcher beta-launcher may exec only into the worker and launcher pods of JobSet beta in namespace "
        f"{namespace}, not into {namespace}/database-0 (mpigen-launcher-exec)"
    ) in denied.stderr


def test_the_policy_leaves_other_identities_alone(
    cluster: Cluster, jobs: dict[str, Any], policy: None
) -> None:
    """An operator-target (training-operator shaped) launcher, the admin, and a token of a jobset launcher's
    ServiceAccount not bound to its pod (only someone who may create tokens can get one) are not matched."""
    _wait_denied(cluster, jobs)
    namespace, tokens = jobs["namespace"], jobs["tokens"]
    assert exec_into(cluster, tokens["op"], namespace, "op-worker-0") == ADMITTED
    assert exec_into(cluster, tokens["op"], namespace, "database-0") == RBAC_FORBIDDEN
    for pod in ("database-0", pods("beta")["worker-0"], "op-worker-0"):
        assert exec_into(cluster, None, namespace, pod) == ADMITTED
        assert exec_into(cluster, tokens["alpha-unbound"], namespace, pod) == ADMITTED
