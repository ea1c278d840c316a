"""mpigen's end-to-end harness: run rendered MPIJob manifests as Linux namespaces with real Open MPI.

`plan_pods` reads the rendered objects, `Cluster` runs the pods (kubectl is the only stand-in),
`openmpi` finds or installs Open MPI and builds the test program, `ranks` reads what ran where.
"""

from __future__ import annotations

from .cluster import Cluster, ClusterOptions, Run, RunTimeout, StartCluster
from . import netns
from .netns import HarnessError
from .pods import Pod, PlanError, one, parse_hostfile, plan_pods

__all__ = [
    "Cluster",
    "ClusterOptions",
    "HarnessError",
    "netns",
    "PlanError",
    "Pod",
    "Run",
    "RunTimeout",
    "StartCluster",
    "one",
    "parse_hostfile",
    "plan_pods",
]
