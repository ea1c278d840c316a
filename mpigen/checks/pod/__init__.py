"""The API server's pod validation, offline: one table of small checks organised as Kubernetes'
`pkg/apis/core/validation` (ValidatePodTemplateSpec and what it calls), run on every pod template of
every emitted object. Each row names its family, the Kubernetes version whose rules it follows, and
the check; a check yields each `Violation` with the field path and words the server would use.

A row whose check can only find something in a field most templates lack (annotations, probes,
lifecycle hooks, pod-level resources, `os`, Windows options, `hostUsers`, node selectors, affinity,
topology spread, tolerations) names its check as "module.function" with that gate (`when`): the module
loads, and the check runs, only for a template the gate lets through. A gate is true whenever the check
could yield anything (tests/unit/checks/test_pod_gates.py holds each check to its gate).

Pod templates are found by a table of paths per kind (mpigen.checks.templates): Kubernetes' kinds
there, a run target's own kinds in its `kinds` module (mpigen.targets.Kind). The rules follow the server's defaulting: a field the server fills in when it is
empty (dnsPolicy, imagePullPolicy, a port's protocol, a probe's thresholds) is never refused empty.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterator
from typing import Any

from mpigen.checks.pod import (
    containers,
    env,
    metadata,
    mounts,
    names,
    ports,
    resources,
    security,
    spec,
    volumes,
)
from mpigen.checks.pod.field import Path, Violation, server_path
from mpigen.checks.pod.view import Pod
from mpigen.checks.pod.workloads import WORKLOAD_RULES
from mpigen.checks.templates import KUBERNETES_TEMPLATE_PATHS, TemplatePaths, group_kind, pod_templates

__all__ = [
    "CHECKS",
    "TEMPLATE_PATHS",
    "Check",
    "Pod",
    "Violation",
    "check_object",
    "check_template",
    "server_path",
]


Run = Callable[[Pod], Iterator[Violation]]


class Check:
    """A row of the table: the check's family, the Kubernetes version whose pkg/apis/core/validation it
    follows, and the check: a function, or "module.function" under mpigen.checks.pod with its gate
    (`when`), loaded on the first template the gate lets through."""

    __slots__ = ("_run", "family", "follows", "name", "when")

    def __init__(
        self, family: str, follows: str, run: Run | str, when: Callable[[Pod], bool] | None = None
    ) -> None:
        self.family = family
        self.follows = follows
        self._run = run
        self.when = when
        self.name = run if isinstance(run, str) else f"{run.__module__.rpartition('.')[2]}.{run.__name__}"

    @property
    def run(self) -> Run:
        if isinstance(self._run, str):
            module, _, name = self._run.rpartition(".")
            self._run = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        run: Run = self._run  # type: ignore[assignment]  # resolved above
        return run

    def __call__(self, pod: Pod) -> Iterator[Violation]:
        if self.when is not None and not self.when(pod):
            return iter(())
        return self.run(pod)


# The gates: what a template must have for a gated check to find anything.
def _annotated(pod: Pod) -> bool:
    annotations = pod.meta.get("annotations")
    return isinstance(annotations, dict) and bool(annotations)


def _in_containers(*fields: str) -> Callable[[Pod], bool]:
    def gate(pod: Pod) -> bool:
        return any(field in container for _, container in pod.containers() for field in fields)

    return gate


def _in_spec(field: str) -> Callable[[Pod], bool]:
    def gate(pod: Pod) -> bool:
        return field in pod.spec

    return gate


def _windows_options(pod: Pod) -> bool:
    contexts = [pod.spec.get("securityContext"), *(c.get("securityContext") for _, c in pod.containers())]
    return any(isinstance(context, dict) and "windowsOptions" in context for context in contexts)


K8S = "1.37"
CHECKS: tuple[Check, ...] = (
    Check("metadata", K8S, metadata.template_labels),
    Check("metadata", K8S, metadata.template_annotations),
    Check("annotations", K8S, "annotated.pod_annotations", _annotated),
    Check("seccomp", K8S, "seccomp.annotated_profiles", _annotated),
    Check("apparmor", K8S, "apparmor.annotated_profiles", _annotated),
    Check("names", K8S, names.volume_names),
    Check("volumes", K8S, volumes.volume_sources),
    Check("names", K8S, names.container_names),
    Check("containers", K8S, containers.images),
    Check("enums", K8S, containers.policies),
    Check("ports", K8S, ports.container_ports),
    Check("env", K8S, env.env_vars),
    Check("env", K8S, env.env_from),
    Check("volumes", K8S, mounts.volume_mounts),
    Check("resources", K8S, resources.container_resources),
    Check("resources", K8S, resources.resource_claims),
    Check("resources", K8S, "podresources.pod_resources", _in_spec("resources")),
    Check("resize", K8S, "resize.resize_policies", _in_containers("resizePolicy")),
    Check("overhead", K8S, "resize.overhead", _in_spec("overhead")),
    Check("security", K8S, security.container_contexts),
    Check("containers", K8S, containers.init_containers),
    Check("containers", K8S, containers.regular_restart_policies),
    Check("probes", K8S, "probes.probes", _in_containers("livenessProbe", "readinessProbe", "startupProbe")),
    Check("probes", K8S, "probes.lifecycles", _in_containers("lifecycle")),
    Check("containers", K8S, containers.ephemeral_containers),
    Check("ports", K8S, ports.host_network_ports),
    Check("enums", K8S, spec.enums),
    Check("scheduling", K8S, "scheduling.node_selector", _in_spec("nodeSelector")),
    Check("security", K8S, security.pod_context),
    Check("scheduling", K8S, "scheduling.node_affinity", _in_spec("affinity")),
    Check("scheduling", K8S, "scheduling.pod_affinity", _in_spec("affinity")),
    Check("dns", K8S, spec.dns_config),
    Check("spec", K8S, spec.gates),
    Check("scheduling", K8S, "scheduling.topology_spread", _in_spec("topologySpreadConstraints")),
    Check("platform", K8S, "platform.host_process", _windows_options),
    Check("platform", K8S, "platform.host_users", _in_spec("hostUsers")),
    Check("spec", K8S, spec.names),
    Check("scheduling", K8S, "scheduling.tolerations", _in_spec("tolerations")),
    Check("dns", K8S, spec.host_aliases),
    Check("platform", K8S, "platform.os_rules", _in_spec("os")),
    Check("seccomp", K8S, "seccomp.fields_match", _annotated),
    Check("apparmor", K8S, "apparmor.fields_match", _annotated),
)

# Where each kind keeps its pod templates: Kubernetes' own kinds (mpigen.checks.templates); the compiler
# adds its target's (mpigen.targets.Kind).
TEMPLATE_PATHS = KUBERNETES_TEMPLATE_PATHS


@functools.lru_cache(maxsize=16)
def version_tuple(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def check_template(
    template: dict[str, Any],
    at: Path,
    version: tuple[int, int],
    workload: Callable[[Pod], Iterator[Violation]] | None = None,
) -> list[Violation]:
    """Every violation in one pod template that sits at `at` in its object, in the table's order, then
    those of the workload that runs it (mpigen.checks.pod.workloads)."""
    spec_ = template.get("spec")
    meta = template.get("metadata")
    read = volumes.as_read(spec_, version) if isinstance(spec_, dict) else {}
    pod = Pod(read, meta if isinstance(meta, dict) else {}, at, version)
    found = [violation for check in CHECKS for violation in check(pod)]
    return found + list(workload(pod)) if workload is not None else found


def check_object(
    obj: dict[str, Any], version: tuple[int, int], paths: TemplatePaths = TEMPLATE_PATHS
) -> list[Violation]:
    """Every violation in every pod template of one object (found by `paths`); paths are the object's."""
    workload = WORKLOAD_RULES.get(group_kind(obj))
    own_identity = group_kind(obj) == ("apps", "StatefulSet")
    return [
        v
        for at, template in pod_templates(obj, paths)
        for v in check_template(
            _without_identity(template) if own_identity else template, at, version, workload
        )
    ]


def _without_identity(template: dict[str, Any]) -> dict[str, Any]:
    """A StatefulSet's pod template as the API server validates it: without `hostname` and `subdomain`,
    which the controller overwrites with the pod's name and the Service (Kubernetes 1.37
    pkg/apis/apps/validation: ValidateStatefulSetSpec, "don't validate")."""
    spec = template.get("spec")
    if not isinstance(spec, dict) or not ("hostname" in spec or "subdomain" in spec):
        return template
    return {**template, "spec": {k: v for k, v in spec.items() if k not in ("hostname", "subdomain")}}
