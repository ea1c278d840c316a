"""The launcher's identity: ServiceAccount, Role and RoleBinding `<job>-launcher`.

Least privilege, as in mpi-operator v0.2.0 `newLauncherRole`: `get` on the job's worker pods and
`create` on their `pods/exec`, both limited by `resourceNames` to exactly those pods.
"""

from __future__ import annotations

from typing import Any

from mpigen import names
from mpigen.build import object_meta, service_account_subject
from mpigen.plan import JobPlan


def _meta(plan: JobPlan) -> dict[str, Any]:
    return object_meta(plan, names.launcher(plan.name), names.COMPONENT_RBAC, names.app_labels(plan.name))


def build_launcher_service_account(plan: JobPlan) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(plan)}


def build_launcher_role(plan: JobPlan) -> dict[str, Any]:
    pods = plan.worker_pod_names
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": _meta(plan),
        "rules": [
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"], "resourceNames": pods},
            {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create"], "resourceNames": list(pods)},
        ],
    }


def build_launcher_role_binding(plan: JobPlan) -> dict[str, Any]:
    name = names.launcher(plan.name)
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": _meta(plan),
        "subjects": [service_account_subject(plan, name)],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
    }
