"""Input fronts: which (apiVersion, kind) pairs mpigen compiles, and the front that plans each.

A front is a module with `to_plan(document, options) -> JobPlan`. Fronts are imported only when a
document of theirs is compiled, so start-up stays cheap.
"""

from __future__ import annotations

import importlib
import re
from typing import Any, Protocol

from mpigen import names
from mpigen.options import Options
from mpigen.plan import JobPlan


class Front(Protocol):
    def __call__(self, document: dict[str, Any], options: Options) -> JobPlan: ...


# (apiVersion, kind) -> module under mpigen.api. Add new input versions here.
FRONTS: dict[tuple[str, str], str] = {
    ("kubeflow.org/v1alpha1", "MPIJob"): "v1alpha1",
    ("kubeflow.org/v1alpha2", "MPIJob"): "v1alpha2",
    ("kubeflow.org/v2beta1", "MPIJob"): "v2beta1",
}


def supported() -> list[str]:
    return [f"{api_version} {kind}" for api_version, kind in FRONTS]


def claims(document: dict[str, Any]) -> bool:
    """Whether the document belongs to mpigen: an MPIJob front, or anything in the kubeflow.org group."""
    api_version = document.get("apiVersion")
    if not isinstance(api_version, str):
        return False
    return api_version.split("/")[0] == names.GROUP


def front_for(document: dict[str, Any]) -> Front | None:
    key = (document.get("apiVersion"), document.get("kind"))
    module = FRONTS.get(key)  # type: ignore[arg-type]
    if module is None:
        return None
    to_plan: Front = importlib.import_module(f"mpigen.api.{module}").to_plan
    return to_plan


_VERSION = re.compile(r"v(\d+)(?:(alpha|beta)(\d+))?")
# Kubernetes orders versions GA > beta > alpha, then by number (apimachinery version priority).
_STABILITY = {"alpha": 0, "beta": 1, None: 2}


def schema_file(api_version: str, kind: str) -> str:
    """The name of the schema file of one input front: `mpijob-kubeflow-v1alpha2.json`."""
    group, _, version = api_version.partition("/")
    return f"{kind.lower()}-{group.split('.')[0]}-{version}.json"


def api_versions() -> list[str]:
    """Every MPIJob apiVersion mpigen compiles, oldest first."""
    return sorted({version for version, kind in FRONTS if kind == "MPIJob"}, key=_version_order)


def _version_order(api_version: str) -> tuple[int, int, int]:
    match = _VERSION.fullmatch(api_version.partition("/")[2])
    if match is None:
        return (0, 0, 0)
    return (int(match[1]), _STABILITY[match[2]], int(match[3] or 0))
