"""mpigen's own containers meet Pod Security restricted and carry requests and limits; the user's are left
as written; API tokens reach only the containers that call the API; a launcher Role bound to a
ServiceAccount mpigen does not create is named in a warning. On every run target: the operator's objects,
a JobSet's replicated jobs and a Volcano Job's tasks."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from jobs import V1, V1ALPHA1, V1ALPHA2, V2BETA1, make_job, pod

import mpigen
from mpigen.compiler import compile_job
from mpigen.options import Options
from mpigen.targets.shared.hardening import API_TOKEN_PATH

OWN = {"kubectl-delivery", "wait-for-workers", "cleanup", "ssh-keygen", "store"}
RESTRICTED = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "runAsNonRoot": True,
    "seccompProfile": {"type": "RuntimeDefault"},
}


def jobs() -> list[dict[str, Any]]:
    """A job of each version, with clean-up on, the kubectl and SSH transports, with and without the wait."""
    return [
        make_job(V1ALPHA1, workers=2),
        make_job(V1ALPHA2, cleanPodPolicy="All"),
        make_job(V1, runPolicy={"cleanPodPolicy": "All"}),
        make_job(V2BETA1, runPolicy={"cleanPodPolicy": "All"}, launcherCreationPolicy="WaitForWorkersReady"),
        make_job(V2BETA1),
    ]


TARGETS = ("operator", "jobset", "volcano")
# mpigen's own containers in each target's pods for each of jobs(): the operator target adds some to
# every job; a JobSet waits by dependsOn and ends its workers itself (no wait, no clean-up), Volcano
# makes the SSH keys itself (no key Job) and ends the workers itself (no clean-up).
EXPECTED = {
    "operator": [
        {"kubectl-delivery", "wait-for-workers", "cleanup"},
        {"kubectl-delivery", "wait-for-workers", "cleanup"},
        {"kubectl-delivery", "wait-for-workers", "cleanup"},
        {"wait-for-workers", "cleanup", "ssh-keygen", "store"},
        {"ssh-keygen", "store"},
    ],
    "jobset": [{"kubectl-delivery"}] * 3 + [{"ssh-keygen", "store"}] * 2,
    "volcano": [{"kubectl-delivery", "wait-for-workers"}] * 3 + [{"wait-for-workers"}, set()],
}


def pods(objects: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """Every pod template: `<object>` for a Job or StatefulSet, `<object>-<replicated job or task>` for a
    JobSet or a Volcano Job."""
    found = []
    for o in objects:
        spec = o.get("spec", {})
        if "template" in spec:
            found.append((o["metadata"]["name"], spec["template"]["spec"]))
        for job in spec.get("replicatedJobs", []):
            found.append(
                (f"{o['metadata']['name']}-{job['name']}", job["template"]["spec"]["template"]["spec"])
            )
        for task in spec.get("tasks", []):
            found.append((f"{o['metadata']['name']}-{task['name']}", task["template"]["spec"]))
    return found


def containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [*spec.get("initContainers", []), *spec["containers"]]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("index", range(len(jobs())), ids=[job["apiVersion"] for job in jobs()])
def test_every_container_mpigen_adds_meets_restricted_with_requests_and_limits(
    index: int, target: str
) -> None:
    seen = set()
    for _, spec in pods(mpigen.compile(jobs()[index], Options(target=target))):
        for container in containers(spec):
            if container["name"] not in OWN:
                continue
            seen.add(container["name"])
            context = container["securityContext"]
            assert RESTRICTED.items() <= context.items(), container
            assert context["readOnlyRootFilesystem"] is True, container
            # A numeric non-root user, so that the kubelet can check runAsNonRoot without the image's passwd.
            assert isinstance(context["runAsUser"], int) and context["runAsUser"] > 0, container
            for kind in ("requests", "limits"):
                assert set(container["resources"][kind]) >= {"cpu", "memory", "ephemeral-storage"}, container
            mounts = {m["mountPath"] for m in container.get("volumeMounts", [])}
            if container["name"] != "kubectl-delivery" and container["name"] != "ssh-keygen":
                # kubectl writes its cache under $HOME: a writable emptyDir on a read-only root.
                assert {"name": "HOME", "value": "/tmp"} in container["env"] and "/tmp" in mounts, container
    assert seen == EXPECTED[target][index]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("job", jobs(), ids=lambda job: job["apiVersion"])
def test_the_users_containers_keep_their_security_context_and_resources(
    job: dict[str, Any], target: str
) -> None:
    own = {"securityContext": {"runAsUser": 0, "privileged": True}, "resources": {"limits": {"cpu": "3"}}}
    job = copy.deepcopy(job)
    if job["apiVersion"] == V1ALPHA1:
        job["spec"]["template"]["spec"]["containers"][0].update(copy.deepcopy(own))
    else:
        for replica in job["spec"]["mpiReplicaSpecs"].values():
            replica["template"]["spec"]["containers"][0].update(copy.deepcopy(own))
    checked = 0
    for name, spec in pods(mpigen.compile(job, Options(target=target))):
        for container in containers(spec):
            if container["name"] not in OWN:
                checked += 1
                assert container["securityContext"] == own["securityContext"], container
                if name.endswith(
                    "-worker"
                ):  # (v1alpha1 takes the launcher's resources away, as the operator)
                    assert container["resources"]["limits"]["cpu"] == "3", container
    assert checked >= 2  # the launcher's and the workers' own


def token_mounts(spec: dict[str, Any]) -> list[str]:
    return [
        c["name"]
        for c in containers(spec)
        for m in c.get("volumeMounts", [])
        if m["mountPath"] == API_TOKEN_PATH
    ]


@pytest.mark.parametrize("target", ["operator", "volcano"])
def test_ssh_launcher_mounts_the_token_only_into_its_wait(target: str) -> None:
    job = make_job(V2BETA1, launcherCreationPolicy="WaitForWorkersReady")
    objects = mpigen.compile(job, Options(target=target))
    spec = dict(pods(objects))["pi-launcher"]
    assert spec["automountServiceAccountToken"] is False
    assert token_mounts(spec) == ["wait-for-workers"]
    (volume,) = [v for v in spec["volumes"] if "projected" in v]
    assert {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}} in volume["projected"][
        "sources"
    ]


@pytest.mark.parametrize(
    ("target", "policy"),
    [
        (target, policy)
        for target in TARGETS
        for policy in ("AtStartup", "WaitForWorkersReady")
        if (target, policy) != ("volcano", "WaitForWorkersReady")
        and (target, policy) != ("operator", "WaitForWorkersReady")
    ],
)
def test_a_launcher_that_calls_no_api_gets_no_token(target: str, policy: str) -> None:
    """v2beta1 AtStartup, and on the jobset target also WaitForWorkersReady (JobSet's dependsOn waits)."""
    job = make_job(V2BETA1, launcherCreationPolicy=policy)
    spec = dict(pods(mpigen.compile(job, Options(target=target))))["pi-launcher"]
    assert spec["automountServiceAccountToken"] is False
    assert "serviceAccountName" not in spec and token_mounts(spec) == []


@pytest.mark.parametrize(
    "launcher_spec", [{"serviceAccountName": "mine"}, {"automountServiceAccountToken": True}]
)
@pytest.mark.parametrize("target", TARGETS)
def test_a_launcher_template_that_says_keeps_its_token(launcher_spec: dict[str, Any], target: str) -> None:
    launcher = pod("launcher", command=["mpirun"])
    launcher["spec"].update(launcher_spec)
    objects = mpigen.compile(make_job(V2BETA1, launcher=launcher), Options(target=target))
    spec = dict(pods(objects))["pi-launcher"]
    assert spec.get("automountServiceAccountToken", True) is True and token_mounts(spec) == []


@pytest.mark.parametrize("target", ["operator", "jobset"])
def test_the_key_job_mounts_the_token_only_into_store(target: str) -> None:
    spec = dict(pods(mpigen.compile(make_job(V2BETA1), Options(target=target))))["pi-ssh-keygen"]
    assert spec["automountServiceAccountToken"] is False
    assert token_mounts(spec) == ["store"]


@pytest.mark.parametrize(
    ("worker_context", "user"), [({}, 65534), ({"runAsUser": 0}, 65534), ({"runAsUser": 1000}, 1000)]
)
def test_the_key_job_runs_as_the_workers_user_unless_that_is_root(
    worker_context: dict[str, Any], user: int
) -> None:
    worker = pod("worker", securityContext=worker_context)
    spec = dict(pods(mpigen.compile(make_job(V2BETA1, worker=worker))))["pi-ssh-keygen"]
    assert [c["securityContext"]["runAsUser"] for c in containers(spec)] == [user, user]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("account", ["default", "shared"])
def test_binding_the_launcher_role_to_a_foreign_service_account_is_named(account: str, target: str) -> None:
    launcher = pod("launcher", command=["mpirun"])
    launcher["spec"]["serviceAccountName"] = account
    warnings = compile_job(make_job(V1, launcher=launcher), Options(target=target)).warnings
    (warning,) = [w for w in warnings if w.path[-1:] == ("serviceAccountName",)]
    assert f'ServiceAccount "{account}", which mpigen does not create' in warning.message
    assert warning.path == ("spec", "mpiReplicaSpecs", "Launcher", "template", "spec", "serviceAccountName")


@pytest.mark.parametrize("target", TARGETS)
def test_no_warning_when_the_role_is_bound_to_mpigens_own_account(target: str) -> None:
    warnings = compile_job(make_job(V1), Options(target=target)).warnings
    assert not [w for w in warnings if "which mpigen does not create" in w.message]


def test_under_kueue_the_kubectl_delivery_asks_for_no_ephemeral_storage() -> None:
    """--queue: Kueue counts every resource a pod asks for, and a ClusterQueue that does not cover
    ephemeral-storage would never admit the JobSet; mpigen's own container adds none (cpu and memory
    stay), while the training-operator's fixed kubectl-delivery resources (v1) stay as the operator sets them."""
    for version, kept in ((V1ALPHA2, False), (V1, True)):
        objects = mpigen.compile(make_job(version), Options(target="jobset", queue="q"))
        (delivery,) = [
            c for _, spec in pods(objects) for c in containers(spec) if c["name"] == "kubectl-delivery"
        ]
        assert {"cpu", "memory"} <= set(delivery["resources"]["requests"]), delivery
        assert ("ephemeral-storage" in delivery["resources"]["requests"]) is kept, delivery
        assert RESTRICTED.items() <= delivery["securityContext"].items()
