"""The jobset target's names: the JobSet's API, its replicated jobs, the labels JobSet and the Job
controller put on the pods, and the pods' host names (JobSet v0.12: pkg/controllers/jobset_controller.go
constructJob, the Job controller's Indexed hostnames, api/jobset/v1alpha2 labels).
"""

from __future__ import annotations

JOBSET_API = "jobset.x-k8s.io/v1alpha2"
WORKER_RJOB = "worker"
LAUNCHER_RJOB = "launcher"
JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
RJOB_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"
RESTART_ATTEMPT_LABEL = "jobset.sigs.k8s.io/restart-attempt"
COMPLETION_INDEX_LABEL = "batch.kubernetes.io/job-completion-index"
RESTART_ATTEMPT_ENV = "MPIGEN_RESTART_ATTEMPT"
# JobSet's child Jobs `<jobset>-<rjob>-<jobIndex>` and the pods' generated names add
# `-<podIndex>-<5 random characters>`; both must be DNS-1035 labels (JobSet's ValidateCreate).
POD_NAME_RANDOM_SUFFIX = 6


def jobset_pod_host(job: str, replicated_job: str, index: int) -> str:
    """The hostname the Job controller gives pod `index` of the JobSet's only child Job of
    `replicated_job`: `<jobset>-<rjob>-0-<index>` (the JobSet's Service is its subdomain)."""
    return f"{job}-{replicated_job}-0-{index}"
