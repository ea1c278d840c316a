"""Start-up: what a command imports, and the files generated into the package so that it need not build them.

mpigen runs once per kustomize generator, KRM call and pre-commit hook, so its start-up is its speed
(benchmarks/bench_startup.py measures it). These tests pin the causes, not the times: which modules a
render imports, and that the generated files equal what their tools would write now.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

from mpigen.kube import schemas as kubeschema
from mpigen.kube.versions import default_kube_version

ROOT = Path(__file__).resolve().parent.parent


def _tool(name: str) -> ModuleType:
    """A developer tool from tools/ (not part of the installed package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


kubeschemas = _tool("kubeschemas")


def test_the_shipped_kubernetes_schemas_are_current() -> None:
    files = kubeschemas.shipped()
    assert files, "no mpigen/kube/strict-*.json: run python tools/kubeschemas.py"
    for version, path in files.items():
        assert Path(path).read_text(encoding="utf-8") == kubeschemas.generate(version), (
            f"{path} is stale: run python tools/kubeschemas.py"
        )


def test_the_newest_kubernetes_version_is_shipped_with_every_emitted_kind() -> None:
    version = default_kube_version()
    for api_version, kind in kubeschemas.EMITTED:
        assert kubeschema.shipped_schema(version, kubeschema.shipped_key(api_version, kind)) is not None
    assert kubeschema.shipped_schema(version, kubeschema.POD_TEMPLATE_SPEC) is not None
    data = json.loads(Path(kubeschema.shipped_file(version)).read_text(encoding="utf-8"))
    assert '"description"' not in json.dumps(data)  # annotations dropped
