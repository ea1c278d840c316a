"""RBAC proved by the API server's authoriser: each ServiceAccount mpigen emits can do what its script needs
on its own job's objects and nothing else; and a RoleBinding subject without a namespace binds the
ServiceAccount of the RoleBinding's own namespace."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from controlplane import Cluster
from mpijobs import compiled, find, job, manifest, run_script, script

import mpigen

# Authorisation every authenticated identity has (system:basic-user, system:discovery, ...): not the Role's.
EVERYONE = {
    ("authorization.k8s.io", "selfsubjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectrulesreviews"),
    ("authentication.k8s.io", "selfsubjectreviews"),
}


@pytest.fixture
def two_jobs(cluster: Cluster, namespace: str, tmp_path: Path) -> dict[str, Any]:
    """Jobs `alpha` and `beta` (v1alpha2, cleanPodPolicy Running) in one namespace, with a Secret and a
    foreign StatefulSet name beside them, and a kubeconfig per ServiceAccount."""
    objects = {
        name: compiled(job("v1alpha2", name, workers=2, cleanPodPolicy="Running"), namespace)
        for name in ("alpha", "beta")
    }
    # No worker pod ever exists here, even where kwok nodes run: the Roles still name worker-0 and -1.
    applied = copy.deepcopy(objects["alpha"] + objects["beta"])
    for obj in applied:
        if obj["kind"] == "StatefulSet":
            obj["spec"]["replicas"] = 0
    text = manifest(applied)
    cluster.kubectl("apply", "-f", "-", input=text)
    cluster.kubectl("create", "secret", "generic", "credentials", "-n", namespace, "--from-literal=k=v")
    identities = {
        f"{name}-{role}": cluster.token_kubeconfig(namespace, f"{name}-{role}", tmp_path)
        for name in ("alpha", "beta")
        for role in ("launcher", "cleanup")
    }
    return {"namespace": namespace, "objects": objects, "identities": identities}


def can(
    cluster: Cluster, kubeconfig: Path, namespace: str, verb: str, resource: str, subresource: str = ""
) -> bool:
    argv = ["auth", "can-i", verb, resource, "-n", namespace]
    if subresource:
        argv.append(f"--subresource={subresource}")
    done = cluster.kubectl(*argv, kubeconfig=kubeconfig, check=False)
    assert done.stdout.strip() in ("yes", "no"), done.stdout + done.stderr
    return done.stdout.strip() == "yes"


def granted_rules(cluster: Cluster, kubeconfig: Path, namespace: str) -> set[tuple[str, str, str, str]]:
    """(group, resource, name, verb) the authoriser grants in `namespace`, from a SelfSubjectRulesReview."""
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectRulesReview",
        "spec": {"namespace": namespace},
    }
    done = cluster.kubectl(
        "create", "--validate=false", "-f", "-", "-o", "json", input=json.dumps(review), kubeconfig=kubeconfig
    )
    status = json.loads(done.stdout)["status"]
    assert not status.get("incomplete"), status
    granted = set()
    for rule in status["resourceRules"]:
        for group in rule.get("apiGroups", []):
            for resource in rule.get("resources", []):
                if (group, resource) in EVERYONE:
                    continue
                for name in rule.get("resourceNames") or ["*"]:
                    granted |= {(group, resource, name, verb) for verb in rule["verbs"]}
    return granted


def needs(job_name: str, identity: str) -> set[tuple[str, str, str, str]]:
    """What each script does (wait-for-workers.sh, kubexec.sh, cleanup.sh), object by object."""
    if identity == "launcher":
        workers = [f"{job_name}-worker-{i}" for i in range(2)]
        return {("", "pods", w, "get") for w in workers} | {("", "pods/exec", w, "create") for w in workers}
    own = f"{job_name}-cleanup"
    return (
        {("batch", "jobs", f"{job_name}-{j}", "get") for j in ("launcher", "cleanup")}
        | {("apps", "statefulsets", f"{job_name}-worker", "get")}
        | {("apps", "statefulsets/scale", f"{job_name}-worker", v) for v in ("get", "patch", "update")}
        | {
            (g, r, own, v)
            for g, r in (("", "serviceaccounts"), ("rbac.authorization.k8s.io", "roles"))
            for v in ("get", "patch")
        }
        | {("rbac.authorization.k8s.io", "rolebindings", own, "delete")}
    )


@pytest.mark.parametrize("identity", ["launcher", "cleanup"])
def test_each_service_account_is_granted_exactly_what_its_script_needs(
    cluster: Cluster, two_jobs: dict[str, Any], identity: str
) -> None:
    namespace = two_jobs["namespace"]
    kubeconfig = two_jobs["identities"][f"alpha-{identity}"]
    # What every authenticated identity holds cluster-wide (self reviews, ClusterTrustBundles, ...) shows
    # in any namespace: measured in one where the job has nothing, it is none of the job's resources.
    everywhere = granted_rules(cluster, kubeconfig, "default")
    assert not {rule[:2] for rule in everywhere} & {rule[:2] for rule in needs("alpha", identity)}, everywhere
    assert granted_rules(cluster, kubeconfig, namespace) - everywhere == needs("alpha", identity)


# (verb, resource, subresource, allowed) for alpha's identities; beta is the other job in the namespace.
MATRIX = {
    "launcher": [
        ("get", "pods/alpha-worker-0", "", True),
        ("get", "pods/alpha-worker-1", "", True),
        ("create", "pods/alpha-worker-1", "exec", True),
        ("get", "pods/alpha-worker-2", "", False),
        ("get", "pods/beta-worker-0", "", False),
        ("create", "pods/beta-worker-0", "exec", False),
        ("list", "pods", "", False),
        ("watch", "pods", "", False),
        ("delete", "pods/alpha-worker-0", "", False),
        ("get", "secrets/credentials", "", False),
        ("list", "secrets", "", False),
        ("get", "configmaps/alpha-config", "", False),
        ("patch", "statefulsets/alpha-worker", "scale", False),
        ("get", "jobs.batch/alpha-launcher", "", False),
        ("patch", "rolebindings.rbac.authorization.k8s.io/alpha-launcher", "", False),
        ("bind", "roles.rbac.authorization.k8s.io/alpha-launcher", "", False),
        ("escalate", "roles.rbac.authorization.k8s.io/alpha-launcher", "", False),
        ("create", "rolebindings.rbac.authorization.k8s.io", "", False),
    ],
    "cleanup": [
        ("get", "jobs.batch/alpha-launcher", "", True),
        ("get", "jobs.batch/alpha-cleanup", "", True),
        ("get", "statefulsets.apps/alpha-worker", "", True),
        ("patch", "statefulsets.apps/alpha-worker", "scale", True),
        ("update", "statefulsets.apps/alpha-worker", "scale", True),
        ("patch", "serviceaccounts/alpha-cleanup", "", True),
        ("patch", "roles.rbac.authorization.k8s.io/alpha-cleanup", "", True),
        # Its own binding: deleted when done, never patched (a patch could add subjects: escalation).
        ("delete", "rolebindings.rbac.authorization.k8s.io/alpha-cleanup", "", True),
        ("patch", "rolebindings.rbac.authorization.k8s.io/alpha-cleanup", "", False),
        ("update", "rolebindings.rbac.authorization.k8s.io/alpha-cleanup", "", False),
        ("create", "rolebindings.rbac.authorization.k8s.io", "", False),
        ("get", "jobs.batch/beta-launcher", "", False),
        ("patch", "statefulsets.apps/beta-worker", "scale", False),
        ("get", "statefulsets.apps/beta-worker", "", False),
        ("patch", "statefulsets.apps/alpha-worker", "", False),
        ("delete", "statefulsets.apps/alpha-worker", "", False),
        ("delete", "jobs.batch/alpha-launcher", "", False),
        ("list", "jobs.batch", "", False),
        ("patch", "roles.rbac.authorization.k8s.io/alpha-launcher", "", False),
        ("patch", "rolebindings.rbac.authorization.k8s.io/beta-cleanup", "", False),
        ("patch", "serviceaccounts/alpha-launcher", "", False),
        ("escalate", "roles.rbac.authorization.k8s.io/alpha-cleanup", "", False),
        ("bind", "roles.rbac.authorization.k8s.io/alpha-cleanup", "", False),
        ("bind", "clusterroles.rbac.authorization.k8s.io/admin", "", False),
        ("escalate", "roles.rbac.authorization.k8s.io/alpha-launcher", "", False),
        ("get", "secrets/credentials", "", False),
        ("create", "pods", "", False),
        ("get", "pods/alpha-worker-0", "", False),
        ("create", "pods/alpha-worker-0", "exec", False),
    ],
}


@pytest.mark.parametrize("identity", ["launcher", "cleanup"])
def test_can_i_matrix(cluster: Cluster, two_jobs: dict[str, Any], identity: str) -> None:
    namespace = two_jobs["namespace"]
    kubeconfig = two_jobs["identities"][f"alpha-{identity}"]
    answers = {
        (verb, resource, sub): can(cluster, kubeconfig, namespace, verb, resource, sub)
        for verb, resource, sub, _ in MATRIX[identity]
    }
    assert answers == {(verb, resource, sub): allowed for verb, resource, sub, allowed in MATRIX[identity]}


def test_requests_outside_the_role_are_forbidden_for_real(cluster: Cluster, two_jobs: dict[str, Any]) -> None:
    ids = two_jobs["identities"]
    own = cluster.kubectl("get", "pod", "alpha-worker-0", kubeconfig=ids["alpha-launcher"], check=False)
    assert "(NotFound)" in own.stderr, own.stderr  # authorised: the pod just does not exist (no kubelet here)
    for argv, identity in [
        (("get", "pod", "beta-worker-0"), "alpha-launcher"),
        (("get", "pods"), "alpha-launcher"),
        (("get", "secret", "credentials"), "alpha-launcher"),
        (("scale", "statefulset", "beta-worker", "--replicas=5"), "alpha-cleanup"),
        (("get", "secret", "credentials"), "alpha-cleanup"),
        (("delete", "job", "alpha-launcher"), "alpha-cleanup"),
    ]:
        done = cluster.kubectl(*argv, kubeconfig=ids[identity], check=False)
        assert done.returncode != 0 and "(Forbidden)" in done.stderr, (identity, argv, done.stderr)
    replicas = cluster.get("statefulset", "beta-worker", "-n", two_jobs["namespace"])["spec"]["replicas"]
    assert replicas == 0


def test_wait_script_reads_its_own_workers_and_is_refused_the_others(
    cluster: Cluster, two_jobs: dict[str, Any]
) -> None:
    """The real wait-for-workers.sh with the launcher's token: its pods do not exist here, so it times out
    without a single authorisation error; with the other job's launcher token every read is Forbidden."""
    text = script(
        two_jobs["objects"]["alpha"], "wait-for-workers.sh", cluster.kubectl_path, timeout=2, interval=1
    )
    own = run_script(text, two_jobs["identities"]["alpha-launcher"])
    assert own.returncode == 1, own.stdout + own.stderr
    assert "timed out after" in own.stderr and "2/2 workers: alpha-worker-0 alpha-worker-1" in own.stderr
    assert "Forbidden" not in own.stderr, own.stderr
    foreign = run_script(text, two_jobs["identities"]["beta-launcher"])
    assert foreign.returncode == 1
    assert "(Forbidden)" in foreign.stderr and 'cannot get resource "pods"' in foreign.stderr, foreign.stderr


def test_role_binding_subject_without_namespace_binds_the_bindings_namespace(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    """kube-apiserver (pkg/registry/rbac/validation: appliesToUser) reads a ServiceAccount subject that
    names no namespace as one in the RoleBinding's namespace. Proved with a job rendered with no
    namespace, its subjects' namespaces dropped (as mpigen emits them then, or by hand where it does not),
    applied with `kubectl apply -n`."""
    objects = compiled(job("v1alpha2", "nons", workers=2, cleanPodPolicy="Running"), None)
    edited = copy.deepcopy(objects)
    for obj in edited:
        assert "namespace" not in obj["metadata"]
        for subject in obj.get("subjects", []):
            subject.pop("namespace", None)
    done = cluster.kubectl("apply", "-n", namespace, "-f", "-", input=manifest(edited))
    assert done.stderr == "", done.stderr
    served = cluster.get("rolebinding", "nons-launcher", "-n", namespace)
    assert "namespace" not in served["subjects"][0]  # kept as sent: the server defaults nothing here
    launcher = cluster.token_kubeconfig(namespace, "nons-launcher", tmp_path)
    assert can(cluster, launcher, namespace, "get", "pods/nons-worker-0")
    assert can(cluster, launcher, namespace, "create", "pods/nons-worker-0", "exec")
    cleanup = cluster.token_kubeconfig(namespace, "nons-cleanup", tmp_path)
    assert can(cluster, cleanup, namespace, "patch", "statefulsets.apps/nons-worker", "scale")
    # The same ServiceAccount name in another namespace gains nothing from this binding.
    other = cluster.create_namespace("nons-other")
    cluster.kubectl("create", "serviceaccount", "nons-launcher", "-n", other)
    stranger = cluster.token_kubeconfig(other, "nons-launcher", tmp_path)
    assert not can(cluster, stranger, namespace, "get", "pods/nons-worker-0")
    # What mpigen emits today for a job without a namespace works when applied as rendered (bytes kept).
    assert find(objects, "RoleBinding", "-launcher")["subjects"][0].get("namespace") in (None, "default")


def add_subject(cluster: Cluster, kubeconfig: Path, namespace: str, binding: str, account: str) -> Any:
    """Try to add ServiceAccount `account` to RoleBinding `binding` as `kubeconfig`'s identity."""
    subject = {"kind": "ServiceAccount", "name": account, "namespace": namespace}
    patch = [{"op": "add", "path": "/subjects/-", "value": subject}]
    return cluster.kubectl(
        "patch",
        "rolebinding",
        binding,
        "-n",
        namespace,
        "--type=json",
        "-p",
        json.dumps(patch),
        kubeconfig=kubeconfig,
        check=False,
    )


def test_the_key_job_cannot_hand_the_ssh_secret_to_another_subject(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    """RBAC's escalation rule lets a subject that holds every permission of a Role bind that Role to anyone.
    The key Job's identity may read the SSH Secret, so a binding it could patch would let it share the
    Secret: it may not patch its binding, bind or escalate its Role, or create a binding; it may only
    delete its own binding. The control: the same rights plus `patch` on the binding (the Role mpigen
    used to render) do hand the Secret to a bystander ServiceAccount."""
    objects = compiled(
        job(
            "v2beta1",
            "keyed",
            workers=2,
            runPolicy={"cleanPodPolicy": "Running"},
            launcherCreationPolicy="WaitForWorkersReady",
        ),
        namespace,
    )
    cluster.kubectl("apply", "-f", "-", input=manifest(objects))
    keygen = cluster.token_kubeconfig(namespace, "keyed-ssh-keygen", tmp_path)
    cluster.kubectl("create", "serviceaccount", "bystander", "-n", namespace)
    default = cluster.token_kubeconfig(namespace, "bystander", tmp_path)
    rbac = "rbac.authorization.k8s.io"
    assert can(cluster, keygen, namespace, "get", "secrets/keyed-ssh")
    for verb, resource in [
        ("patch", f"rolebindings.{rbac}/keyed-ssh-keygen"),
        ("update", f"rolebindings.{rbac}/keyed-ssh-keygen"),
        ("create", f"rolebindings.{rbac}"),
        ("bind", f"roles.{rbac}/keyed-ssh-keygen"),
        ("escalate", f"roles.{rbac}/keyed-ssh-keygen"),
        ("get", "secrets/keyed-other"),
    ]:
        assert not can(cluster, keygen, namespace, verb, resource), (verb, resource)
    assert can(cluster, keygen, namespace, "delete", f"rolebindings.{rbac}/keyed-ssh-keygen")

    refused = add_subject(cluster, keygen, namespace, "keyed-ssh-keygen", "bystander")
    assert refused.returncode != 0 and "(Forbidden)" in refused.stderr, refused.stderr
    binding = {
        "apiVersion": f"{rbac}/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "share", "namespace": namespace},
        "subjects": [{"kind": "ServiceAccount", "name": "bystander", "namespace": namespace}],
        "roleRef": {"apiGroup": rbac, "kind": "Role", "name": "keyed-ssh-keygen"},
    }
    created = cluster.kubectl("create", "-f", "-", input=json.dumps(binding), kubeconfig=keygen, check=False)
    assert created.returncode != 0 and "(Forbidden)" in created.stderr, created.stderr
    # Nobody else reads the Secret through the API: not a bystander, not the clean-up or the launcher.
    for other in [default] + [
        cluster.token_kubeconfig(namespace, f"keyed-{sa}", tmp_path) for sa in ("cleanup", "launcher")
    ]:
        assert not can(cluster, other, namespace, "get", "secrets/keyed-ssh")
    cleanup = cluster.token_kubeconfig(namespace, "keyed-cleanup", tmp_path)
    refused = add_subject(cluster, cleanup, namespace, "keyed-cleanup", "bystander")
    assert refused.returncode != 0 and "(Forbidden)" in refused.stderr, refused.stderr

    # The control: with `patch` on its binding as well, the same rights hand the Role to the bystander.
    role = copy.deepcopy(find(objects, "Role", "-ssh-keygen"))
    role["metadata"]["name"] = "old-keygen"
    role["rules"] = [r for r in role["rules"] if r["resources"] != ["rolebindings"]]
    role["rules"].append(
        {
            "apiGroups": [rbac],
            "resources": ["rolebindings"],
            "verbs": ["get", "patch"],
            "resourceNames": ["old-keygen"],
        }
    )
    old = {
        **binding,
        "metadata": {"name": "old-keygen", "namespace": namespace},
        "subjects": [{"kind": "ServiceAccount", "name": "old-keygen", "namespace": namespace}],
        "roleRef": {"apiGroup": rbac, "kind": "Role", "name": "old-keygen"},
    }
    cluster.kubectl("create", "serviceaccount", "old-keygen", "-n", namespace)
    cluster.kubectl("apply", "-f", "-", input=manifest([role, old]))
    previous = cluster.token_kubeconfig(namespace, "old-keygen", tmp_path)
    shared = add_subject(cluster, previous, namespace, "old-keygen", "bystander")
    assert shared.returncode == 0, shared.stderr
    assert can(cluster, default, namespace, "get", "secrets/keyed-ssh")


@pytest.mark.parametrize(
    ("target", "version"),
    [
        ("operator", "v1alpha2"),
        ("operator", "v2beta1"),
        ("jobset", "v1alpha2"),
        ("volcano", "v1alpha2"),
        ("volcano", "v2beta1"),
    ],
)
def test_the_launcher_cannot_escalate_on_any_target(
    cluster: Cluster, namespace: str, tmp_path: Path, target: str, version: str
) -> None:
    """The escalation attempts, for the launcher identity of every target that gives it one (kubectl exec,
    or a v2beta1 wait): it may not bind or escalate its Role, patch, update or delete its binding, create a
    binding, nor read a Secret (the SSH Secret, another's), directly or through another subject. Only the
    RBAC objects are applied: the authoriser needs nothing else."""
    spec = {"launcherCreationPolicy": "WaitForWorkersReady"} if version == "v2beta1" else {}
    options = mpigen.Options(namespace=namespace, target=target)
    objects = mpigen.compile(job(version, "esc", workers=2, **spec), options)
    rbac_objects = [o for o in objects if o["kind"] in ("ServiceAccount", "Role", "RoleBinding")]
    assert {o["metadata"]["name"] for o in rbac_objects} >= {"esc-launcher"}
    cluster.kubectl("apply", "-f", "-", input=manifest(rbac_objects))
    cluster.kubectl("create", "secret", "generic", "esc-ssh", "-n", namespace, "--from-literal=k=v")
    launcher = cluster.token_kubeconfig(namespace, "esc-launcher", tmp_path)
    rbac = "rbac.authorization.k8s.io"
    assert can(cluster, launcher, namespace, "get", "pods/esc-worker-0" if target != "jobset" else "pods")
    for verb, resource in [
        ("bind", f"roles.{rbac}/esc-launcher"),
        ("escalate", f"roles.{rbac}/esc-launcher"),
        ("patch", f"roles.{rbac}/esc-launcher"),
        ("patch", f"rolebindings.{rbac}/esc-launcher"),
        ("update", f"rolebindings.{rbac}/esc-launcher"),
        ("delete", f"rolebindings.{rbac}/esc-launcher"),
        ("create", f"rolebindings.{rbac}"),
        ("create", "serviceaccounts/token"),
        ("get", "secrets/esc-ssh"),
        ("list", "secrets"),
        ("impersonate", "serviceaccounts"),
    ]:
        assert not can(cluster, launcher, namespace, verb, resource), (verb, resource)
    refused = add_subject(cluster, launcher, namespace, "esc-launcher", "default")
    assert refused.returncode != 0 and "(Forbidden)" in refused.stderr, refused.stderr
