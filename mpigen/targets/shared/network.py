"""The opt-in NetworkPolicy `<job>` (`--network-policy same-job`): traffic into the job's pods only from
the same job's pods.

The operators render none. It selects the launcher and worker pods by the operator's labels that both
carry (`mpi_job_name` for v1alpha1 and v1alpha2, `training.kubeflow.org/job-name` and `operator-name` for
v1 and v2beta1; the operator sets them over the template's own, so a template cannot move a pod out of
it), and admits ingress from exactly those pods: SSH from the launcher to the workers and mpirun's
connections back. Egress is left alone: the launcher's wait, the clean-up and the key Jobs talk to the
API server, and `kubectl exec` (kubexec.sh) goes through the API server and the kubelet, not the pod
network. The clean-up and key Jobs' pods receive no traffic and are not selected.
"""

from __future__ import annotations

from typing import Any

from mpigen.options import Options
from mpigen.plan import JobPlan
from mpigen.targets.shared.meta import object_meta

SAME_JOB = "same-job"
COMPONENT = "network"


def job_pod_labels(plan: JobPlan) -> dict[str, str]:
    """The operator's labels that the launcher and worker pods have in common."""
    launcher, worker = plan.labels.launcher_pod, plan.labels.worker_pod
    return {key: value for key, value in sorted(launcher.items()) if worker.get(key) == value}


def build_network_policy(plan: JobPlan, options: Options) -> list[dict[str, Any]]:
    if options.network_policy != SAME_JOB:
        return []
    selector = {"matchLabels": job_pod_labels(plan)}
    return [
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": object_meta(plan, plan.name, COMPONENT, plan.labels.other),
            "spec": {
                "podSelector": selector,
                "policyTypes": ["Ingress"],
                "ingress": [{"from": [{"podSelector": dict(selector)}]}],
            },
        }
    ]
