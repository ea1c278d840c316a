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
