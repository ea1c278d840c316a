"""The ConfigMap `<job>-config`: the hostfile mpirun reads and the kubexec.sh agent it starts ranks with.

mpi-operator v0.2.0 `newConfigMap`, plus the scripts that stand in for the operator at run time
(`wait-for-workers.sh` for the launcher; `cleanup.sh` for the clean-up Job when the job cleans up), so
that the manifests stay short and every script is reviewed in one place.
"""

from __future__ import annotations

from typing import Any

from mpigen import names
from mpigen.build import object_meta
from mpigen.build.cleanup import render_cleanup, wants_cleanup
from mpigen.options import Options
from mpigen.plan import JobPlan
from mpigen.runtime_scripts import render_wait_script
from mpigen.templating import render


def render_hostfile(plan: JobPlan) -> str:
    """One line per worker pod: `<job>-worker-<i> slots=<n>`."""
    return render("hostfile.j2", pods=plan.worker_pod_names, slots=plan.slots_per_worker)


def render_kubexec() -> str:
    """Open MPI's rsh agent: run the orted command line in the named worker pod via kubectl exec."""
    return render("kubexec.sh.j2", kubectl=names.KUBECTL_PATH)


def render_wait(plan: JobPlan, options: Options) -> str:
    """The launcher's wait-for-workers script: polls the worker pods by name with the delivered kubectl."""
    return render_wait_script(
        pod_prefix=names.worker_set(plan.name),
        workers=plan.workers,
        kubectl=names.KUBECTL_PATH,
        timeout_seconds=options.wait_timeout_seconds,
    )


def build_config_map(plan: JobPlan, options: Options) -> dict[str, Any]:
    data = {
        names.HOSTFILE: render_hostfile(plan),
        names.KUBEXEC_SCRIPT: render_kubexec(),
        names.WAIT_SCRIPT: render_wait(plan, options),
    }
    if wants_cleanup(plan):
        data[names.CLEANUP_SCRIPT] = render_cleanup(plan)
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": object_meta(plan, names.config_map(plan.name), names.COMPONENT_CONFIG, names.app_labels(plan.name)),
        "data": data,
    }
