"""The ConfigMap `<job>-config`: the hostfile mpirun reads and the scripts the job's pods run.

mpi-operator v0.2.0 `newConfigMap` (hostfile, kubexec.sh), the training-operator's (the same, with
`--container` for mainContainer and discover_hosts.sh) and v0.8.2 `newConfigMap` (hostfile in the
implementation's syntax, discover_hosts.sh), plus the scripts that stand in for the operator at run
time (`wait-for-workers.sh` for the launcher; `cleanup.sh` for the clean-up Job when the job cleans
up), so that the manifests stay short and every script is reviewed in one place. The files every
target's launcher reads are rendered by mpigen.targets.shared.hostfile.
"""

from __future__ import annotations

from typing import Any

from mpigen import names
from mpigen.options import Options
from mpigen.plan import JobPlan
from mpigen.targets.operator.cleanup import render_cleanup, wants_cleanup
from mpigen.targets.shared.hostfile import render_discover_hosts, render_hostfile, render_kubexec, render_wait
from mpigen.targets.shared.meta import object_meta
from mpigen.targets.shared.ssh import generates_keys, render_keygen

# The scripts of the last job rendered: its size check (build/limits.py) and its ConfigMap both need
# them, and rendering them is a good part of building a small job. Only the very same plan and
# options objects get them back, so this is never seen from outside.
_LAST: list[tuple[JobPlan, Options, dict[str, str]]] = []


def config_scripts(plan: JobPlan, options: Options) -> dict[str, str]:
    """The ConfigMap's entries whose size does not grow with the worker count."""
    last = _LAST[0] if _LAST else None
    if last is not None and last[0] is plan and last[1] is options:
        return dict(last[2])
    data = _render_scripts(plan, options)
    _LAST[:] = [(plan, options, data)]
    return dict(data)


def _render_scripts(plan: JobPlan, options: Options) -> dict[str, str]:
    data = {}
    if plan.kubexec:
        data[names.KUBEXEC_SCRIPT] = render_kubexec(plan)
    if plan.waits_for_workers:
        data[names.WAIT_SCRIPT] = render_wait(plan, options)
    if wants_cleanup(plan):
        data[names.CLEANUP_SCRIPT] = render_cleanup(plan)
    if generates_keys(plan):
        data[names.KEYGEN_SCRIPT] = render_keygen(plan)
    return data


def config_data(plan: JobPlan, options: Options) -> dict[str, str]:
    data = {names.HOSTFILE: render_hostfile(plan)}
    if plan.discover_hosts:
        data[names.DISCOVER_HOSTS_SCRIPT] = render_discover_hosts(plan)
    return {**data, **config_scripts(plan, options)}


def build_config_map(plan: JobPlan, options: Options) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": object_meta(plan, names.config_map(plan.name), names.COMPONENT_CONFIG, plan.labels.other),
        "data": config_data(plan, options),
    }
