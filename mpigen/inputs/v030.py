"""The kubeflow.org/v1alpha2 fields mpi-operator v0.3.0 added: `runPolicy`, `mainContainer`, `mpiDistribution`.

v0.2.3 and v0.3.0 (the last release that served v1alpha2) add them to `pkg/apis/kubeflow/v1alpha2/types.go`;
v0.3.0's `pkg/controllers/v1alpha2/mpi_job_controller.go` reads them so:
- `runPolicy` (kubeflow/common v0.3.3 RunPolicy): `newLauncher` takes its `backoffLimit` and
  `activeDeadlineSeconds` over the spec's own, logging that it does; nothing reads its `cleanPodPolicy`
  (the spec's is the one used), `ttlSecondsAfterFinished` or `schedulingPolicy`: those are ignored, with a warning;
- `mainContainer`: `newConfigMap` makes kubexec.sh exec into that container (`--container <name>`), as
  the training-operator's v1 does (mpigen.inputs.v1);
- `mpiDistribution` (`newLauncher`, `newConfigMap`): `IntelMPI` points Hydra's ssh at kubexec.sh
  (`I_MPI_HYDRA_BOOTSTRAP_EXEC`) and its hosts at the hostfile (`I_MPI_HYDRA_HOST_FILE`), `MPICH` the same
  with `HYDRA_LAUNCHER_EXEC` and `HYDRA_HOST_FILE`; both write `host:slots` hostfile lines. `OpenMPI` (or
  none) keeps Open MPI's variables and `host slots=N` lines. The operator target only: the jobset and
  volcano targets' kubexec scripts are Open MPI's, so they refuse the two by name.

What v0.3.0 changed from v0.2.0 for every v1alpha2 job is followed too (`layout`): kubexec.sh skips the
leading `-` arguments an ssh-style caller passes before the pod name, the launcher's `NVIDIA_VISIBLE_DEVICES`
and `NVIDIA_DRIVER_CAPABILITIES` are set empty, and the first Worker container keeps a command the
template gives (`sleep 365d` only when it gives none); under gang scheduling a template's own
`schedulerName` is overwritten (v0.2.0 kept it) and a Volcano PodGroup gets the launcher template's
`priorityClassName` (else the worker's). What mpigen still does otherwise is a numbered row
of docs/departures.md, judged by tests/oracles/test_v1alpha2_differential.py.
"""

from __future__ import annotations

from typing import Any, Literal

from mpigen.errors import Issue, shown
from mpigen.inputs.runpolicy import RunPolicy
from mpigen.plan import Hostnames, Scheduling

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


# mpiDistribution -> mpigen's implementation (mpigen.plan.Implementation)
IMPLEMENTATIONS: dict[str, Literal["OpenMPI", "Intel", "MPICH"]] = {
    "OpenMPI": "OpenMPI",
    "IntelMPI": "Intel",
    "MPICH": "MPICH",
}


def distribution_issues(distribution: str | None, target: str) -> list[Issue]:
    """IntelMPI and MPICH on a target other than the operator's: refused by name."""
    if distribution in (None, "OpenMPI") or target == "operator":
        return []
    message = (
        f"{shown(str(distribution))} is compiled for --target operator only (mpi-operator v0.3.0's "
        f"kubexec.sh and Hydra variables); the {target} target runs Open MPI's kubexec. For {target}, use "
        "apiVersion kubeflow.org/v2beta1 with mpiImplementation "
        f'"{IMPLEMENTATIONS[str(distribution)]}"'
    )
    return [Issue(("spec", "mpiDistribution"), message)]


IFACE_VARIABLES = {"IntelMPI": "I_MPI_HYDRA_IFACE", "MPICH": "HYDRA_IFACE"}


def hydra_iface_warning(distribution: str | None, document: Any) -> list[Issue]:
    """A warning for an IntelMPI or MPICH launcher that names no network interface for Hydra: v0.3.0's
    kubexec.sh made the launcher's host name resolvable in each worker (its hosts file, which mpigen does
    not copy: docs/departures.md, v1alpha2 row 10), so without `I_MPI_HYDRA_IFACE` / `HYDRA_IFACE` (or
    `-iface` on the command) Hydra's proxies cannot dial the launcher back."""
    variable = IFACE_VARIABLES.get(str(distribution))
    if variable is None:
        return []
    launcher = (((document.get("spec") or {}).get("mpiReplicaSpecs") or {}).get("Launcher") or {}) or {}
    containers = ((launcher.get("template") or {}).get("spec") or {}).get("containers") or []
    for container in containers:
        if not isinstance(container, dict):
            continue
        names = {entry.get("name") for entry in container.get("env") or [] if isinstance(entry, dict)}
        words = [str(word) for word in (container.get("command") or []) + (container.get("args") or [])]
        if variable in names or any("-iface" in word for word in words):
            return []
    message = (
        f"the launcher sets no {variable} (nor mpiexec -iface): Hydra's proxies on the workers dial the "
        "launcher back by its host name, which mpi-operator v0.3.0 made resolvable by copying a hosts file "
        f"into each worker and mpigen does not; set {variable} to the pods' interface (eth0) on the "
        "launcher's container"
    )
    return [Issue(("spec", "mpiDistribution"), message, "warning")]


def layout(distribution: str | None, launcher: dict[str, Any], worker: dict[str, Any]) -> dict[str, Any]:
    """JobPlan fields as v0.3.0 creates a v1alpha2 job: the implementation and its hostfile syntax, and
    v0.3.0's changes from v0.2.0 (kubexec.sh's option skipping, the launcher's NVIDIA_* blanked, the
    worker's own command kept, a template's schedulerName overwritten under gang scheduling, the
    PodGroup's priorityClassName the launcher template's, else the worker's)."""
    implementation = IMPLEMENTATIONS[distribution or "OpenMPI"]
    own = [(t.get("spec") or {}).get("priorityClassName") for t in (launcher, worker)]
    priority = next((p for p in own if isinstance(p, str) and p), None)
    return {
        "implementation": implementation,
        "hostnames": Hostnames(slot_syntax="slots=" if implementation == "OpenMPI" else ":"),
        "kubexec_skips_options": True,
        "blank_launcher_gpus": True,
        "worker_keeps_command": True,
        "scheduling": Scheduling(overwrite_scheduler_name=True, priority_class=priority),
    }
