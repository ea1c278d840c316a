"""Runtime scripts: the POSIX shell scripts that do at run time what the mpi-operator did.

`wait-for-workers.sh` runs as an init container of the launcher pod and returns once every worker pod
is Ready (mpi-operator v0.2.0 `pkg/controllers/v1alpha2/mpi_job_controller.go: syncHandler` creates
the launcher only when `worker.Status.ReadyReplicas == workerReplicas`). `cleanup.sh` runs in its own
small Job, waits until the launcher Job has finished and then scales the worker StatefulSet to zero
(v0.2.0 `syncHandler` -> `getOrCreateWorkerStatefulSet(mpiJob, 0)` once the launcher is done).
`ssh-keygen.sh` stores a freshly generated key pair into the job's SSH Secret, once (v0.8.2
`newSSHAuthSecret` generates it in the operator).

Every value is checked and computed here; the templates only quote them. The kubectl output formats
are constants of this module so that the scripts and their tests agree on them. `*_role_rules` state
exactly which API requests the scripts' kubectl calls make, measured with kubectl 1.20 and 1.37
against a recording API server and read from kubectl 1.15's source (the kubectl in the default
kubectl-delivery image): both `kubectl patch` and `kubectl scale` GET the named object first.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mpigen import names
from mpigen.targets.shared.templating import render

# The scripts compare numbers in shell arithmetic, which a POSIX shell may hold in 32 bits.
SHELL_INT_MAX = 2**31 - 1

WAIT_TEMPLATE = "wait-for-workers.sh.j2"
CLEANUP_TEMPLATE = "cleanup.sh.j2"
KEYGEN_TEMPLATE = "ssh-keygen.sh.j2"

# One line per pod, `NAME   True|False|<none>`, whether kubectl was given one name or many (jsonpath
# prints a bare object for one name and a List for several).
READY_COLUMNS = 'custom-columns=NAME:.metadata.name,READY:.status.conditions[?(@.type=="Ready")].status'
# The types of a Job's conditions whose status is "True", each followed by a space: `Complete `.
TRUE_CONDITIONS = 'jsonpath={range .status.conditions[?(@.status=="True")]}{.type}{" "}{end}'
UID = "jsonpath={.metadata.uid}"
# `<resourceVersion> <private key, base64>`; only the space when the Secret holds no key yet.
VERSION_AND_KEY = "jsonpath={.metadata.resourceVersion} {.data.ssh-privatekey}"

ACTIONS = ("scale",)
_UID_PLACEHOLDER = "@UID@"
_COMMAND = re.compile(r"[A-Za-z0-9._/+-]+\Z")


def render_wait_script(
    *,
    pod_prefix: str,
    workers: int,
    kubectl: str = names.KUBECTL_PATH,
    timeout_seconds: int = 600,
    interval_seconds: int = 5,
    batch_size: int = 50,
) -> str:
    """Render the init-container script that waits until pods `<pod_prefix>-0..workers-1` are Ready.

    It asks for up to `batch_size` pods per kubectl call (one GET per named pod; the launcher may not
    list pods), polls every `interval_seconds`, and exits 1 after `timeout_seconds`.
    """
    _check_name("pod_prefix", pod_prefix)
    last_pod = _check_name("last worker pod", f"{pod_prefix}-{_check_int('workers', workers, 1) - 1}")
    interval = _check_int("interval_seconds", interval_seconds, 0)
    return render(
        WAIT_TEMPLATE,
        kubectl=_check_command("kubectl", kubectl),
        pod_prefix=pod_prefix,
        workers=workers,
        last_pod=last_pod,
        timeout_seconds=_check_int("timeout_seconds", timeout_seconds, 0),
        interval_seconds=interval,
        # Without a usable `date`, the script counts time slept; a round counts at least a second.
        clock_step=max(interval, 1),
        batch_size=_check_int("batch_size", batch_size, 1),
        ready_columns=READY_COLUMNS,
    )


def render_cleanup_script(
    *,
    launcher_job: str,
    statefulset: str,
    self_job: str,
    self_rbac: str,
    kubectl: str = "kubectl",
    interval_seconds: int = 30,
    missing_grace_seconds: int = 300,
    action: str = "scale",
) -> str:
    """Render the clean-up Job's script: adopt its RBAC, wait for the launcher, scale the workers to 0.

    The launcher Job counts as finished once it has a `Complete` or `Failed` condition, or once it has
    been missing (NotFound) for `missing_grace_seconds` in a row.
    """
    for field, value in (
        ("launcher_job", launcher_job),
        ("statefulset", statefulset),
        ("self_job", self_job),
        ("self_rbac", self_rbac),
    ):
        _check_name(field, value)
    if action not in ACTIONS:
        raise ValueError(f"action: must be one of {', '.join(ACTIONS)}, got {action!r}")
    head, tail = owner_patch(self_job, _UID_PLACEHOLDER).split(_UID_PLACEHOLDER)
    interval = _check_int("interval_seconds", interval_seconds, 0)
    return render(
        CLEANUP_TEMPLATE,
        kubectl=_check_command("kubectl", kubectl),
        launcher_job=launcher_job,
        statefulset=statefulset,
        self_job=self_job,
        self_rbac=self_rbac,
        interval_seconds=interval,
        clock_step=max(interval, 1),
        missing_grace_seconds=_check_int("missing_grace_seconds", missing_grace_seconds, 0),
        true_conditions=TRUE_CONDITIONS,
        uid_format=UID,
        owner_patch_head=head,
        owner_patch_tail=tail,
    )


def render_keygen_script(
    *,
    secret: str,
    self_job: str,
    self_rbac: str,
    keys_dir: str,
    kubectl: str = "kubectl",
    interval_seconds: int = 5,
    attempts: int = 5,
) -> str:
    """Render the key-generation Job's script: adopt its RBAC, then store the key pair in `keys_dir`
    (`id`, `id.pub`) into Secret `secret` unless it already holds one."""
    for field, value in (("secret", secret), ("self_job", self_job), ("self_rbac", self_rbac)):
        _check_name(field, value)
    head, tail = owner_patch(self_job, _UID_PLACEHOLDER).split(_UID_PLACEHOLDER)
    return render(
        KEYGEN_TEMPLATE,
        kubectl=_check_command("kubectl", kubectl),
        secret=secret,
        self_job=self_job,
        self_rbac=self_rbac,
        keys_dir=_check_command("keys_dir", keys_dir),
        interval_seconds=_check_int("interval_seconds", interval_seconds, 0),
        attempts=_check_int("attempts", attempts, 1),
        version_and_key=VERSION_AND_KEY,
        uid_format=UID,
        owner_patch_head=head,
        owner_patch_tail=tail,
    )


def keygen_role_rules(*, secret: str, self_job: str, self_rbac: str) -> list[dict[str, Any]]:
    """The Role rules `ssh-keygen.sh` needs: read and patch the one Secret (`kubectl patch` GETs it
    first), read its own Job's uid, adopt its own ServiceAccount and Role, delete its RoleBinding."""
    return [
        _rule("", "secrets", ["get", "patch"], [secret]),
        _rule("batch", "jobs", ["get"], [self_job]),
        *own_rbac_rules(self_rbac),
    ]


def own_rbac_rules(name: str) -> list[dict[str, Any]]:
    """Adopting its own ServiceAccount and Role (`kubectl patch` GETs them first) and deleting its own
    RoleBinding last. Never `patch` on the RoleBinding: under RBAC's escalation rule a subject that holds
    every permission of the bound Role may change the binding's subjects, and so hand the Role to
    anyone. Patching the Role cannot grant more than it holds already, and deleting a binding grants
    nothing."""
    return [
        _rule("", "serviceaccounts", ["get", "patch"], [name]),
        _rule("rbac.authorization.k8s.io", "roles", ["get", "patch"], [name]),
        _rule("rbac.authorization.k8s.io", "rolebindings", ["delete"], [name]),
    ]


def owner_patch(job: str, uid: str) -> str:
    """The merge patch that makes Job `job` (with this uid) the owner of an object."""
    owner = {"apiVersion": "batch/v1", "kind": "Job", "name": job, "uid": uid}
    return json.dumps({"metadata": {"ownerReferences": [owner]}}, separators=(",", ":"))


def cleanup_role_rules(
    *, launcher_job: str, statefulset: str, self_job: str, self_rbac: str
) -> list[dict[str, Any]]:
    """The Role rules `cleanup.sh` needs, and nothing more.

    `kubectl scale` GETs the StatefulSet, then (kubectl >= 1.16, kubernetes PR #81342) PATCHes
    `statefulsets/scale`; kubectl <= 1.15, as in the default kubectl-delivery image, GETs and PUTs
    (`update`) the scale subresource instead. `kubectl patch` GETs the object before it PATCHes it.
    """
    return [
        _rule("batch", "jobs", ["get"], [launcher_job, self_job]),
        _rule("apps", "statefulsets", ["get"], [statefulset]),
        _rule("apps", "statefulsets/scale", ["get", "patch", "update"], [statefulset]),
        *own_rbac_rules(self_rbac),
    ]


def _rule(group: str, resource: str, verbs: list[str], resource_names: list[str]) -> dict[str, Any]:
    return {"apiGroups": [group], "resources": [resource], "verbs": verbs, "resourceNames": resource_names}


def _check_name(field: str, value: object) -> str:
    """A name that reaches a shell must be a DNS-1123 label: no quoting can be forgotten then."""
    if not isinstance(value, str) or not names.is_dns1123_label(value):
        raise ValueError(f"{field}: must be a DNS-1123 label (at most 63 of a-z, 0-9, '-'), got {value!r}")
    return value


def _check_int(field: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= SHELL_INT_MAX:
        raise ValueError(f"{field}: must be an integer from {minimum} to {SHELL_INT_MAX}, got {value!r}")
    return value


def _check_command(field: str, value: object) -> str:
    if not isinstance(value, str) or not _COMMAND.match(value):
        raise ValueError(f"{field}: must be a command name or path of [A-Za-z0-9._/+-], got {value!r}")
    return value
