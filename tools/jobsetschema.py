"""The vendored JobSet schema: schemas/jobset-v1alpha2.json from the JobSet CRD of the pinned Go module.

Reads `config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml` of `sigs.k8s.io/jobset` at the version
tests/cluster/gotools.py pins, from the Go module cache (`go mod download`; the module proxy fills it),
and writes the CRD's v1alpha2 `openAPIV3Schema` as a strict JSON Schema: descriptions, `status` and the
`x-kubernetes-*` annotations dropped, every object with properties closed (a structural schema prunes
unknown fields; mpigen must emit none), metadata Kubernetes' ObjectMeta with a name, and each replicated
job's `template` Kubernetes' own strict `JobTemplateSpec` (so the pod templates are checked for the
Kubernetes version chosen, as a Job's are). The CEL rules (`x-kubernetes-validations`) are not JSON
Schema: the suite applies every golden JobSet to the real API server and the JobSet webhook
(tests/cluster/test_jobset_target.py).

A developer tool, not part of the installed package; run from the repository's top:

    python tools/jobsetschema.py            rewrite schemas/jobset-v1alpha2.json
    python tools/jobsetschema.py --check    exit 1 if it is stale
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "cluster"))

import gotools  # type: ignore[import-not-found]  # tests/cluster, put on sys.path above

TARGET = ROOT / "schemas" / "jobset-v1alpha2.json"
CRD = "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml"
DEFINITIONS = "https://kubernetes.io/api/_definitions.json#/$defs/"


def _strict(node: Any) -> Any:
    if isinstance(node, list):
        return [_strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {
        key: _strict(value) if key not in ("enum", "required", "default") else value
        for key, value in node.items()
        if key != "description" and not key.startswith("x-kubernetes-")
    }
    if "properties" in out:
        out["properties"] = {name: _strict(sub) for name, sub in node["properties"].items()}
        out["additionalProperties"] = False
    return out


def schema() -> dict[str, Any]:
    module = gotools.module_dir("jobset")
    crd = yaml.safe_load((module / CRD).read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha2"]
    root = version["schema"]["openAPIV3Schema"]
    spec = _strict(root["properties"]["spec"])
    spec["properties"]["replicatedJobs"]["items"]["properties"]["template"] = {
        "$ref": DEFINITIONS + "io.k8s.api.batch.v1.JobTemplateSpec"
    }
    version_pin = gotools.TOOLS["jobset"].version
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "JobSet (jobset.x-k8s.io/v1alpha2)",
        "description": f"Written by tools/jobsetschema.py from sigs.k8s.io/jobset {version_pin} {CRD}: strict (objects closed), "
        "without descriptions, status and CEL rules; templates are Kubernetes' JobTemplateSpec.",
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string", "enum": ["jobset.x-k8s.io/v1alpha2"]},
            "kind": {"type": "string", "enum": ["JobSet"]},
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


def text() -> str:
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        if TARGET.read_text(encoding="utf-8") != text():
            print(f"stale: {TARGET}; run python tools/jobsetschema.py", file=sys.stderr)
            return 1
        return 0
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    TARGET.write_text(text(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
