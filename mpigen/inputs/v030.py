"""The kubeflow.org/v1alpha2 fields mpi-operator v0.3.0 added: `runPolicy`, `mainContainer`, `mpiDistribution`.

v0.2.3 and v0.3.0 (the last release that served v1alpha2) add them to `pkg/apis/kubeflow/v1alpha2/types.go`;
v0.3.0's `pkg/controllers/v1alpha2/mpi_job_controller.go` reads them so:
- `runPolicy` (kubeflow/common v0.3.3 RunPolicy): `newLauncher` takes its `backoffLimit` and
  `activeDeadlineSeconds` over the spec's own, logging that it does; nothing reads its `cleanPodPolicy`
  (the spec's is the one used), `ttlSecondsAfterFinished` or `schedulingPolicy`: those are ignored, with a warning;
- `mainContainer`: `newConfigMap` makes kubexec.sh exec into that container (`--container <name>`), as
  the training-operator's v1 does (mpigen.inputs.v1);
- `mpiDistribution`: `OpenMPI` (or none) is v0.2.0's behaviour. `IntelMPI` and `MPICH` change the launcher's
  variables, the hostfile's syntax and v0.3.0's kubexec.sh (which copies an /etc/hosts of the workers into
  each one before the exec); mpigen does not compile those yet and says so, pointing at v2beta1's
  `mpiImplementation`.
"""

from __future__ import annotations

from typing import Any, Literal

from mpigen.errors import Issue, shown
from mpigen.inputs.runpolicy import RunPolicy

MPIDistribution = Literal["OpenMPI", "IntelMPI", "MPICH"]
RUN_POLICY = ("spec", "runPolicy")
_READ = ("backoffLimit", "activeDeadlineSeconds")


def run_policy_issues(policy: RunPolicy | None) -> list[Issue]:
    """Errors for what would fail the launcher, warnings for what v0.3.0 does not read."""
    if policy is None:
        return []
    issues = []
    if policy.activeDeadlineSeconds == 0:
        message = "must be >= 1, got 0 (a launcher Job with a deadline of 0 fails at once)"
        issues.append(Issue((*RUN_POLICY, "activeDeadlineSeconds"), message))
    for field in ("cleanPodPolicy", "ttlSecondsAfterFinished", "schedulingPolicy", "suspend", "managedBy"):
        if getattr(policy, field) is not None:
            home = " (spec.cleanPodPolicy is the one it reads)" if field == "cleanPodPolicy" else ""
            message = f"ignored, as mpi-operator v0.3.0 ignores it in a v1alpha2 job{home}"
            issues.append(Issue((*RUN_POLICY, field), message, "warning"))
    return issues


def run_values(spec: Any) -> tuple[int | None, int | None, list[Issue]]:
    """(backoffLimit, activeDeadlineSeconds) as v0.3.0 `newLauncher` takes them: runPolicy's over the
    spec's; a warning where both are written and runPolicy's wins."""
    backoff, deadline = spec.backoffLimit, spec.activeDeadlineSeconds
    policy: RunPolicy | None = spec.runPolicy
    warnings = []
    if policy is not None:
        for field in _READ:
            value = getattr(policy, field)
            if value is None:
                continue
            if getattr(spec, field) is not None and getattr(spec, field) != value:
                message = f"replaced by runPolicy.{field} ({value}), as mpi-operator v0.3.0 replaces it"
                warnings.append(Issue(("spec", field), message, "warning"))
            if field == "backoffLimit":
                backoff = value
            else:
                deadline = value
    return backoff, deadline, warnings


def distribution_issues(distribution: str | None) -> list[Issue]:
    if distribution in (None, "OpenMPI"):
        return []
    message = (
        f"{shown(str(distribution))} is not compiled for v1alpha2 yet (mpi-operator v0.3.0's own kubexec.sh "
        "and variables); use apiVersion kubeflow.org/v2beta1 with mpiImplementation "
        f'"{"Intel" if distribution == "IntelMPI" else "MPICH"}"'
    )
    return [Issue(("spec", "mpiDistribution"), message)]
