"""Shipped Kubernetes schemas: the strict schemas of the kinds mpigen emits, for the newest Kubernetes version.

Writes `mpigen/checks/kube/strict-<version>.json` from kubernetes-validate's `-local-strict` files and the
PodGroup schemas vendored in schemas/: each kind's schema and every definition it reaches (the pod
template's too), annotations (descriptions, `x-kubernetes-*`) dropped and `$ref`s pointing into the
file's own `$defs`. The quick check reads it instead of parsing the whole 1.8 MB `_definitions.json` and
inlining each kind; jsonschema still explains an invalid object from kubernetes-validate's own files.

A developer tool, not part of the installed package; run from the repository's top:

    python tools/kubeschemas.py            rewrite mpigen/checks/kube/strict-<newest version>.json
    python tools/kubeschemas.py --check    exit 1 if a shipped file differs from what it would write
"""

from __future__ import annotations

import glob
import json
import os
import re
import sys
from typing import Any

from mpigen.checks.kube import schemas
from mpigen.checks.kube.versions import default_kube_version
from mpigen.targets import kind_schemas

# Every (apiVersion, kind) mpigen's builders emit. A kind missing here is still validated, only slower.
EMITTED = (
    ("v1", "ServiceAccount"),
    ("rbac.authorization.k8s.io/v1", "Role"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    ("v1", "ConfigMap"),
    ("v1", "Secret"),
    ("v1", "Service"),
    ("networking.k8s.io/v1", "NetworkPolicy"),
    ("policy/v1", "PodDisruptionBudget"),
    ("apps/v1", "StatefulSet"),
    ("batch/v1", "Job"),
    ("scheduling.k8s.io/v1beta1", "Workload"),
    ("scheduling.k8s.io/v1beta1", "PodGroup"),
    *sorted({**schemas.VENDORED_SCHEMAS, **kind_schemas()}),
    *sorted(schemas.INPUT_SCHEMAS),  # the Trainer kinds, read as input: checked quickly too
)
REGENERATE = "python tools/kubeschemas.py"


class _Stripper:
    """Drops annotations and points references at `#/$defs/<name>`, noting every definition reached."""

    def __init__(self) -> None:
        self.reached: set[str] = set()

    def schema(self, node: Any) -> Any:
        if isinstance(node, list):
            return [self.schema(item) for item in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$ref":
                name = schemas._ref_name(value)
                self.reached.add(name)
                out[key] = f"#/$defs/{name}"
            elif key in schemas._DROPPED or key.startswith("x-kubernetes-"):
                continue
            elif key in schemas._DATA_KEYWORDS:
                out[key] = value
            elif key in schemas._NAMED_SCHEMAS:
                out[key] = {name: self.schema(sub) for name, sub in value.items()}
            else:
                out[key] = self.schema(value)
        return out


def _raw_schema(version: str, api_version: str, kind: str) -> dict[str, Any]:
    vendored = {**schemas.VENDORED_SCHEMAS, **kind_schemas()}.get(
        (api_version, kind)
    ) or schemas.INPUT_SCHEMAS.get((api_version, kind))
    found = schemas._vendored_file(vendored) if vendored else schemas._kube_file(version, api_version, kind)
    if found is None:
        raise SystemExit(
            f"kubernetes-validate has no schema for {api_version} {kind} in Kubernetes {version}"
        )
    return found


def generate(version: str) -> str:
    """The text of `strict-<version>.json`."""
    defs = schemas._definitions(version)
    stripper = _Stripper()
    kinds = {schemas.shipped_key(a, k): stripper.schema(_raw_schema(version, a, k)) for a, k in EMITTED}
    stripper.reached.add(schemas.POD_TEMPLATE_SPEC)
    done: dict[str, Any] = {}
    while pending := sorted(stripper.reached - done.keys()):
        for name in pending:
            done[name] = stripper.schema(defs[name])
    data = {"version": version, "schemas": kinds, "$defs": dict(sorted(done.items()))}
    return json.dumps(data, indent=0, sort_keys=False, ensure_ascii=False) + "\n"


def shipped() -> dict[str, str]:
    """Shipped files by version."""
    pattern = re.compile(r"strict-(\d+\.\d+)\.json")
    found = (pattern.fullmatch(os.path.basename(p)) for p in glob.glob(schemas.shipped_file("*")))
    return {m[1]: schemas.shipped_file(m[1]) for m in found if m}


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as file:
        return file.read()


def main(argv: list[str]) -> int:
    newest = default_kube_version()
    if argv == ["--check"]:
        stale = [path for version, path in sorted(shipped().items()) if _read(path) != generate(version)]
        if newest not in shipped():
            stale.append(schemas.shipped_file(newest) + " (missing)")
        for path in stale:
            print(f"stale: {path}; run {REGENERATE}", file=sys.stderr)
        return 1 if stale else 0
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    for path in shipped().values():
        os.remove(path)
    with open(schemas.shipped_file(newest), "w", encoding="utf-8") as file:
        file.write(generate(newest))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
