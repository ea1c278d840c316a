"""The kinds the operator target emits that Kubernetes does not define: none (its workloads are
StatefulSets and Jobs; a gang's PodGroup is the scheduler's, mpigen.checks.kube.schemas)."""

from __future__ import annotations

from mpigen.targets import Kind

KINDS: tuple[Kind, ...] = ()
