"""The size of a TrainJob's hostfile ConfigMap on the jobset target, computed without building it.

Trainer's MPI plugin writes one hostfile line per host (`<job>-<rjob>-0-<index>.<subdomain><slots>`: every
pod of the `node` job, and of the launcher when it runs as a node), so the ConfigMap `<job>-mpi-hostfile`
grows with `numNodes`. Its data (1 MiB a ConfigMap holds) and the annotation client-side `kubectl apply`
adds to it (256 KiB of annotations, reached first) are checked at every node count in time independent
of that count, as an MPIJob's ConfigMap is (mpigen.targets.shared.sizes), and the largest `numNodes` that
fits is named. What does not grow with `numNodes` (the JobSet with the runtime's pod templates, the
PodGroup, the key Job) is measured once built (mpigen.checks.objectsize).
"""

from __future__ import annotations

from collections.abc import Callable

from mpigen import names
from mpigen.checks.objectsize import ANNOTATIONS_MAX_BYTES, last_applied_bytes
from mpigen.errors import Issue
from mpigen.inputs import trainer_names
from mpigen.plan import TrainPlan
from mpigen.targets.jobset.trainjob import SLOT_SEPARATOR, hostfile_config_map, pod_counts
from mpigen.targets.shared.sizes import CONFIG_MAP_MAX_BYTES, digit_count_sum, largest_fitting

NUM_NODES = ("spec", "trainer", "numNodes")


def _host_counts(plan: TrainPlan) -> list[tuple[str, int]]:
    """(replicated job, pods) of the jobs whose pods are the hostfile's hosts (trainjob.hosts)."""
    jobs = plan.jobset_spec.get("replicatedJobs") or []
    return [
        (job["name"], count)
        for job, count in zip(jobs, pod_counts(plan), strict=True)
        if job["name"] == trainer_names.NODE_RJOB
        or (job["name"] == trainer_names.LAUNCHER_RJOB and plan.run_launcher_as_node)
    ]


def hostfile_bytes(plan: TrainPlan) -> tuple[int, int]:
    """(the hostfile's length in bytes, its lines), computed without writing it (trainjob.build_hostfile:
    host names and slot counts need no escaping in JSON but the newline, two bytes there)."""
    subdomain = (plan.jobset_spec.get("network") or {}).get("subdomain") or plan.name
    tail = len(f".{subdomain}{SLOT_SEPARATOR[plan.implementation]}{plan.slots}\n")
    size = lines = 0
    for job, count in _host_counts(plan):
        size += count * (len(f"{plan.name}-{job}-0-") + tail) + digit_count_sum(count)
        lines += count
    return size, lines


def config_map_bytes(plan: TrainPlan) -> int:
    """The ConfigMap's data as the API server counts it (keys and values)."""
    return len(names.HOSTFILE) + hostfile_bytes(plan)[0]


def config_map_applied_bytes(plan: TrainPlan) -> int:
    """The ConfigMap's annotations once client-side `kubectl apply` adds its own."""
    size, lines = hostfile_bytes(plan)
    return last_applied_bytes(hostfile_config_map(plan, ""), size + lines)


def _limits(plan: TrainPlan) -> list[tuple[str, Callable[[TrainPlan], int], int, str]]:
    """The hostfile ConfigMap's limits: what is measured, its size for a plan, the limit and how the message
    names it (data first: a job over both is named by its data's)."""
    what = f"the ConfigMap {trainer_names.trainjob_hostfile(plan.name)}"
    applied = " with the last-applied-configuration annotation client-side `kubectl apply` adds"
    return [
        (what, config_map_bytes, CONFIG_MAP_MAX_BYTES, "1 MiB a ConfigMap holds"),
        (
            what + applied,
            config_map_applied_bytes,
            ANNOTATIONS_MAX_BYTES,
            "256 KiB of annotations the API server accepts",
        ),
    ]


def _at_nodes(plan: TrainPlan, measure: Callable[[TrainPlan], int]) -> Callable[[int], int]:
    """`measure` as a function of the TrainJob's numNodes."""
    return lambda nodes: measure(plan.replace(num_nodes=nodes))


def check(plan: TrainPlan) -> list[Issue]:
    """One issue when the hostfile ConfigMap passes a limit, at spec.trainer.numNodes, naming the largest
    numNodes that fits every limit (a binary search: constant time and memory in the node count)."""
    limits = _limits(plan)
    over = [(what, measure(plan), shown) for what, measure, limit, shown in limits if measure(plan) > limit]
    if not over:
        return []
    hosts = sum(count for _, count in _host_counts(plan))
    upper = plan.num_nodes if plan.num_nodes is not None else hosts
    fits = min(largest_fitting(_at_nodes(plan, measure), limit, upper) for _, measure, limit, _ in limits)
    what, size, shown = over[0]
    largest = (
        f"the largest numNodes that fits is {fits:,} (with numProcPerNode {plan.slots} and this job name)"
        if fits
        else f'no numNodes fits: the pods of {plan.runtime[0]} "{plan.runtime[1]}"\'s trainer job are hosts too'
    )
    message = f"{hosts:,} hosts do not fit: {what} would be {size:,} bytes, over the {shown}; {largest}"
    return [Issue(NUM_NODES, message)]
