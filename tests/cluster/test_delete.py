"""Deleting a job leaves nothing behind, on a real API server, in each of the ways the documentation gives
(docs/howto/operator-target.md): `mpigen render job.yaml | kubectl delete -f -`; the label one-liner of
"Deleting a job", read from that page; and kubectl's ApplySet (`kubectl apply --prune --applyset=...`), which also removes what a changed
job no longer renders. The job is a v2beta1 one with every optional object: the SSH Secret and its key Job,
the clean-up Job and its RBAC, the PodGroup and the PodDisruptionBudget."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import pythons
from controlplane import Cluster
from jobs import V2BETA1, job_yaml

ROOT = Path(__file__).resolve().parents[2]
INSTANCE = "app.kubernetes.io/instance=pi"
# Every kind the job below can render, as `kubectl get` names them, to look for what is left.
KINDS = (
    "serviceaccounts,roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io,configmaps,"
    "secrets,services,podgroups.scheduling.volcano.sh,poddisruptionbudgets.policy,"
    "statefulsets.apps,jobs.batch"
)


def full_job(namespace: str) -> str:
    return job_yaml(
        V2BETA1,
        namespace=namespace,
        annotations={"mpigen.dev/gang-scheduler": "volcano"},
        runPolicy={"cleanPodPolicy": "Running"},
    )


def smaller_job(namespace: str) -> str:
    """The same job, changed: no clean-up (no clean-up Job and RBAC). Its pods stay as they were: a Job's pod
    template cannot change in place (a change there is a new job, with a new name)."""
    return job_yaml(
        V2BETA1,
        namespace=namespace,
        annotations={"mpigen.dev/gang-scheduler": "volcano"},
        runPolicy={"cleanPodPolicy": "None"},
    )


def render(job: str) -> str:
    done = subprocess.run(
        [*pythons.mpigen_argv(), "render"],
        check=False,
        input=job,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def rendered(manifest: str) -> set[tuple[str, str]]:
    return set(re.findall(r"^kind: (\S+)\nmetadata:\n(?:  .*\n)*?  name: (\S+)$", manifest, re.MULTILINE))


def live(cluster: Cluster, namespace: str, selector: str = INSTANCE) -> set[tuple[str, str]]:
    found = cluster.get(KINDS, "-n", namespace, "-l", selector)
    return {(item["kind"], item["metadata"]["name"]) for item in found["items"]}


def live_by_name(cluster: Cluster, namespace: str, objects: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """Which of these objects exist, looked up by name (not by label)."""
    found = cluster.get(KINDS, "-n", namespace)
    present = {(item["kind"], item["metadata"]["name"]) for item in found["items"]}
    return objects & present


def wait_gone(cluster: Cluster, namespace: str, objects: set[tuple[str, str]]) -> None:
    cluster.wait_for(
        "the deleted objects to go", lambda: not live_by_name(cluster, namespace, objects), timeout=60
    )


def test_the_job_renders_every_optional_object(namespace: str) -> None:
    kinds = {kind for kind, _ in rendered(render(full_job(namespace)))}
    assert kinds == {
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "ConfigMap",
        "Secret",
        "Service",
        "PodGroup",
        "PodDisruptionBudget",
        "StatefulSet",
        "Job",
    }


def test_render_piped_into_kubectl_delete_removes_everything(cluster: Cluster, namespace: str) -> None:
    manifest = render(full_job(namespace))
    objects = rendered(manifest)
    cluster.kubectl("apply", "-f", "-", input=manifest)
    assert live(cluster, namespace) == objects
    assert "mpigen render job.yaml | kubectl delete --ignore-not-found -f -" in README()
    cluster.kubectl("delete", "--ignore-not-found", "-f", "-", input=manifest)
    wait_gone(cluster, namespace, objects)
    assert live(cluster, namespace) == set()


def readme_one_liner() -> str:
    [line] = re.findall(
        r"^(kubectl delete \S+ -n ml -l app\.kubernetes\.io/instance=pi)$", README(), re.MULTILINE
    )
    return line


def README() -> str:
    """The page that says how to delete a job."""
    return (ROOT / "docs" / "howto" / "operator-target.md").read_text()


def test_the_readme_label_one_liner_removes_everything(cluster: Cluster, namespace: str) -> None:
    manifest = render(full_job(namespace))
    objects = rendered(manifest)
    cluster.kubectl("apply", "-f", "-", input=manifest)
    argv = [namespace if word == "ml" else word for word in readme_one_liner().split()]
    assert argv[:2] == ["kubectl", "delete"] and namespace in argv
    # As the README says: drop the types the cluster does not serve (Kubernetes' own Workload and
    # PodGroup without the GenericWorkload gate, as here).
    served = set(cluster.kubectl("api-resources", "-o", "name").stdout.split())
    types = [kind for kind in argv[2].split(",") if "." not in kind or kind in served]
    assert "podgroups.scheduling.volcano.sh" in types
    argv[2] = ",".join(types)
    cluster.kubectl(*argv[1:])
    wait_gone(cluster, namespace, objects)
    assert live(cluster, namespace) == set()


def applyset_apply() -> list[str]:
    """The README's `kubectl apply --prune --applyset` pipeline, as the argv of its kubectl."""
    [line] = re.findall(
        r"^(mpigen render job\.yaml \| KUBECTL_APPLYSET=true kubectl apply .*)$", README(), re.MULTILINE
    )
    render_part, kubectl_part = line.split(" | ")
    assert render_part == "mpigen render job.yaml"
    env, *argv = kubectl_part.split()
    assert env == "KUBECTL_APPLYSET=true"
    assert argv[:2] == ["kubectl", "apply"] and "--prune" in argv and argv[-2:] == ["-f", "-"], argv
    return argv


def test_an_applyset_prunes_what_a_changed_job_no_longer_renders(
    cluster: Cluster, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECTL_APPLYSET", "true")
    # The README's command applies into the job's namespace (-n ml); here the test's namespace.
    kubectl = [namespace if word == "ml" else word for word in applyset_apply()]
    assert namespace in kubectl

    full = render(full_job(namespace))
    cluster.kubectl(*kubectl[1:], input=full)
    assert live(cluster, namespace) == rendered(full)
    parent = next(word.split("=", 1)[1] for word in kubectl if word.startswith("--applyset="))
    secret: dict[str, Any] = cluster.get("secret", parent, "-n", namespace)
    applyset_id = secret["metadata"]["labels"]["applyset.kubernetes.io/id"]
    members = live(cluster, namespace, f"applyset.kubernetes.io/part-of={applyset_id}")
    assert members == rendered(full)

    smaller = render(smaller_job(namespace))
    assert rendered(smaller) < rendered(full)
    cluster.kubectl(*kubectl[1:], input=smaller)
    wait_gone(cluster, namespace, rendered(full) - rendered(smaller))
    assert live(cluster, namespace) == rendered(smaller)

    # Deleting: the render into kubectl delete, then the ApplySet's parent Secret (as the README says).
    cluster.kubectl("delete", "--ignore-not-found", "-f", "-", input=smaller)
    assert f"`kubectl delete secret -n ml {parent}`" in README()
    cluster.kubectl("delete", "secret", "-n", namespace, parent)
    wait_gone(cluster, namespace, rendered(smaller) | {("Secret", parent)})
    assert live(cluster, namespace) == set()
    assert cluster.get("secrets", "-n", namespace)["items"] == []
