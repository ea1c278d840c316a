"""The names the operator target adds to the job's pods, which the user's pod templates may not use
(mpigen.checks.rules.check_plan says so, with the field path): volumes `mpi-job-config` and
`mpi-job-kubectl`, `mpi-job-tmp` and `mpi-job-api-token`, init containers `kubectl-delivery` and
`wait-for-workers`, the launcher's `OMPI_MCA_*` variables, mounts at `/etc/mpi` and `/opt/kube`; with
SSH, the SSH volume and mount, the role and MPI variables.
"""

from __future__ import annotations

from mpigen import names
from mpigen.checks.rules import Added
from mpigen.plan import JobPlan
from mpigen.targets.shared import mpi_env
from mpigen.targets.shared.hardening import API_TOKEN_VOLUME, TMP_VOLUME

_ADDED: Added = {
    "launcher": (
        (names.CONFIG_VOLUME, names.KUBECTL_VOLUME, TMP_VOLUME),
        (names.KUBECTL_DELIVERY, names.WAIT_FOR_WORKERS),
        names.LAUNCHER_ENV,
        (names.CONFIG_MOUNT_PATH, names.KUBECTL_MOUNT_PATH),
    ),
    "worker": ((names.CONFIG_VOLUME,), (), (), (names.CONFIG_MOUNT_PATH,)),
}


def added(plan: JobPlan) -> Added:
    """What the builders add to each role's pod, for this plan's transport."""
    if plan.ssh is None:
        if not plan.blank_launcher_gpus and plan.implementation == "OpenMPI":
            return _ADDED
        volumes, inits, _, mounts = _ADDED["launcher"]
        env = mpi_env.kubexec_reserved(plan.implementation)
        env += names.NVIDIA_ENV if plan.blank_launcher_gpus else ()
        return {**_ADDED, "launcher": (volumes, inits, env, mounts)}
    ssh_path = plan.ssh.mount_path.rstrip("/")
    env = (names.JOB_ROLE_ENV, *mpi_env.reserved(plan.implementation))
    env += names.NVIDIA_ENV if plan.blank_launcher_gpus else ()
    inits = (names.WAIT_FOR_WORKERS,) if plan.waits_for_workers else ()
    return {
        "launcher": (
            (names.SSH_VOLUME, names.CONFIG_VOLUME, TMP_VOLUME, API_TOKEN_VOLUME),
            inits,
            env,
            (ssh_path, names.CONFIG_MOUNT_PATH),
        ),
        "worker": ((names.SSH_VOLUME,), (), (names.JOB_ROLE_ENV,), (ssh_path,)),
    }
