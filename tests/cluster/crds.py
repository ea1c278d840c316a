"""CustomResourceDefinitions for the PodGroups mpigen emits, built from the JSON Schemas it ships
(schemas/podgroup-*.json), so the API server checks gang objects against the same rules as `mpigen validate`.

A CRD wants an OpenAPI v3 structural schema: no `$schema`/`title`, no `$ref` (metadata is the API
server's own), no `additionalProperties: false` (the server prunes, and `kubectl apply`'s strict field
validation refuses unknown fields instead), and int-or-string written the Kubernetes way.
"""

from __future__ import annotations

import importlib.resources
import json
from typing import Any

from mpigen.checks.kube import schemas as kubeschema
from mpigen.targets import kind_schemas

Schema = dict[str, Any]

DROPPED = {"$schema", "title", "$comment", "$id"}


def structural(node: Any) -> Any:
    if isinstance(node, list):
        return [structural(item) for item in node]
    if not isinstance(node, dict):
        return node
    kinds = sorted(branch.get("type", "") for branch in node.get("anyOf", []))
    if kinds == ["integer", "string"]:
        patterns = [branch["pattern"] for branch in node["anyOf"] if "pattern" in branch]
        out: Schema = {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
        if patterns:
            out["pattern"] = patterns[0]
        return out
    result: Schema = {}
    for key, value in node.items():
        if key in DROPPED or (key == "additionalProperties" and value is False):
            continue
        if key == "properties":
            result[key] = {name: structural(sub) for name, sub in value.items()}
            if "metadata" in result[key]:
                result[key]["metadata"] = {"type": "object"}
        else:
            result[key] = structural(value)
    return result


def podgroup_crds() -> list[Schema]:
    crds = []
    for (api_version, kind), filename in sorted({**kubeschema.VENDORED_SCHEMAS, **kind_schemas()}.items()):
        if kind != "PodGroup":
            continue  # Volcano's Job and the JobSet: their own CRDs, from their modules (volcano.py, jobset.crds)
        group, version = api_version.split("/")
        text = importlib.resources.files("mpigen.schemas").joinpath(filename).read_text(encoding="utf-8")
        schema = structural(json.loads(text))
        plural = kind.lower() + "s"
        crds.append(
            {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": f"{plural}.{group}"},
                "spec": {
                    "group": group,
                    "scope": "Namespaced",
                    "names": {
                        "kind": kind,
                        "plural": plural,
                        "singular": kind.lower(),
                        "listKind": kind + "List",
                    },
                    "versions": [
                        {
                            "name": version,
                            "served": True,
                            "storage": True,
                            "subresources": {"status": {}},
                            "schema": {"openAPIV3Schema": schema},
                        }
                    ],
                },
            }
        )
    return crds


# Kubeflow kinds that mpigen passes through unchanged (the golden corpus holds some): the cluster needs
# their CRDs to take them, as a Kubeflow cluster has them. Their schemas are not mpigen's concern here,
# so each takes any fields.
PASSED_THROUGH = (
    ("kubeflow.org", "v1", "TFJob"),
    ("kubeflow.org", "v1", "PyTorchJob"),
    ("kubeflow.org", "v1", "Notebook"),
    # another project's MPIJob (golden/passthrough-other-projects-mpijob)
    ("hpc.example.com", "v1", "MPIJob"),
)


def passed_through_crds() -> list[Schema]:
    open_schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return [
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{kind.lower()}s.{group}"},
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {
                    "kind": kind,
                    "plural": kind.lower() + "s",
                    "singular": kind.lower(),
                    "listKind": kind + "List",
                },
                "versions": [
                    {
                        "name": version,
                        "served": True,
                        "storage": True,
                        "schema": {"openAPIV3Schema": open_schema},
                    }
                ],
            },
        }
        for group, version, kind in PASSED_THROUGH
    ]
