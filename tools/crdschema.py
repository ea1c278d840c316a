"""The vendored schemas of the run targets' objects, written from the CRDs of the pinned Go modules.

Each row of `SCHEMAS` names a file in schemas/, the tool of tests/cluster/gotools.py whose pinned module
holds the CRD (read from the Go module cache; `go mod download` fills it from the module proxy), the CRD
file and version, and what is changed in its `spec`. Every schema is made the same way, so that
`mpigen validate` checks a rendered object as strictly as a built-in one:

- the CRD's `openAPIV3Schema` `spec`, with `status` dropped (mpigen never writes it), descriptions and the
  `x-kubernetes-*` annotations dropped, and every object with properties closed
  (`additionalProperties: false`: a structural schema prunes unknown fields, and mpigen must emit none);
- `metadata` Kubernetes' ObjectMeta with a name, and pod or job templates Kubernetes' own strict
  definitions, by reference into the `_definitions.json` of the Kubernetes version checked against (so
  the templates are checked for the Kubernetes version chosen, as a built-in Job's are), instead of the
  CRD's inlined copy of one Kubernetes version's;
- JobSet (`sigs.k8s.io/jobset`): each replicated job's `template` is a JobTemplateSpec. Its CEL rules
  (`x-kubernetes-validations`) are not JSON Schema: the suite applies every golden JobSet to the real API
  server and the JobSet webhook (tests/cluster/test_jobset_target.py).
- Volcano Job (`volcano.sh/volcano`): each task's `template` is a PodTemplateSpec, plus the rules of
  Volcano's validating admission webhook (`pkg/webhooks/admission/jobs/validate`) and of its chart's
  `job-validation-policy` that a schema can state: `minAvailable`, `maxRetry` and
  `ttlSecondsAfterFinished` at least 0, at least one task, task names DNS-1123 labels, and the policies'
  events and actions those both allow (a task's `maxRetry` at least 0, as the CRD says since v1.14).

A developer tool, not part of the installed package; run from the repository's top (needs `go` and the
module proxy or a warm module cache):

    python tools/crdschema.py              rewrite every vendored CRD schema
    python tools/crdschema.py --check      exit 1 if one is stale (tests/unit/checks/test_crdschema.py)
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "cluster"))

import gotools  # type: ignore[import-not-found]  # tests/cluster, put on sys.path above

DEFINITIONS = "https://kubernetes.io/api/_definitions.json#/$defs/"
LEAVES = ("enum", "required", "default")  # values, not schemas: copied as they are


def closed(node: Any) -> Any:
    """`node` without descriptions and x-kubernetes-* keys, every object with properties closed."""
    if isinstance(node, list):
        return [closed(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {
        key: value if key in LEAVES or key == "properties" else closed(value)
        for key, value in node.items()
        if key != "description" and not key.startswith("x-kubernetes-")
    }
    if "properties" in node:  # each property's schema once (a map of names is no schema of its own)
        out["properties"] = {name: closed(sub) for name, sub in node["properties"].items()}
        out.setdefault("additionalProperties", False)
    return out


def _jobset(spec: dict[str, Any]) -> None:
    replicated = spec["properties"]["replicatedJobs"]["items"]["properties"]
    replicated["template"] = {"$ref": DEFINITIONS + "io.k8s.api.batch.v1.JobTemplateSpec"}


# Volcano v1.14.1 pkg/webhooks/admission/jobs/validate/util.go: policyEventMap / policyActionMap (the ones
# marked true; PodRunning, OutOfSync, CommandIssued and the queue actions are refused), less what its
# chart's job-validation-policy refuses (installer/helm/chart/volcano/policy/jobs-validating.yaml
# validActions: no RestartPartition).
VOLCANO_EVENTS = [
    "*",
    "PodFailed",
    "PodEvicted",
    "PodPending",
    "Unknown",
    "TaskCompleted",
    "TaskFailed",
    "JobUpdated",
]
VOLCANO_ACTIONS = [
    "AbortJob",
    "RestartJob",
    "RestartTask",
    "RestartPod",
    "TerminateJob",
    "CompleteJob",
    "ResumeJob",
]
DNS1123_LABEL = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"


def _volcano(spec: dict[str, Any]) -> None:
    task = spec["properties"]["tasks"]["items"]
    task["properties"]["template"] = {"$ref": DEFINITIONS + "io.k8s.api.core.v1.PodTemplateSpec"}
    task["properties"]["name"]["pattern"] = DNS1123_LABEL
    task["properties"]["name"]["maxLength"] = 63
    task["properties"]["minAvailable"]["minimum"] = 0
    task["properties"]["replicas"]["minimum"] = 0
    spec["properties"]["tasks"]["minItems"] = 1
    for key in ("minAvailable", "maxRetry", "ttlSecondsAfterFinished"):
        spec["properties"][key]["minimum"] = 0
    for policies in (spec["properties"]["policies"], task["properties"]["policies"]):
        policy = policies["items"]["properties"]
        policy["event"]["enum"] = VOLCANO_EVENTS
        policy["events"]["items"]["enum"] = VOLCANO_EVENTS
        policy["action"]["enum"] = VOLCANO_ACTIONS


@dataclass(frozen=True)
class CRDSchema:
    filename: str  # in schemas/
    tool: str  # the row of gotools.TOOLS whose module holds the CRD
    crd: str  # the CRD file in that module
    api_version: str
    kind: str
    title: str
    change: Callable[[dict[str, Any]], None]  # what is changed in the closed spec, in place
    changes: str  # ... and the same in words, for the schema's description

    @property
    def target(self) -> Path:
        return ROOT / "schemas" / self.filename

    def schema(self) -> dict[str, Any]:
        crd = yaml.load(
            (gotools.module_dir(self.tool) / self.crd).read_text(encoding="utf-8"),
            Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader),
        )
        version = self.api_version.rsplit("/", 1)[1]
        (served,) = [v for v in crd["spec"]["versions"] if v["name"] == version]
        spec = closed(served["schema"]["openAPIV3Schema"]["properties"]["spec"])
        self.change(spec)
        pin = gotools.TOOLS[self.tool]
        return {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": self.title,
            "description": f"Written by tools/crdschema.py from {pin.module} {pin.version} {self.crd}: the CRD's "
            "spec, every object closed, without descriptions, status and CEL rules; metadata ObjectMeta with "
            f"a name; {self.changes}.",
            "type": "object",
            "properties": {
                "apiVersion": {"type": "string", "enum": [self.api_version]},
                "kind": {"type": "string", "enum": [self.kind]},
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

    def text(self) -> str:
        return json.dumps(self.schema(), indent=2, ensure_ascii=False) + "\n"


SCHEMAS = (
    CRDSchema(
        "jobset-v1alpha2.json",
        "jobset",
        "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml",
        "jobset.x-k8s.io/v1alpha2",
        "JobSet",
        "JobSet (jobset.x-k8s.io/v1alpha2)",
        _jobset,
        "replicated jobs' templates Kubernetes' JobTemplateSpec",
    ),
    CRDSchema(
        "job-volcano-v1alpha1.json",
        "volcano",
        "config/crd/volcano/bases/batch.volcano.sh_jobs.yaml",
        "batch.volcano.sh/v1alpha1",
        "Job",
        "Volcano Job (batch.volcano.sh/v1alpha1)",
        _volcano,
        "tasks' templates Kubernetes' PodTemplateSpec, plus what Volcano's validating webhook checks of "
        "single fields (minimums, task names, policy events and actions)",
    ),
)


def stale() -> list[Path]:
    return [row.target for row in SCHEMAS if row.target.read_text(encoding="utf-8") != row.text()]


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        old = stale()
        for path in old:
            print(f"stale: {path.relative_to(ROOT)}; run python tools/crdschema.py", file=sys.stderr)
        return 1 if old else 0
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    for row in SCHEMAS:
        row.target.write_text(row.text(), encoding="utf-8")
        print(f"wrote {row.target.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
