"""Input fronts: which (apiVersion, kind) pairs mpigen compiles, and the front that plans each.

A front is a module with `to_plan(document, options) -> JobPlan`. Fronts are imported only when a
document of theirs is compiled, so start-up stays cheap.
"""

from __future__ import annotations

import importlib
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
