"""The launcher's MPI environment: one table per transport and MPI implementation.

Kept in one place so that the end-to-end runs (tests/e2e) can adjust it without touching a builder.
`{hostfile}`, `{agent}` and `{slots}` in a value are filled in by `launcher_env`.

SSH (kubeflow.org/v2beta1): mpi-operator v0.8.2 `newLauncherPodTemplate` sets the Open MPI 4 (ORTE)
variables, the Intel MPI `I_MPI_HYDRA_*` pair plus `I_MPI_PERHOST`, and MPICH's `HYDRA_*` pair. Open
MPI 5 reads none of the ORTE names (kubeflow/mpi-operator#842): its runtime, PRRTE 3.0, reads
`PRTE_MCA_*`. mpigen adds the PRRTE equivalents after the operator's; `prte_keep_fqdn_hostnames` is
set to false explicitly (its default), because with true PRRTE does not recognise the launcher's own
FQDN entry as the local host and tries to ssh to itself (kubeflow/trainer#4028), and PRRTE >= 3.0.3
would otherwise copy the ORTE `true` over.

kubectl exec (v1alpha1, v1alpha2, v1): Open MPI's rsh agent is kubexec.sh; mpigen adds
`no_tree_spawn` (beyond 64 hosts daemons would start further daemons, and only the launcher has kubectl).
A v1alpha2 `mpiDistribution` of IntelMPI or MPICH (mpi-operator v0.3.0 `newLauncher`) points Hydra's
ssh at kubexec.sh instead: `I_MPI_HYDRA_BOOTSTRAP_EXEC` and `I_MPI_HYDRA_HOST_FILE`, or
`HYDRA_LAUNCHER_EXEC` and `HYDRA_HOST_FILE`.
The training-operator (v1) also points Intel MPI's Hydra at kubexec.sh (`I_MPI_HYDRA_BOOTSTRAP=rsh`,
`I_MPI_HYDRA_BOOTSTRAP_EXEC`), each only when the launcher's template does not set it.

Reserved (`reserved`): exactly the variables the operator sets, which a template may not set too. The
ones mpigen adds beyond the operator (`MPIGEN_ONLY`: the PRRTE names and `no_tree_spawn`) are the user's
to override: a launcher template that sets one keeps its own value and mpigen leaves its entry out
(`PRTE_MCA_plm_ssh_args` for sshd on another port, say).
"""

from __future__ import annotations

from mpigen import names

SSH_ARGS = "-o ConnectionAttempts=10"

# implementation -> (name, value) in order, for the SSH transport.
SSH_ENV: dict[str, tuple[tuple[str, str], ...]] = {
    "OpenMPI": (
        ("OMPI_MCA_orte_keep_fqdn_hostnames", "true"),
        ("OMPI_MCA_orte_default_hostfile", "{hostfile}"),
        ("OMPI_MCA_plm_rsh_args", SSH_ARGS),
        ("OMPI_MCA_orte_set_default_slots", "{slots}"),
        ("PRTE_MCA_prte_default_hostfile", "{hostfile}"),
        ("PRTE_MCA_prte_set_default_slots", "{slots}"),
        ("PRTE_MCA_plm_ssh_args", SSH_ARGS),
        ("PRTE_MCA_prte_keep_fqdn_hostnames", "false"),
    ),
    "Intel": (
        ("I_MPI_HYDRA_HOST_FILE", "{hostfile}"),
        ("I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", SSH_ARGS),
        ("I_MPI_PERHOST", "{slots}"),
    ),
    "MPICH": (
        ("HYDRA_HOST_FILE", "{hostfile}"),
        ("HYDRA_LAUNCH_EXTRA_ARGS", SSH_ARGS),
    ),
}

# implementation -> (name, value) in order, for the kubectl-exec transport. Open MPI's names stay in
# names.py: the rules and the e2e tests read them there.
KUBEXEC_ENV: dict[str, tuple[tuple[str, str], ...]] = {
    "OpenMPI": (
        (names.RSH_AGENT_ENV, "{agent}"),
        (names.HOSTFILE_ENV, "{hostfile}"),
        (names.NO_TREE_SPAWN_ENV, "1"),
    ),
    "Intel": ((names.HYDRA_BOOTSTRAP_EXEC_ENV, "{agent}"), ("I_MPI_HYDRA_HOST_FILE", "{hostfile}")),
    "MPICH": (("HYDRA_LAUNCHER_EXEC", "{agent}"), ("HYDRA_HOST_FILE", "{hostfile}")),
}


# training-operator release-1.9 newLauncher (`iMPIDefaultBootstrap`), after the Open MPI variables.
HYDRA_KUBEXEC_ENV: tuple[tuple[str, str], ...] = (
    (names.HYDRA_BOOTSTRAP_ENV, "rsh"),
    (names.HYDRA_BOOTSTRAP_EXEC_ENV, "{agent}"),
)


# The variables of the tables above that no operator sets (mpi-operator v0.8.2
# pkg/controller/mpi_job_controller.go: ompiEnvVars, intelEnvVars, mpichEnvVars; v0.2.0 newLauncher).
MPIGEN_ONLY = frozenset(
    {
        "PRTE_MCA_prte_default_hostfile",
        "PRTE_MCA_prte_set_default_slots",
        "PRTE_MCA_plm_ssh_args",
        "PRTE_MCA_prte_keep_fqdn_hostnames",
        names.NO_TREE_SPAWN_ENV,
    }
)


def table(kubexec: bool, implementation: str) -> tuple[tuple[str, str], ...]:
    return KUBEXEC_ENV[implementation] if kubexec else SSH_ENV[implementation]


def kubexec_reserved(implementation: str) -> tuple[str, ...]:
    """The kubectl-exec transport's launcher variables a template may not set: those the operator sets."""
    return tuple(name for name, _ in KUBEXEC_ENV[implementation] if name not in MPIGEN_ONLY)


def reserved(implementation: str) -> tuple[str, ...]:
    """The SSH transport's launcher variables a template may not set: those the operator sets."""
    return tuple(name for name, _ in SSH_ENV[implementation] if name not in MPIGEN_ONLY)


def _entries(pairs: tuple[tuple[str, str], ...], slots: int) -> list[dict[str, str]]:
    values = {
        "hostfile": f"{names.CONFIG_MOUNT_PATH}/{names.HOSTFILE}",
        "agent": f"{names.CONFIG_MOUNT_PATH}/{names.KUBEXEC_SCRIPT}",
        "slots": str(slots),
    }
    return [{"name": name, "value": value.format(**values)} for name, value in pairs]


def launcher_env(
    kubexec: bool, implementation: str, slots: int, own: frozenset[str] = frozenset()
) -> list[dict[str, str]]:
    """The launcher's MPI variables, in order, as container env entries; those of mpigen's own that the
    template sets itself (`own`: the names of its first container's env) are left out."""
    pairs = tuple(
        pair for pair in table(kubexec, implementation) if pair[0] not in own or pair[0] not in MPIGEN_ONLY
    )
    return _entries(pairs, slots)


def hydra_bootstrap_env(own: set[str]) -> list[dict[str, str]]:
    """Intel MPI's bootstrap through kubexec.sh, leaving out each variable the template sets (`own`)."""
    return [entry for entry in _entries(HYDRA_KUBEXEC_ENV, 1) if entry["name"] not in own]
