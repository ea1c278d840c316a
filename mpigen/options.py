"""Options: every knob of a compile, as one frozen value (the counterpart of black's `Mode`).

Defaults are those of the mpi-operator v0.2.0 as shipped (`deploy/3-mpi-operator.yaml` passes
`--gpus-per-node 8` and `--kubectl-delivery-image mpioperator/kubectl-delivery:latest`;
`cmd/mpi-operator.v1alpha1/main.go` defaults the rest).
"""

from __future__ import annotations

from dataclasses import dataclass

GPU_RESOURCE = "nvidia.com/gpu"
CPU_RESOURCE = "cpu"
PROCESSING_RESOURCE_TYPES = (GPU_RESOURCE, CPU_RESOURCE)

DEFAULT_KUBECTL_DELIVERY_IMAGE = "mpioperator/kubectl-delivery:latest"
DEFAULT_WAIT_TIMEOUT_SECONDS = 600

VOLCANO = "volcano"
SCHEDULER_PLUGINS = "scheduler-plugins"
GANG_SCHEDULERS = (VOLCANO, SCHEDULER_PLUGINS)
# The scheduler a gang scheduler's pods name: Volcano's own, and the profile name of the
# scheduler-plugins scheduler when it runs beside the default scheduler (its Helm chart's default).
DEFAULT_SCHEDULER_NAMES = {VOLCANO: "volcano", SCHEDULER_PLUGINS: "scheduler-plugins-scheduler"}


@dataclass(frozen=True)
class Options:
    """How to compile. Fields set on a job's spec take precedence over the per-node defaults here."""

    gpus_per_node: int = 8
    processing_units_per_node: int = 1
    processing_resource_type: str = GPU_RESOURCE
    kubectl_delivery_image: str = DEFAULT_KUBECTL_DELIVERY_IMAGE
    # Namespace for objects whose job names none. None: leave metadata.namespace out, so that
    # `kubectl apply -n NS` decides.
    namespace: str | None = None
    # How long the launcher's wait-for-workers init container waits for every worker pod to be Ready.
    wait_timeout_seconds: int = DEFAULT_WAIT_TIMEOUT_SECONDS
    # Gang scheduling: None (off), "volcano" or "scheduler-plugins".
    gang_scheduler: str | None = None
    # schedulerName for the job's pods under gang scheduling; None: the gang scheduler's default.
    scheduler_name: str | None = None
    # Check pod templates and every emitted object against Kubernetes' strict schemas of this version
    # ("1.25" .. "1.37"; None: the newest shipped).
    validate: bool = True
    kube_version: str | None = None

    @property
    def effective_scheduler_name(self) -> str | None:
        if self.gang_scheduler is None:
            return None
        return self.scheduler_name or DEFAULT_SCHEDULER_NAMES[self.gang_scheduler]
