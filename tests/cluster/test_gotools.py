"""gotools.py's `replaces`, the further `replace` directives of a tool's wrapper module: a `module version`
target is written as it is, a `./path` target names that folder of the tool's downloaded module and, where
the module proxy's zip left that folder out (a nested module: Go's module zips omit every folder holding a
go.mod of its own), the build fails saying so. Volcano v1.15.1 is that case (its `volcano.sh/apis` staging
folder); the suite's Volcano pin builds with the published `volcano.sh/apis` instead. A tool's `renamed`
modules are copies of a module's former path under its new one (Argo CD's gitops-engine)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import gotools
import pytest

STAGING = "volcano.sh/apis => ./staging/src/volcano.sh/apis"


def test_a_versioned_target_is_written_as_it_is() -> None:
    gotools.require_module("volcano")
    assert gotools._extra_replacements("volcano") == ["\tvolcano.sh/apis => volcano.sh/apis v1.14.0"]
    assert gotools.TOOLS["volcano-webhook"].replaces == gotools.TOOLS["volcano"].replaces


def test_a_folder_the_proxy_left_out_fails_the_build_saying_why(monkeypatch: pytest.MonkeyPatch) -> None:
    tool = dataclasses.replace(gotools.TOOLS["volcano"], version="v1.15.1", replaces=(STAGING,))
    monkeypatch.setitem(gotools.TOOLS, "volcano-v1.15.1", tool)
    module = gotools.require_module("volcano-v1.15.1")
    gomod = (module / "go.mod").read_text()
    assert STAGING in gomod  # what upstream's go.mod asks for ...
    assert not (module / "staging").exists()  # ... and what the proxy's zip holds
    with pytest.raises(gotools.BuildFailed, match="leaves out folders that are modules of their own"):
        gotools._extra_replacements("volcano-v1.15.1")


def test_a_folder_of_the_module_becomes_its_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The resolution itself, on a folder that does hold a go.mod (the module's root)."""
    tool = dataclasses.replace(gotools.TOOLS["volcano"], replaces=("volcano.sh/volcano => ./",))
    monkeypatch.setitem(gotools.TOOLS, "volcano-root", tool)
    module = gotools.require_module("volcano-root")
    assert gotools._extra_replacements("volcano-root") == [f"\tvolcano.sh/volcano => {module.resolve()}"]


def test_a_renamed_copy_is_its_former_module_under_the_new_path(tmp_path: Path) -> None:
    """Argo CD's gitops-engine: the code of the former path, with its go.mod's module line and every import
    of its own packages renamed (so its internal packages stay its own), comments and other modules' imports
    left as they are."""
    tool = gotools.TOOLS["argocd"]
    [(path, former, version)] = tool.renamed
    try:
        copy = gotools.renamed_copy(path, former, version, tmp_path, tool)
    except gotools.Unavailable as why:
        pytest.skip(str(why))
    assert (copy / "go.mod").read_text().startswith(f"module {path}\n")
    sources = "".join(file.read_text() for file in sorted(copy.rglob("*.go")))
    assert f'"{former}/' not in sources
    assert f'"{path}/internal/' in sources and f'"{path}/pkg/utils/kube"' in sources
    assert f"https://{former}/" in sources  # a link in a comment is no import
