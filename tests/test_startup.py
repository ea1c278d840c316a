"""Start-up: what a command imports, and the files generated into the package so that it need not build them.

mpigen runs once per kustomize generator, KRM call and pre-commit hook, so its start-up is its speed
(benchmarks/bench_startup.py measures it). These tests pin the causes, not the times: which modules a
render imports, and that the generated files equal what their tools would write now.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from jobs import V1ALPHA1, V1ALPHA2, V2BETA1, make_job

from mpigen.compiled_templates import TEMPLATES
from mpigen.compiler import compile_job
from mpigen.kube import schemas as kubeschema
from mpigen.kube.versions import default_kube_version
from mpigen.options import Options
from mpigen.templating import jinja_environment

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


templategen = _tool("templategen")


def test_the_compiled_templates_are_current() -> None:
    assert templategen.TARGET.read_text(encoding="utf-8") == templategen.generate(), (
        "mpigen/compiled_templates.py is stale: run python tools/templategen.py"
    )


JOBS = [
    make_job(V1ALPHA1, workers=3),
    make_job(V1ALPHA2, workers=3, cleanPodPolicy="All"),
    make_job(V2BETA1, workers=3, runPolicy={"cleanPodPolicy": "Running"}),
    make_job(V2BETA1, workers=2, mpiImplementation="Intel", launcherCreationPolicy="WaitForWorkersReady"),
]


def test_every_compiled_template_renders_as_jinja2_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each template, rendered by the compiled function and by jinja2 from the same values: the values
    compiling real jobs passes, and the same with strings a shell would expand."""
    seen: dict[str, list[dict[str, Any]]] = {}

    def recording(name: str, function: Callable[[dict[str, Any]], str]) -> Callable[[dict[str, Any]], str]:
        return lambda values: seen.setdefault(name, []).append(dict(values)) or function(values)

    for name, function in list(TEMPLATES.items()):
        monkeypatch.setitem(TEMPLATES, name, recording(name, function))
    for job in JOBS:
        compile_job(job, Options(namespace="ml"))
    assert sorted(seen) == sorted(p.name for p in templategen.TEMPLATES.glob("*.j2"))
    monkeypatch.undo()
    odd = ["a b", "it's", "$(rm -rf /)", "ü\nß", "", 0]
    for name, calls in seen.items():
        template = jinja_environment().get_template(name)
        for values in calls + [{key: _odd(value, odd) for key, value in calls[0].items()}]:
            assert TEMPLATES[name](values) == template.render(**values), name


def _odd(value: Any, odd: list[Any]) -> Any:
    return odd if isinstance(value, list) else odd[len(str(value)) % len(odd)]


def test_a_missing_template_value_is_an_error() -> None:
    with pytest.raises(KeyError):
        TEMPLATES["kubexec.sh.j2"]({})
