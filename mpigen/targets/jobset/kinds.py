"""The kinds the jobset target emits that Kubernetes does not define: data only (mpigen.targets.Kind),
read by the output checks without importing the target."""

from __future__ import annotations

from mpigen.targets import Kind

KINDS: tuple[Kind, ...] = (
    # Written by tools/crdschema.py from the JobSet CRD.
    Kind(
        "jobset.x-k8s.io/v1alpha2",
        "JobSet",
        (("spec", "replicatedJobs", "*", "template", "spec", "template"),),
        "jobset-v1alpha2.json",
    ),
)
