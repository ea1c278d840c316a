"""The vendored Kubeflow Trainer schemas: the TrainJob and (Cluster)TrainingRuntime input schemas and their
CRD defaults, from the CRDs of the Trainer module the oracle pins (tests/oracles/trainer/go.mod).

Reads `manifests/base/crds/trainer.kubeflow.org_{trainjobs,trainingruntimes,clustertrainingruntimes}.yaml`
of `github.com/kubeflow/trainer/v2` from the Go module cache (`go mod download`; the module proxy fills it)
and writes:

- `schemas/<kind>-trainer-v1alpha1.json`: the CRD's v1alpha1 `openAPIV3Schema` as a strict JSON Schema
  (descriptions, `status`, `default`s and the `x-kubernetes-*` annotations dropped, every object with
  properties closed, as the API server prunes unknown fields and mpigen refuses them), metadata
  Kubernetes' ObjectMeta with a name, each runtime replicated job's `template` Kubernetes' own strict
  `JobTemplateSpec` (checked for the Kubernetes version chosen, as a Job's). One extension: the MPI
  policy's `mpiImplementation` takes `OpenMPI`, `Intel` and `MPICH` (Trainer v2.3.0's enum is `OpenMPI`
  and `""`, which its MPI plugin then refuses; mpigen runs all three, docs/departures.md). The CEL rules
  (`x-kubernetes-validations`) and list-map keys are not JSON Schema: mpigen.inputs.trainer_rules checks
  them.
- `schemas/trainer-defaults-v1alpha1.json`: per kind, the CRD schema pruned to the paths that lead to a
  `default:`, which mpigen applies as the API server would (structural defaulting).

A developer tool, not part of the installed package; run from the repository's top:

    python tools/trainerschema.py            rewrite the files
    python tools/trainerschema.py --check    exit 1 if one is stale
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
MODULE = "github.com/kubeflow/trainer/v2"
GO_MOD = ROOT / "tests" / "oracles" / "trainer" / "go.mod"
CRDS = "manifests/base/crds"
DEFINITIONS = "https://kubernetes.io/api/_definitions.json#/$defs/"
API_VERSION = "trainer.kubeflow.org/v1alpha1"
KINDS = {
    "TrainJob": "trainer.kubeflow.org_trainjobs.yaml",
    "TrainingRuntime": "trainer.kubeflow.org_trainingruntimes.yaml",
    "ClusterTrainingRuntime": "trainer.kubeflow.org_clustertrainingruntimes.yaml",
}
DEFAULTS = ROOT / "schemas" / "trainer-defaults-v1alpha1.json"
# Beyond Trainer v2.3.0 (whose enum is OpenMPI and ""): the implementations mpigen runs.
IMPLEMENTATIONS = ["OpenMPI", "Intel", "MPICH"]


def version() -> str:
    found = re.search(rf"^\s*(?:require\s+)?{re.escape(MODULE)}\s+(v\S+)", GO_MOD.read_text(), re.MULTILINE)
    assert found, f"{MODULE} is not required in {GO_MOD}"
    return found.group(1)


def module_dir() -> Path:
    go = shutil.which("go")
    assert go is not None, "`go` is not on PATH"
    done = subprocess.run(
        [go, "mod", "download", "-json", f"{MODULE}@{version()}"],
        capture_output=True,
        text=True,
        check=True,
        cwd=GO_MOD.parent,
    )
    return Path(json.loads(done.stdout)["Dir"])


def _root(kind: str) -> dict[str, Any]:
    crd = yaml.load(
        (module_dir() / CRDS / KINDS[kind]).read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    )
    (served,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
    root: dict[str, Any] = served["schema"]["openAPIV3Schema"]
    return root


def _strict(node: Any) -> Any:
    if isinstance(node, list):
        return [_strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {
        key: _strict(value) if key not in ("enum", "required", "properties") else value
        for key, value in node.items()
        if key not in ("description", "default") and not key.startswith("x-kubernetes-")
    }
    if "properties" in out:  # each property's schema once (a map of names is no schema of its own)
        out["properties"] = {name: _strict(sub) for name, sub in node["properties"].items()}
        if not node.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
    return out


def schema(kind: str) -> dict[str, Any]:
    spec = _strict(_root(kind)["properties"]["spec"])
    if kind != "TrainJob":
        jobs = spec["properties"]["template"]["properties"]["spec"]["properties"]["replicatedJobs"]
        jobs["items"]["properties"]["template"] = {
            "$ref": DEFINITIONS + "io.k8s.api.batch.v1.JobTemplateSpec"
        }
        mpi = spec["properties"]["mlPolicy"]["properties"]["mpi"]["properties"]
        mpi["mpiImplementation"]["enum"] = IMPLEMENTATIONS
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"{kind} ({API_VERSION})",
        "description": f"Written by tools/trainerschema.py from {MODULE} {version()} {CRDS}/{KINDS[kind]}: strict "
        "(objects closed), without descriptions, defaults, status and CEL rules; runtime job templates are "
        "Kubernetes' JobTemplateSpec; mpiImplementation also takes Intel and MPICH (mpigen's extension).",
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string", "enum": [API_VERSION]},
            "kind": {"type": "string", "enum": [kind]},
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


def _defaults(node: Any) -> dict[str, Any] | None:
    """`node` pruned to what leads to a `default` (None: nothing under it has one)."""
    if not isinstance(node, dict):
        return None
    out: dict[str, Any] = {}
    if "default" in node:
        out["default"] = node["default"]
    properties = {
        name: found for name, sub in node.get("properties", {}).items() if (found := _defaults(sub))
    }
    if properties:
        out["properties"] = properties
    for key in ("items", "additionalProperties"):
        if (sub := _defaults(node.get(key))) is not None:
            out[key] = sub
    return out or None


def defaults() -> dict[str, Any]:
    return {
        "description": f"Written by tools/trainerschema.py: the `default:` values of the CRDs of {MODULE} {version()}, "
        "per kind, on the schema paths that lead to them.",
        "kinds": {kind: _defaults(_root(kind)["properties"]["spec"]) for kind in KINDS},
    }


def files() -> dict[Path, str]:
    found = {
        ROOT / "schemas" / f"{kind.lower()}-trainer-v1alpha1.json": json.dumps(schema(kind), indent=2) + "\n"
        for kind in KINDS
    }
    found[DEFAULTS] = json.dumps(defaults(), indent=2) + "\n"
    return found


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        stale = [path for path, text in files().items() if not path.is_file() or path.read_text() != text]
        for path in stale:
            print(f"stale: {path}; run python tools/trainerschema.py", file=sys.stderr)
        return 1 if stale else 0
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    for path, text in files().items():
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
