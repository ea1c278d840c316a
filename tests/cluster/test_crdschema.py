"""The vendored CRD schemas (schemas/jobset-v1alpha2.json, schemas/job-volcano-v1alpha1.json) are what
tools/crdschema.py writes from the CRDs of the modules the suite pins: bumping a controller's version in
gotools.py without rewriting its schema fails here, as does a hand edit of a vendored schema."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import gotools
import pytest

ROOT = Path(__file__).resolve().parent.parent.parent


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("crdschema", ROOT / "tools" / "crdschema.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


CRDSCHEMA = _tool()


@pytest.mark.parametrize("row", CRDSCHEMA.SCHEMAS, ids=lambda row: row.filename)
def test_the_vendored_schema_is_the_pinned_crds(row: object) -> None:
    gotools.require_module(row.tool)  # type: ignore[attr-defined]
    shipped = json.loads(row.target.read_text(encoding="utf-8"))  # type: ignore[attr-defined]
    assert shipped == row.schema(), f"stale: run python tools/crdschema.py ({row.filename})"  # type: ignore[attr-defined]
    assert row.target.read_text(encoding="utf-8") == row.text()  # type: ignore[attr-defined]


def test_every_vendored_crd_schema_has_a_row() -> None:
    written = {row.filename for row in CRDSCHEMA.SCHEMAS}
    vendored = {p.name for p in (ROOT / "schemas").glob("*.json") if "tools/crdschema.py" in p.read_text()}
    assert vendored == written == {"jobset-v1alpha2.json", "job-volcano-v1alpha1.json"}
