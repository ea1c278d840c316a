"""The files every target's launcher reads from its ConfigMap: the hostfile mpirun reads, Horovod's
discover_hosts.sh, Open MPI's rsh agent kubexec.sh and the wait-for-workers script.

mpi-operator v0.2.0 `newConfigMap` (hostfile, kubexec.sh), the training-operator's (the same, with
`--container` for mainContainer and discover_hosts.sh) and v0.8.2 `newConfigMap` (hostfile in the
implementation's syntax, discover_hosts.sh). Each target puts them in its own ConfigMap (the operator
target's mpigen.targets.operator.configmap, the volcano target's Job).
"""

from __future__ import annotations

from mpigen import names
from mpigen.options import Options
from mpigen.plan import JobPlan
from mpigen.targets.shared.scripts import render_wait_script
from mpigen.targets.shared.templating import render

# The hostfile's slot syntax: Open MPI `host slots=N`; Intel MPI and MPICH (Hydra) `host:N`.
SEPARATORS = {"slots=": " slots=", ":": ":"}


def host_list_keys(plan: JobPlan) -> tuple[str, ...]:
    """The ConfigMap keys whose values grow with the worker count."""
    return (names.HOSTFILE, names.DISCOVER_HOSTS_SCRIPT) if plan.discover_hosts else (names.HOSTFILE,)


def render_hostfile(plan: JobPlan, hosts: list[str] | None = None) -> str:
    """One line per host (`hosts`, else the plan's): `<job>-worker-<i> slots=<n>`, or its DNS name in
    the implementation's syntax."""
    separator = SEPARATORS[plan.hostnames.slot_syntax]
    hosts = plan.host_names() if hosts is None else hosts
    return render("hostfile.j2", hosts=hosts, separator=separator, slots=plan.slots_per_worker)


def render_discover_hosts(plan: JobPlan, hosts: list[str] | None = None) -> str:
    """Horovod elastic's host list: every host of the hostfile, without slots (v0.8.2) or as
    `host:slots` (training-operator).

    The operators rewrite it on every sync to list the Running worker pods; a static file lists them
    all, as they are once the job runs (docs/runtime.md)."""
    hosts = plan.host_names() if hosts is None else hosts
    if plan.discover_hosts == "slots":
        hosts = [f"{host}:{plan.slots_per_worker}" for host in hosts]
    return render("discover_hosts.sh.j2", hosts=hosts)


def render_kubexec(plan: JobPlan) -> str:
    """Open MPI's rsh agent (or Hydra's ssh): run the command line in the named worker pod via kubectl
    exec (in the job's `mainContainer`, if it names one). `kubexec_skips_options` (mpi-operator v0.3.0
    `newConfigMap`): the leading `-` arguments an ssh-style caller passes before the host are skipped."""
    return render(
        "kubexec.sh.j2",
        kubectl=names.KUBECTL_PATH,
        container=plan.exec_container,
        skip_options=plan.kubexec_skips_options,
    )


def render_wait(plan: JobPlan, options: Options) -> str:
    """The launcher's wait-for-workers script: polls the worker pods by name with kubectl (delivered
    into /opt/kube for the kubectl-exec transport; else the kubectl-delivery image's own)."""
    return render_wait_script(
        pod_prefix=names.worker_set(plan.name),
        workers=plan.workers,
        kubectl=names.KUBECTL_PATH if plan.kubexec else "kubectl",
        timeout_seconds=options.wait_timeout_seconds,
    )
