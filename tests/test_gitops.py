"""Committed renders: `render --output-dir` (one file per object, whole-directory replace) and
`render --check` (a unified diff and exit 1 when stale)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from jobs import job_yaml

from mpigen import gitops
from mpigen.cli import cli
from mpigen.shells import outdir


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["render", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def jobs(tmp_path: Path) -> Path:
    directory = tmp_path / "jobs"
    directory.mkdir()
    (directory / "a.yaml").write_text(job_yaml(name="a"))
    return directory


def test_output_dir_writes_one_file_per_object_named_like_kustomize(jobs: Path, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    code, stdout, stderr = invoke("--output-dir", str(out), str(jobs))
    assert code == 0 and stdout == ""
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "ml_apps_v1_statefulset_a-worker.yaml",
        "ml_batch_v1_job_a-launcher.yaml",
        "ml_rbac.authorization.k8s.io_v1_role_a-launcher.yaml",
        "ml_rbac.authorization.k8s.io_v1_rolebinding_a-launcher.yaml",
        "ml_v1_configmap_a-config.yaml",
        "ml_v1_service_a-worker.yaml",
        "ml_v1_serviceaccount_a-launcher.yaml",
    ]
    assert f"wrote 7 files to {out}" in stderr
    # The files hold exactly the objects of the stream render.
    _, stream, _ = invoke(str(jobs))
    from_files = [yaml.safe_load((out / name).read_text()) for name in names]
    key = lambda obj: (obj["kind"], obj["metadata"]["name"])
    assert sorted(from_files, key=key) == sorted(yaml.safe_load_all(stream), key=key)


def test_output_dir_json_writes_json_files(jobs: Path, tmp_path: Path) -> None:
    import json

    out = tmp_path / "rendered"
    assert invoke("-o", "json", "--output-dir", str(out), str(jobs))[0] == 0
    files = sorted(out.iterdir())
    assert all(p.suffix == ".json" for p in files)
    assert json.loads(files[0].read_text())["kind"] == "StatefulSet"


def test_a_new_render_leaves_no_stale_files(jobs: Path, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    (jobs / "b.yaml").write_text(job_yaml(name="b"))
    assert invoke("--output-dir", str(out), str(jobs))[0] == 0
    assert any(p.name.endswith("_b-launcher.yaml") for p in out.iterdir())
    (jobs / "b.yaml").unlink()
    assert invoke("--output-dir", str(out), str(jobs))[0] == 0
    assert not any("_b-" in p.name for p in out.iterdir())
    assert len(list(out.iterdir())) == 7
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jobs", "rendered"]  # no staging left over


def test_the_swap_works_without_renameat2(jobs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outdir, "_exchange", lambda a, b: False)
    out = tmp_path / "rendered"
    out.mkdir()
    (out / "v1_configmap_old.yaml").write_text("old")
    assert invoke("--output-dir", str(out), str(jobs))[0] == 0
    assert len(list(out.iterdir())) == 7 and not (out / "v1_configmap_old.yaml").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jobs", "rendered"]


def test_invalid_input_leaves_the_previous_render_untouched(jobs: Path, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    assert invoke("--output-dir", str(out), str(jobs))[0] == 0
    before = {p.name: p.read_text() for p in out.iterdir()}
    (jobs / "bad.yaml").write_text(job_yaml(workers=0, name="bad"))
    code, stdout, stderr = invoke("--output-dir", str(out), str(jobs))
    assert code == 1 and stdout == "" and "must be >= 1" in stderr
    assert {p.name: p.read_text() for p in out.iterdir()} == before


def test_a_directory_with_other_files_is_not_replaced(jobs: Path, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    out.mkdir()
    (out / "kustomization.yaml").write_text("resources: []\n")
    code, _, stderr = invoke("--output-dir", str(out), str(jobs))
    assert code == 1
    assert "refusing to replace it: it holds kustomization.yaml" in stderr
    assert [p.name for p in out.iterdir()] == ["kustomization.yaml"]


def test_output_dir_and_check_exclude_each_other(jobs: Path, tmp_path: Path) -> None:
    code, _, stderr = invoke("--output-dir", str(tmp_path / "x"), "--check", str(tmp_path / "y"), str(jobs))
    assert code == 2 and "cannot be used together" in stderr


def test_check_passes_on_a_current_render_and_fails_with_a_diff_when_stale(jobs: Path, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    assert invoke("--output-dir", str(out), str(jobs))[0] == 0
    assert invoke("--check", str(out), str(jobs)) == (0, "", "")
    (jobs / "a.yaml").write_text(job_yaml(workers=3, name="a"))
    code, diff, stderr = invoke("--check", str(out), str(jobs))
    assert code == 1
    assert f"--- {out}/ml_apps_v1_statefulset_a-worker.yaml" in diff
    assert "-  replicas: 2\n+  replicas: 3\n" in diff
    assert "+  - a-worker-2\n" in diff  # the Role grows with the workers
    assert "is stale" in stderr
    assert [p.name for p in out.iterdir()]  # --check writes nothing
    assert "replicas: 2" in (out / "ml_apps_v1_statefulset_a-worker.yaml").read_text()


def test_check_reports_added_and_removed_files(jobs: Path, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    assert invoke("--output-dir", str(out), str(jobs))[0] == 0
    (jobs / "a.yaml").write_text(job_yaml(name="c"))
    code, diff, _ = invoke("--check", str(out), str(jobs))
    assert code == 1
    assert f"--- {out}/ml_v1_configmap_a-config.yaml\n+++ /dev/null\n" in diff
    assert f"--- /dev/null\n+++ {out}/ml_v1_configmap_c-config.yaml\n" in diff


def test_check_against_a_single_file(jobs: Path, tmp_path: Path) -> None:
    committed = tmp_path / "all.yaml"
    _, stream, _ = invoke(str(jobs))
    committed.write_text(stream)
    assert invoke("--check", str(committed), str(jobs))[0] == 0
    committed.write_text(stream.replace("slots=1", "slots=2"))
    code, diff, _ = invoke("--check", str(committed), str(jobs))
    assert code == 1 and "-    a-worker-1 slots=2\n+    a-worker-0 slots=1\n" in diff


def test_check_of_a_missing_render_fails(jobs: Path, tmp_path: Path) -> None:
    code, diff, _ = invoke("--check", str(tmp_path / "nowhere"), str(jobs))
    assert code == 1 and "+++ " in diff


def test_file_names_are_stable_and_unique() -> None:
    obj = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "a", "namespace": "ml"}}
    assert gitops.file_name(obj, "yaml") == "ml_scheduling.volcano.sh_v1beta1_podgroup_a.yaml"
    assert gitops.file_name({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}, "yaml") == "v1_configmap_x.yaml"
    with pytest.raises(gitops.RenderDirError, match="two objects would be written"):
        gitops.files_for([obj, obj], "yaml")
