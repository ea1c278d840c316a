"""The launcher's identity: ServiceAccount, Role and RoleBinding `<job>-launcher`.

Least privilege, as in mpi-operator v0.2.0 `newLauncherRole`: `get` on the job's worker pods and
`create` on their `pods/exec`, both limited by `resourceNames` to exactly those pods (no Role at all
when there are no worker pods: an empty `resourceNames` would grant every pod). With the SSH
transport (v2beta1) the launcher needs the API only to wait for its workers (WaitForWorkersReady):
`get` on those pods alone; with AtStartup it needs nothing, and none of these objects is emitted (the
operator gives the launcher no identity of its own either). A ServiceAccount the launcher template
names is kept and bound; mpigen then emits no ServiceAccount.
"""

from __future__ import annotations

from typing import Any

from mpigen import names
from mpigen.errors import Issue
from mpigen.plan import JobPlan
from mpigen.targets.shared.meta import object_meta, service_account_subject


def _meta(plan: JobPlan) -> dict[str, Any]:
    return object_meta(plan, names.launcher(plan.name), names.COMPONENT_RBAC, plan.labels.other)


def launcher_service_account(plan: JobPlan) -> str:
    return plan.launcher_service_account or names.launcher(plan.name)


def build_launcher_service_account(plan: JobPlan) -> list[dict[str, Any]]:
    if not plan.launcher_needs_api or plan.launcher_service_account is not None:
        return []
    return [{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(plan)}]


def launcher_role(plan: JobPlan, pods: list[str]) -> dict[str, Any]:
    """The launcher Role over the worker pods `pods`: `get` (and `create` on `pods/exec` for kubexec)."""
    rules = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"], "resourceNames": pods}]
    if plan.kubexec:
        rules.append(
            {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create"], "resourceNames": list(pods)}
        )
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": _meta(plan),
        "rules": rules,
    }


def _grants(plan: JobPlan) -> bool:
    """A Role only over worker pods that exist: empty `resourceNames` would grant every pod (a v1
    job may have no workers; its launcher then keeps its ServiceAccount and no rights)."""
    return plan.launcher_needs_api and plan.workers > 0


def build_launcher_role(plan: JobPlan) -> list[dict[str, Any]]:
    return [launcher_role(plan, plan.worker_pod_names)] if _grants(plan) else []


def build_launcher_role_binding(plan: JobPlan) -> list[dict[str, Any]]:
    if not _grants(plan):
        return []
    subject = service_account_subject(plan, launcher_service_account(plan))
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": _meta(plan),
            "subjects": [subject],
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": names.launcher(plan.name),
            },
        }
    ]


def foreign_account_warnings(plan: JobPlan) -> list[Issue]:
    """The launcher Role bound to a ServiceAccount the launcher template names (operator and volcano
    targets)."""
    if not _grants(plan):
        return []
    rights = "get and exec into" if plan.kubexec else "get"
    return foreign_account_warning(plan, f"{rights} this job's worker pods")


def foreign_account_warning(plan: JobPlan, rights: str) -> list[Issue]:
    """The launcher Role, which grants `rights`, bound to a ServiceAccount the launcher template names,
    which mpigen does not create: every pod in the namespace that runs as it (with `default`, every pod
    that names none) gains the Role's rights, so the user hears of it by name."""
    account = plan.launcher_service_account
    if account is None:
        return []
    message = (
        f'the Role "{names.launcher(plan.name)}" ({rights}) is bound to ServiceAccount '
        f'"{account}", which mpigen does not create: every pod that runs as "{account}" gains it; '
        "leave serviceAccountName out to get a ServiceAccount of the job's own"
    )
    path = plan.template_paths.get(names.ROLE_LAUNCHER, ("spec",)) + ("spec", "serviceAccountName")
    return [Issue(path, message, "warning")]
