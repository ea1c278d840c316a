"""Clean-up after the launcher: a small Job that scales the workers to zero once the launcher is done.

mpi-operator v0.2.0 scales the worker StatefulSet to 0 when the launcher Job has finished (always for
v1alpha1; for v1alpha2 when `cleanPodPolicy` is `Running` or `All`). Without the operator, the Job
`<job>-cleanup` does it: it polls the launcher Job and scales `<job>-worker` to 0 once the launcher is
Complete, or Failed after its retries. It runs under its own ServiceAccount whose Role names only this
job's objects, adopts that RBAC at start (ownerReferences to itself) and expires with
`ttlSecondsAfterFinished`, so the garbage collector removes all of it. See docs/runtime.md.
"""

from __future__ import annotations

from typing import Any

from mpigen import names
from mpigen.options import Options
from mpigen.plan import JobPlan
from mpigen.targets.shared.hardening import harden, home_env, tmp_mount, tmp_volume
from mpigen.targets.shared.meta import kubectl_delivery_image, object_meta, service_account_subject
from mpigen.targets.shared.scripts import cleanup_role_rules, render_cleanup_script

# How long the finished clean-up Job (and, through ownerReferences, its RBAC) stays for inspection.
TTL_SECONDS_AFTER_FINISHED = 600
POLL_SECONDS = 30
MISSING_GRACE_SECONDS = 300


def wants_cleanup(plan: JobPlan) -> bool:
    """cleanPodPolicy Running or All, and workers to scale down."""
    return plan.clean_pod_policy in ("Running", "All") and plan.workers > 0


def _names(plan: JobPlan) -> dict[str, str]:
    return {
        "launcher_job": names.launcher(plan.name),
        "statefulset": names.worker_set(plan.name),
        "self_job": names.cleanup(plan.name),
        "self_rbac": names.cleanup(plan.name),
    }


def _meta(plan: JobPlan) -> dict[str, Any]:
    return object_meta(plan, names.cleanup(plan.name), names.COMPONENT_CLEANUP)


def build_cleanup_rbac(plan: JobPlan, options: Options) -> list[dict[str, Any]]:
    if not wants_cleanup(plan):
        return []
    name = names.cleanup(plan.name)
    rbac = "rbac.authorization.k8s.io"
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(plan)},
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "Role",
            "metadata": _meta(plan),
            "rules": cleanup_role_rules(**_names(plan)),
        },
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "RoleBinding",
            "metadata": _meta(plan),
            "subjects": [service_account_subject(plan, name)],
            "roleRef": {"apiGroup": rbac, "kind": "Role", "name": name},
        },
    ]


def render_cleanup(plan: JobPlan) -> str:
    """The clean-up script, shipped in the job's ConfigMap as `cleanup.sh`."""
    return render_cleanup_script(
        **_names(plan), interval_seconds=POLL_SECONDS, missing_grace_seconds=MISSING_GRACE_SECONDS
    )


def build_cleanup_job(plan: JobPlan, options: Options) -> list[dict[str, Any]]:
    if not wants_cleanup(plan):
        return []
    container = {
        "name": names.CLEANUP_CONTAINER,
        # The kubectl-delivery image is alpine with kubectl on PATH: all the script needs.
        "image": kubectl_delivery_image(plan, options),
        "command": ["/bin/sh", f"{names.CONFIG_MOUNT_PATH}/{names.CLEANUP_SCRIPT}"],
        "env": [home_env()],
        "volumeMounts": [{"name": names.CONFIG_VOLUME, "mountPath": names.CONFIG_MOUNT_PATH}, tmp_mount()],
    }
    labels = names.standard_labels(plan.name, names.COMPONENT_CLEANUP)
    return [
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": _meta(plan),
            "spec": {
                "backoffLimit": 6,
                "ttlSecondsAfterFinished": TTL_SECONDS_AFTER_FINISHED,
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "serviceAccountName": names.cleanup(plan.name),
                        "restartPolicy": "OnFailure",
                        "containers": [harden(container)],
                        "volumes": [
                            tmp_volume(),
                            {
                                "name": names.CONFIG_VOLUME,
                                "configMap": {
                                    "name": names.config_map(plan.name),
                                    "items": [
                                        {
                                            "key": names.CLEANUP_SCRIPT,
                                            "path": names.CLEANUP_SCRIPT,
                                            "mode": names.SCRIPT_MODE,
                                        }
                                    ],
                                },
                            },
                        ],
                    },
                },
            },
        }
    ]
