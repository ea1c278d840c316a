"""mpigen's end-to-end harness: run rendered MPIJob manifests as Linux namespaces with real Open MPI.

`plan_pods` reads the rendered objects, `Cluster` runs the pods (kubectl is the only stand-in),
`openmpi` finds or installs Open MPI and builds the test program, `ranks` reads what ran where.
"""

from __future__ import annotations

from . import controllers, netns
from .cluster import Cluster, StartCluster
from .netns import HarnessError
from .pods import PlanError, Pod, one, parse_hostfile, plan_pods
from .values import ClusterOptions, Run, RunTimeout

__all__ = [
    "Cluster",
    "ClusterOptions",
    "HarnessError",
    "PlanError",
    "Pod",
    "Run",
    "RunTimeout",
    "StartCluster",
    "controllers",
    "netns",
    "one",
    "parse_hostfile",
    "plan_pods",
]
