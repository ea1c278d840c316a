"""The job plan: one normalised description of an MPI job, whatever input version it came from.

Each input front (`mpigen.api.*`) turns its apiVersion into a `JobPlan`: it resolves defaults, sizing
and version-specific edits to the pod templates (v1alpha1 strips the launcher's resources, sets the
workers' processing limit, ...). The builders (`mpigen.build.*`) then add the MPI machinery that is
the same for every version. A new input version is a new front; a new object is a new builder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from mpigen.errors import Issue, Path

CleanPodPolicy = Literal["None", "Running", "All"]


@dataclass(frozen=True)
class JobPlan:
    """Everything the builders need, already defaulted and checked."""

    api_version: str
    name: str
    # Namespace for metadata.namespace and the RoleBindings' ServiceAccount subjects; None leaves it
    # out of both (`kubectl apply -n` decides, and a subject without one is the binding's namespace).
    namespace: str | None
    workers: int
    slots_per_worker: int
    # Pod templates after the front's version-specific edits, before the MPI machinery is added.
    launcher_template: dict[str, Any]
    worker_template: dict[str, Any]
    backoff_limit: int
    active_deadline_seconds: int | None
    clean_pod_policy: CleanPodPolicy
    warnings: tuple[Issue, ...] = field(default=())
    # Where each template sits in the input document ("launcher", "worker"), for messages.
    template_paths: dict[str, Path] = field(default_factory=dict)
    # Where the worker count comes from in the input document, for messages about it.
    workers_path: Path = ("spec",)

    @property
    def worker_pod_names(self) -> list[str]:
        from mpigen import names

        return names.worker_pods(self.name, self.workers)
