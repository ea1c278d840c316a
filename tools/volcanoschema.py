"""Write schemas/job-volcano-v1alpha1.json, the strict schema of a Volcano `batch.volcano.sh/v1alpha1` Job,
from the CRD of the pinned Go module `volcano.sh/volcano` v1.10.0 in the Go module cache
(`config/crd/volcano/bases/batch.volcano.sh_jobs.yaml`, located with `go mod download -json`).

What it keeps and changes, so that `mpigen validate` checks a rendered Job as strictly as the PodGroups:
- `spec` as the CRD states it, `status` dropped (mpigen never writes it), descriptions and
  `x-kubernetes-*` dropped, every object closed (`additionalProperties: false`);
- each task's `template` is Kubernetes' PodTemplateSpec and `metadata` its ObjectMeta, by reference into
  the `_definitions.json` of the Kubernetes version checked against (as the PodGroup schemas do), instead
  of the CRD's inlined copy of Kubernetes v1.30's;
- the rules of Volcano's validating admission webhook (`pkg/webhooks/admission/jobs/validate`) that a
  schema can state: `minAvailable`, `maxRetry` and `ttlSecondsAfterFinished` at least 0, a task's
  `maxRetry` at least -1 (-1: no limit, `jobCache.TaskFailed`), at least one task, task names DNS-1123
  labels, and the policies' events and actions those of `policyEventMap` / `policyActionMap`.

Usage: python tools/volcanoschema.py  (needs `go` and the module proxy or a warm module cache).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

MODULE = "volcano.sh/volcano@v1.10.0"
CRD = "config/crd/volcano/bases/batch.volcano.sh_jobs.yaml"
OUT = Path(__file__).resolve().parent.parent / "schemas" / "job-volcano-v1alpha1.json"
DEFINITIONS = "https://kubernetes.io/api/_definitions.json#/$defs/"
# pkg/webhooks/admission/jobs/validate/util.go policyEventMap / policyActionMap (the allowed ones).
EVENTS = [
    "*",
    "PodPending",
    "PodRunning",
    "PodFailed",
    "PodEvicted",
    "Unknown",
    "TaskCompleted",
    "TaskFailed",
    "JobUpdated",
]
ACTIONS = ["AbortJob", "RestartJob", "RestartTask", "RestartPod", "TerminateJob", "CompleteJob", "ResumeJob"]
DNS1123_LABEL = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"


def module_dir() -> Path:
    done = subprocess.run(
        ["go", "mod", "download", "-json", MODULE], capture_output=True, text=True, check=True
    )
    return Path(json.loads(done.stdout)["Dir"])


def closed(node: Any) -> Any:
    """Descriptions and x-kubernetes-* dropped; every object with properties closed."""
    if isinstance(node, list):
        return [closed(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {
        key: closed(value) if key != "properties" else {k: closed(v) for k, v in value.items()}
        for key, value in node.items()
        if key != "description" and not key.startswith("x-kubernetes-")
    }
    if "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


def schema(crd: dict[str, Any]) -> dict[str, Any]:
    (version,) = crd["spec"]["versions"]
    spec = closed(version["schema"]["openAPIV3Schema"]["properties"]["spec"])
    task = spec["properties"]["tasks"]["items"]
    task["properties"]["template"] = {"$ref": DEFINITIONS + "io.k8s.api.core.v1.PodTemplateSpec"}
    task["properties"]["name"]["pattern"] = DNS1123_LABEL
    task["properties"]["name"]["maxLength"] = 63
    task["properties"]["maxRetry"]["minimum"] = -1
    task["properties"]["minAvailable"]["minimum"] = 0
    task["properties"]["replicas"]["minimum"] = 0
    spec["properties"]["tasks"]["minItems"] = 1
    for key in ("minAvailable", "maxRetry", "ttlSecondsAfterFinished"):
        spec["properties"][key]["minimum"] = 0
    for policies in (spec["properties"]["policies"], task["properties"]["policies"]):
        policy = policies["items"]["properties"]
        policy["event"]["enum"] = EVENTS
        policy["events"]["items"]["enum"] = EVENTS
        policy["action"]["enum"] = ACTIONS
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Volcano Job (batch.volcano.sh/v1alpha1)",
        "description": (
            f"Written by tools/volcanoschema.py from {MODULE} {CRD}: the CRD's spec, every object closed,"
            " tasks' templates Kubernetes PodTemplateSpec and metadata ObjectMeta with a name, plus what Volcano's"
            " validating webhook checks of single fields (minimums, task names, policy events and actions)."
        ),
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string", "enum": ["batch.volcano.sh/v1alpha1"]},
            "kind": {"type": "string", "enum": ["Job"]},
            "metadata": {
                "allOf": [
                    {"$ref": DEFINITIONS + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
                    {"required": ["name"]},
                ]
            },
            "spec": spec,
        },
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "additionalProperties": False,
    }


def main() -> int:
    crd = yaml.safe_load((module_dir() / CRD).read_text())
    OUT.write_text(json.dumps(schema(crd), indent=2, sort_keys=False) + "\n")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
