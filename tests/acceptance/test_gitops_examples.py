"""The GitOps examples keep a finished job finished: Argo CD ignores the worker StatefulSet's replicas
(in the diff and in the sync), Flux creates mpigen's objects once and never re-applies them."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
GITOPS = ROOT / "examples" / "gitops"


def documents(path: Path) -> list[dict[str, Any]]:
    return list(yaml.safe_load_all(path.read_text()))


def test_both_argo_cd_applications_leave_the_workers_replicas_alone() -> None:
    for name in ("application-plugin.yaml", "application-rendered.yaml"):
        [app] = documents(GITOPS / "argocd" / name)
        assert {"group": "apps", "kind": "StatefulSet", "jsonPointers": ["/spec/replicas"]} in app["spec"][
            "ignoreDifferences"
        ], name
        assert "RespectIgnoreDifferences=true" in app["spec"]["syncPolicy"]["syncOptions"], name


def test_flux_creates_every_rendered_object_once(tmp_path: Path, kubectl_binary: str) -> None:
    """Flux's `patches` are kustomize patches: apply the example's to the rendered directory with
    kustomize and check that every object, and only mpigen's, carries the IfNotPresent annotation."""
    [kustomization] = [
        doc for doc in documents(GITOPS / "flux" / "mpijobs.yaml") if doc["kind"] == "Kustomization"
    ]
    rendered = sorted((GITOPS / "rendered").glob("*.yaml"))
    for path in rendered:
        (tmp_path / path.name).write_text(path.read_text())
    (tmp_path / "other.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n")
    build = {
        "resources": [path.name for path in rendered] + ["other.yaml"],
        "patches": kustomization["spec"]["patches"],
    }
    (tmp_path / "kustomization.yaml").write_text(yaml.safe_dump(build))
    done = subprocess.run(
        [kubectl_binary, "kustomize", str(tmp_path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    objects = list(yaml.safe_load_all(done.stdout))
    assert len(objects) == len(rendered) + 1
    for obj in objects:
        annotations = obj["metadata"].get("annotations") or {}
        expected = None if obj["metadata"]["name"] == "other" else "IfNotPresent"
        assert annotations.get("kustomize.toolkit.fluxcd.io/ssa") == expected, obj["metadata"]["name"]
        assert (obj["kind"], obj["metadata"]["name"]) != ("Any", "any")


def test_no_example_suggests_kubectl_apply_k() -> None:
    """`kubectl apply -k` cannot run kustomize plugins (no --enable-alpha-plugins)."""
    for path in (ROOT / "examples").rglob("*"):
        if path.is_file():
            assert "apply -k" not in path.read_text(), path
