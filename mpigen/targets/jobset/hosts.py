"""Host names on the jobset target: what the hostfile, discover_hosts.sh and kubexec.sh call each pod.

The Job controller gives pod `i` of an Indexed Job the hostname `<job name>-<i>`, and JobSet names its
one child Job of a replicated job `<jobset>-<replicated job>-0` and sets the pods' subdomain to the
JobSet's headless Service `<jobset>` (JobSet v0.12 `constructJob`, with `network.enableDNSHostnames`).
So worker `i` is `<job>-worker-0-<i>`, the launcher `<job>-launcher-0-0`. With SSH the hostfile gives
the DNS name `<host>.<job>.<ns>.svc[.<domain>]` (`<host>.<job>` without a namespace: the pod's search
path completes it); the kubectl-exec transport needs no DNS and lists the bare host names, which
kubexec.sh maps to pods.
"""

from __future__ import annotations

from mpigen import names
from mpigen.plan import JobPlan
from mpigen.targets.jobset import names as jobset_names


def worker_hosts(plan: JobPlan) -> list[str]:
    return [jobset_names.jobset_pod_host(plan.name, jobset_names.WORKER_RJOB, i) for i in range(plan.workers)]


def launcher_host(plan: JobPlan) -> str:
    return jobset_names.jobset_pod_host(plan.name, jobset_names.LAUNCHER_RJOB, 0)


def hosts(plan: JobPlan) -> list[str]:
    """The hostfile's hosts in rank order: the launcher first when it runs ranks, then the workers."""
    pods = ([launcher_host(plan)] if plan.hostnames.launcher_first else []) + worker_hosts(plan)
    if plan.kubexec:
        return pods
    return [names.host(pod, plan.name, plan.namespace, plan.hostnames.cluster_domain) for pod in pods]


def first_host(plan: JobPlan) -> str:
    """hosts(plan)[0] without building the others (the bare launcher host when there is none)."""
    if plan.hostnames.launcher_first:
        pod = launcher_host(plan)
    elif plan.workers:
        pod = jobset_names.jobset_pod_host(plan.name, jobset_names.WORKER_RJOB, 0)
    else:
        return launcher_host(plan)
    return pod if plan.kubexec else names.host(pod, plan.name, plan.namespace, plan.hostnames.cluster_domain)
