"""The kinds the volcano target emits that Kubernetes does not define: data only (mpigen.targets.Kind),
read by the output checks without importing the target."""

from __future__ import annotations

from mpigen.targets import Kind

KINDS: tuple[Kind, ...] = (
    # Written by tools/crdschema.py from the CRD of volcano.sh/volcano v1.14.1.
    Kind(
        "batch.volcano.sh/v1alpha1", "Job", (("spec", "tasks", "*", "template"),), "job-volcano-v1alpha1.json"
    ),
)
