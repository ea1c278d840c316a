"""Committed renders: `render --output-dir` (one file per object, only mpigen's own files replaced) and
`render --check` (a unified diff and exit 1 when stale)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import pythons
import yaml
from click.testing import CliRunner
from jobs import job_yaml

from mpigen import gitops
from mpigen.cli import cli
from mpigen.shells import outdir

JOB = """\
apiVersion: kubeflow.org/v1alpha2
kind: MPIJob
metadata: {name: NAME, namespace: ml}
spec:
  mpiReplicaSpecs:
    Launcher: {template: {spec: {containers: [{name: l, image: i}]}}}
    Worker: {replicas: 2, template: {spec: {containers: [{name: w, image: i}]}}}
"""
A_FILES = [
    "ml_apps_v1_statefulset_a-worker.yaml",
    "ml_batch_v1_job_a-launcher.yaml",
    "ml_rbac.authorization.k8s.io_v1_role_a-launcher.yaml",
    "ml_rbac.authorization.k8s.io_v1_rolebinding_a-launcher.yaml",
    "ml_v1_configmap_a-config.yaml",
    "ml_v1_service_a-worker.yaml",
    "ml_v1_serviceaccount_a-launcher.yaml",
]


def invoke(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["render", *args], input=stdin, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def mpigen(*args: str, **kwargs: object) -> subprocess.Popen[str]:
    return subprocess.Popen([*pythons.mpigen_argv(), *args], text=True, **kwargs)  # type: ignore[call-overload]


def run_limited(*args: str, stdin: object = subprocess.DEVNULL) -> subprocess.CompletedProcess[bytes]:
    """mpigen in a process that may not use more than 2 GiB of memory (a read without a bound fails
    there instead of filling the machine)."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    return subprocess.run(
        [*pythons.mpigen_argv(), *args],
        stdin=stdin,
        capture_output=True,
        preexec_fn=limit,
        timeout=300,
        check=False,
    )  # type: ignore[call-overload, no-any-return]


def tree(directory: Path) -> dict[str, str]:
    """Every entry under `directory`: file text, "-> target" for a link, "/" for a directory."""
    out = {}
    for path in sorted(directory.rglob("*")):
        key = str(path.relative_to(directory))
        out[key] = (
            "-> " + os.readlink(path) if path.is_symlink() else "/" if path.is_dir() else path.read_text()
        )
    return out


@pytest.fixture
def jobs(tmp_path: Path) -> Path:
    directory = tmp_path / "jobs"
    directory.mkdir()
    (directory / "a.yaml").write_text(job_yaml(name="a"))
    return directory


# --- --output-dir ------------------------------------------------------------------------------------


def test_output_dir_writes_one_file_per_object_named_like_kustomize_and_a_manifest(
    jobs: Path, tmp_path: Path
) -> None:
    out = tmp_path / "rendered"
    code, stdout, stderr = invoke("--output-dir", str(out), str(jobs))
    assert code == 0 and stdout == ""
    assert sorted(p.name for p in out.iterdir()) == [gitops.MANIFEST, *A_FILES]
    assert gitops.parse_manifest((out / gitops.MANIFEST).read_text()) == set(A_FILES)
    assert (out / gitops.MANIFEST).read_text().startswith("# Files written by `mpigen render --output-dir`")
    assert f"wrote 7 files to {out}" in stderr
    # The files hold exactly the objects of the stream render.
    _, stream, _ = invoke(str(jobs))
    from_files = [yaml.safe_load((out / name).read_text()) for name in A_FILES]
    key = lambda obj: (obj["kind"], obj["metadata"]["name"])
    assert sorted(from_files, key=key) == sorted(yaml.safe_load_all(stream), key=key)


def test_output_dir_json_writes_json_files(jobs: Path, tmp_path: Path) -> None:
    import json

    out = tmp_path / "rendered"
    assert invoke("-o", "json", "--output-dir", str(out), str(jobs))[0] == 0
    files = sorted(p for p in out.iterdir() if p.name != gitops.MANIFEST)
    assert len(files) == 7 and all(p.suffix == ".json" for p in files)
    assert json.loads(files[0].read_text())["kind"] == "StatefulSet"


def test_a_new_render_removes_the_files_mpigen_wrote_before_and_nothing_else(
    jobs: Path, tmp_path: Path
) -> None:
    out = tmp_path / "rendered"
    (jobs / "b.yaml").write_text(job_yaml(name="b"))
    assert invoke("--output-dir", str(out), str(jobs))[0] == 0
    assert any(p.name.endswith("_b-launcher.yaml") for p in out.iterdir())
    (jobs / "b.yaml").unlink()
    code, _, stderr = invoke("--output-dir", str(out), str(jobs))
    assert code == 0 and "wrote 7 files to" in stderr and "(7 unchanged, 7 removed)" in stderr
    assert sorted(p.name for p in out.iterdir()) == [gitops.MANIFEST, *A_FILES]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jobs", "rendered"]  # nothing left beside it


def test_files_mpigen_did_not_write_are_kept(jobs: Path, tmp_path: Path) -> None:
    """A GitOps directory keeps a kustomization.yaml, a .gitkeep, notes; a user's file whose name looks
    like a rendered one (`my_important_notes.yaml`) was deleted by the next render."""
    out = tmp_path / "rendered"
    out.mkdir()
    mine = {
        ".gitkeep": "",
        "kustomization.yaml": "resources: []\n",
        "README.md": "notes\n",
        "my_important_notes.yaml": "keep: me\n",
        "ml_v1_configmap_hand-written.yaml": "kind: ConfigMap\n",
    }
    for name, text in mine.items():
        (out / name).write_text(text)
    (out / "sub").mkdir()
    (out / "sub" / "x.yaml").write_text("x\n")
    for _ in range(2):
        code, _, stderr = invoke("--output-dir", str(out), str(jobs))
        assert code == 0, stderr
    files = tree(out)
    assert {name: files[name] for name in mine} == mine and files["sub/x.yaml"] == "x\n"
    assert gitops.parse_manifest(files[gitops.MANIFEST]) == set(A_FILES)
    (jobs / "a.yaml").write_text(JOB.replace("NAME", "c"))
    assert invoke("--output-dir", str(out), str(jobs))[0] == 0
    assert {name: (out / name).read_text() for name in mine} == mine
    assert not any(name.startswith("ml_") and "_a-" in name for name in os.listdir(out))


def test_a_file_an_object_would_overwrite_is_reported_and_nothing_is_written(
    jobs: Path, tmp_path: Path
) -> None:
    out = tmp_path / "rendered"
    out.mkdir()
    (out / "ml_v1_configmap_a-config.yaml").write_text("mine\n")
    code, stdout, stderr = invoke("--output-dir", str(out), str(jobs))
    assert (code, stdout) == (1, "")
    assert stderr.startswith(
        f"mpigen: {out}/ml_v1_configmap_a-config.yaml: exists and mpigen did not write it"
    )
    assert "move it away, then render again" in stderr
    assert tree(out) == {"ml_v1_configmap_a-config.yaml": "mine\n"}


def test_a_file_with_the_same_bytes_is_adopted(jobs: Path, tmp_path: Path) -> None:
    """A render made before the manifest existed: replacing a file by the same bytes loses nothing."""
    out = tmp_path / "rendered"
    assert invoke("--output-dir", str(out), str(jobs))[0] == 0
    (out / gitops.MANIFEST).unlink()
    before = tree(out)
    assert invoke("--output-dir", str(out), str(jobs))[0] == 0
    assert tree(out) == {**before, gitops.MANIFEST: gitops.manifest_text(A_FILES)}


@pytest.mark.parametrize("kind", ["directory", "symlink"])
def test_a_directory_or_link_under_an_objects_name_is_refused(jobs: Path, tmp_path: Path, kind: str) -> None:
    out = tmp_path / "rendered"
    assert invoke("--output-dir", str(out), str(jobs))[0] == 0
    victim = out / "ml_v1_configmap_a-config.yaml"
    victim.unlink()
    (tmp_path / "elsewhere.yaml").write_text("x\n")
    victim.mkdir() if kind == "directory" else victim.symlink_to(tmp_path / "elsewhere.yaml")
    (jobs / "a.yaml").write_text(JOB.replace("replicas: 2", "replicas: 3").replace("NAME", "a"))
    before = tree(out)
    code, _, stderr = invoke("--output-dir", str(out), str(jobs))
    assert (
        code == 1
        and f"{victim.name}: is a {'directory' if kind == 'directory' else 'symbolic link'}" in stderr
    )
    assert tree(out) == before and (tmp_path / "elsewhere.yaml").read_text() == "x\n"


def test_an_unchanged_render_touches_nothing(jobs: Path, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    assert invoke("--output-dir", str(out), str(jobs))[0] == 0
    before = {p.name: p.stat().st_ino for p in out.iterdir()}
    assert invoke("--output-dir", str(out), str(jobs))[0] == 0
    assert {p.name: p.stat().st_ino for p in out.iterdir()} == before


def test_invalid_input_leaves_the_previous_render_untouched(jobs: Path, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    assert invoke("--output-dir", str(out), str(jobs))[0] == 0
    before = tree(out)
    (jobs / "bad.yaml").write_text(JOB.replace("NAME", "bad").replace("replicas: 2", "replicas: 0"))
    code, stdout, stderr = invoke("--output-dir", str(out), str(jobs))
    assert code == 1 and stdout == "" and "must be >= 1" in stderr
    assert tree(out) == before


def test_a_failed_write_leaves_the_previous_render_and_no_temporary_files(
    jobs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "rendered"
    assert invoke("--output-dir", str(out), str(jobs))[0] == 0
    before = tree(out)
    (jobs / "a.yaml").write_text(JOB.replace("replicas: 2", "replicas: 3").replace("NAME", "a"))
    written = []
    real = outdir._write_new

    def disk_full_at_the_third(fd: int, directory: str, temp: str, data: bytes) -> None:
        if len(written) == 2:
            raise gitops.RenderDirError(f"{directory}: cannot write: No space left on device")
        real(fd, directory, temp, data)
        written.append(temp)

    monkeypatch.setattr(outdir, "_write_new", disk_full_at_the_third)
    code, _, stderr = invoke("--output-dir", str(out), str(jobs))
    assert code == 1 and "No space left on device" in stderr
    assert tree(out) == before


def test_a_failed_first_render_leaves_no_directory(
    jobs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(fd: int, directory: str, temp: str, data: bytes) -> None:
        raise gitops.RenderDirError(f"{directory}: cannot write: No space left on device")

    monkeypatch.setattr(outdir, "_write_new", fail)
    assert invoke("--output-dir", str(tmp_path / "new"), str(jobs))[0] == 1
    assert sorted(os.listdir(tmp_path)) == ["jobs"]


def test_the_manifest_lists_old_and_new_files_while_they_are_replaced() -> None:
    """A render killed between the renames leaves every file it wrote listed: the next one cleans up."""
    old = {"v1_configmap_old.yaml"}
    entries = {"v1_configmap_old.yaml": gitops.Entry("file", "old\n")}
    update = gitops.plan_update({"v1_configmap_new.yaml": "new\n"}, old, entries, has_manifest=True)
    assert gitops.parse_manifest(update.journal) == {"v1_configmap_old.yaml", "v1_configmap_new.yaml"}
    assert gitops.parse_manifest(update.manifest) == {"v1_configmap_new.yaml"}
    assert update.remove == ["v1_configmap_old.yaml"] and update.write == {"v1_configmap_new.yaml": "new\n"}


def test_a_manifest_cannot_name_a_path_outside_the_directory() -> None:
    text = "../../home/user/.bashrc\n/etc/passwd\nsub/v1_configmap_x.yaml\n..\nv1_configmap_x.yaml\n"
    assert gitops.parse_manifest(text) == {"v1_configmap_x.yaml"}


def test_output_dir_through_a_symlink_renders_into_its_target_and_keeps_the_link(
    jobs: Path, tmp_path: Path
) -> None:
    target = tmp_path / "store" / "rendered"
    target.mkdir(parents=True)
    (target / "kustomization.yaml").write_text("resources: []\n")
    link = tmp_path / "rendered"
    link.symlink_to("store/rendered")  # relative, as `ln -s` users write it
    for _ in range(2):
        assert invoke("--output-dir", str(link), str(jobs))[0] == 0
    assert link.is_symlink() and os.readlink(link) == "store/rendered"
    assert sorted(os.listdir(target)) == sorted([gitops.MANIFEST, "kustomization.yaml", *A_FILES])
    assert sorted(os.listdir(tmp_path)) == ["jobs", "rendered", "store"]  # no stray .rendered.new-*


def test_a_dangling_symlink_as_output_dir_is_refused_and_nothing_is_created(
    jobs: Path, tmp_path: Path
) -> None:
    link = tmp_path / "rendered"
    link.symlink_to(tmp_path / "missing" / "deeper")
    code, stdout, stderr = invoke("--output-dir", str(link), str(jobs))
    assert (code, stdout) == (1, "")
    assert (
        stderr
        == f"mpigen: {link}: a symbolic link to {tmp_path}/missing/deeper, which does not exist; create that directory or fix the link\n"
    )
    assert sorted(os.listdir(tmp_path)) == ["jobs", "rendered"]


def test_a_symlink_loop_as_output_dir_is_an_input_error(jobs: Path, tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    code, _, stderr = invoke("--output-dir", str(tmp_path / "a"), str(jobs))
    assert code == 1 and "symbolic link loop" in stderr and "internal error" not in stderr


def test_a_file_as_output_dir_is_refused(jobs: Path, tmp_path: Path) -> None:
    (tmp_path / "rendered").write_text("x")
    code, _, stderr = invoke("--output-dir", str(tmp_path / "rendered"), str(jobs))
    assert code == 1 and stderr == f"mpigen: {tmp_path}/rendered: not a directory\n"


def test_a_render_waits_for_another_render_into_the_same_directory(jobs: Path, tmp_path: Path) -> None:
    import fcntl

    out = tmp_path / "rendered"
    out.mkdir()
    fd = os.open(out, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # as a render in progress holds it
    try:
        proc = mpigen("render", "--output-dir", str(out), str(jobs), stderr=subprocess.PIPE)
        assert proc.stderr is not None
        assert proc.stderr.readline() == f"mpigen: waiting for another render into {out} to finish\n"
        assert os.listdir(out) == []  # nothing written while the other render holds the directory
    finally:
        os.close(fd)
    assert proc.wait(timeout=120) == 0
    proc.stderr.close()
    assert sorted(os.listdir(out)) == [gitops.MANIFEST, *A_FILES]


def test_concurrent_renders_into_a_new_directory_give_one_complete_render(tmp_path: Path) -> None:
    """Each render holds different jobs: the result is exactly one of them, never a mix, and all succeed."""
    sources = []
    for index in range(6):
        path = tmp_path / f"job{index}.yaml"
        path.write_text(JOB.replace("NAME", f"j{index}"))
        sources.append(path)
    out = tmp_path / "new" / "rendered"
    procs = [mpigen("render", "--output-dir", str(out), str(src), stderr=subprocess.PIPE) for src in sources]
    errors = [proc.communicate(timeout=300)[1] for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * len(procs), errors
    names = set(os.listdir(out))
    owners = {name.split("_")[-1].split("-")[0] for name in names - {gitops.MANIFEST}}
    assert len(owners) == 1 and len(names) == 8, names
    assert gitops.parse_manifest((out / gitops.MANIFEST).read_text()) == names - {gitops.MANIFEST}


# --- --check -----------------------------------------------------------------------------------------


def test_output_dir_and_check_exclude_each_other(jobs: Path, tmp_path: Path) -> None:
    code, _, stderr = invoke("--output-dir", str(tmp_path / "x"), "--check", str(tmp_path / "y"), str(jobs))
    assert code == 2 and "cannot be used together" in stderr


def test_check_passes_on_a_current_render_and_fails_with_a_diff_when_stale(
    jobs: Path, tmp_path: Path
) -> None:
    out = tmp_path / "rendered"
    assert invoke("--output-dir", str(out), str(jobs))[0] == 0
    assert invoke("--check", str(out), str(jobs)) == (0, "", "")
    (jobs / "a.yaml").write_text(JOB.replace("NAME", "a").replace("replicas: 2", "replicas: 3"))
    code, diff, _ = invoke("--check", str(out), str(jobs))
    assert code == 1
    assert f"--- {out}/ml_apps_v1_statefulset_a-worker.yaml" in diff
    assert "-  replicas: 2\n+  replicas: 3\n" in diff
    assert "+  - a-worker-2\n" in diff  # the Role grows with the workers
    assert (
        "replicas: 2" in (out / "ml_apps_v1_statefulset_a-worker.yaml").read_text()
    )  # --check writes nothing


def test_the_stale_hint_is_the_exact_command_that_updates(jobs: Path, tmp_path: Path) -> None:
    out, single = tmp_path / "rendered", tmp_path / "all.yaml"
    assert invoke("-n", "ml", "--output-dir", str(out), str(jobs))[0] == 0
    single.write_text("")
    code, _, stderr = invoke("-n", "ml", "--check", str(out), "--gang-scheduler=volcano", str(jobs))
    assert code == 1
    assert (
        stderr
        == f"mpigen: {out} is stale; update it with: mpigen render -n ml --output-dir {out} --gang-scheduler=volcano {jobs}\n"
    )
    code, _, stderr = invoke(f"--check={single}", "-o", "json", str(jobs))
    assert stderr == f"mpigen: {single} is stale; update it with: mpigen render -o json {jobs} > {single}\n"
    spaced = tmp_path / "my render"
    spaced.mkdir()
    stderr = invoke("--check", str(spaced), str(jobs))[2]
    assert stderr.endswith(f"update it with: mpigen render --output-dir '{spaced}' {jobs}\n")


def test_check_ignores_files_mpigen_did_not_write(jobs: Path, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    out.mkdir()
    (out / ".gitkeep").write_text("")
    (out / "kustomization.yaml").write_text("resources: []\n")
    os.mkfifo(out / "pipe.yaml")  # not mpigen's: never opened
    assert invoke("--output-dir", str(out), str(jobs))[0] == 0
    assert invoke("--check", str(out), str(jobs)) == (0, "", "")


def test_check_of_a_directory_never_speaks_of_replacing_it(jobs: Path, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    out.mkdir()
    (out / "notes.txt").write_text("x")
    code, _, stderr = invoke("--check", str(out), str(jobs))
    assert code == 1 and "replac" not in stderr.split("update it with")[0]


def test_check_reports_added_and_removed_files(jobs: Path, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    assert invoke("--output-dir", str(out), str(jobs))[0] == 0
    (jobs / "a.yaml").write_text(job_yaml(name="c"))
    code, diff, _ = invoke("--check", str(out), str(jobs))
    assert code == 1
    assert f"--- {out}/ml_v1_configmap_a-config.yaml\n+++ /dev/null\n" in diff
    assert f"--- /dev/null\n+++ {out}/ml_v1_configmap_c-config.yaml\n" in diff
    assert f"--- {out}/{gitops.MANIFEST}\n" in diff


def test_check_against_a_single_file(jobs: Path, tmp_path: Path) -> None:
    committed = tmp_path / "all.yaml"
    _, stream, _ = invoke(str(jobs))
    committed.write_text(stream)
    assert invoke("--check", str(committed), str(jobs))[0] == 0
    committed.write_text(stream.replace("slots=1", "slots=2"))
    code, diff, _ = invoke("--check", str(committed), str(jobs))
    assert code == 1 and "-    a-worker-1 slots=2\n+    a-worker-0 slots=1\n" in diff


@pytest.mark.parametrize(
    ("name", "command"),
    [("nowhere", "mpigen render --output-dir {path} {jobs}"), ("all.yaml", "mpigen render {jobs} > {path}")],
)
def test_check_of_a_missing_render_says_it_does_not_exist(
    jobs: Path, tmp_path: Path, name: str, command: str
) -> None:
    path = tmp_path / name
    code, stdout, stderr = invoke("--check", str(path), str(jobs))
    assert (code, stdout) == (1, "")
    assert (
        stderr
        == f"mpigen: --check {path}: does not exist; render it first: {command.format(path=path, jobs=jobs)}\n"
    )


def test_check_with_the_sources_forgotten_says_so(jobs: Path, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    assert invoke("--output-dir", str(out), str(jobs))[0] == 0
    code, stdout, stderr = invoke("--check", str(out), stdin="")  # CI: stdin is empty, not a terminal
    assert (code, stdout) == (1, "")
    assert (
        stderr
        == f"mpigen: --check {out}: no sources given and stdin is empty; name the jobs it is rendered from: mpigen render --check {out} jobs/\n"
    )


def test_check_of_a_file_that_is_not_utf8_names_it(jobs: Path, tmp_path: Path) -> None:
    committed = tmp_path / "all.yaml"
    committed.write_bytes(b"kind: \xff\n")
    code, _, stderr = invoke("--check", str(committed), str(jobs))
    assert code == 1 and stderr == f"mpigen: --check: {committed}: not valid UTF-8 (byte 6)\n"
    out = tmp_path / "rendered"
    assert invoke("--output-dir", str(out), str(jobs))[0] == 0
    (out / A_FILES[0]).write_bytes(b"\xfe")
    assert (
        invoke("--check", str(out), str(jobs))[2]
        == f"mpigen: --check: {out}/{A_FILES[0]}: not valid UTF-8 (byte 0)\n"
    )


def test_check_of_a_path_whose_name_is_not_utf8(jobs: Path, tmp_path: Path) -> None:
    name = os.fsdecode(bytes(tmp_path) + b"/r\xff.yaml")
    _, stream, _ = invoke(str(jobs))
    Path(name).write_text(stream)
    proc = subprocess.run(
        [*pythons.mpigen_argv(), "render", "--check", name, str(jobs)],
        capture_output=True,
        check=False,
    )
    assert (proc.returncode, proc.stderr) == (0, b"")
    Path(name).write_text(stream.replace("slots=1", "slots=2"))
    proc = subprocess.run(
        [*pythons.mpigen_argv(), "render", "--check", name, str(jobs)],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 1 and b"/r\\xff.yaml is stale" in proc.stderr and b"+++ " in proc.stdout


def test_check_refuses_a_fifo_instead_of_blocking(jobs: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "all.yaml"
    os.mkfifo(fifo)
    proc = subprocess.run(
        [*pythons.mpigen_argv(), "render", "--check", str(fifo), str(jobs)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (proc.returncode, proc.stderr) == (
        1,
        f"mpigen: --check: {fifo}: not a regular file or directory but a FIFO\n",
    )


def test_check_refuses_a_fifo_under_a_rendered_name(jobs: Path, tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    assert invoke("--output-dir", str(out), str(jobs))[0] == 0
    (out / A_FILES[0]).unlink()
    os.mkfifo(out / A_FILES[0])
    proc = subprocess.run(
        [*pythons.mpigen_argv(), "render", "--check", str(out), str(jobs)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (proc.returncode, proc.stderr) == (
        1,
        f"mpigen: --check: {out}/{A_FILES[0]}: not a regular file but a FIFO\n",
    )


def test_check_refuses_a_device(jobs: Path) -> None:
    proc = run_limited("render", "--check", "/dev/zero", str(jobs))
    assert (proc.returncode, proc.stderr) == (
        1,
        b"mpigen: --check: /dev/zero: not a regular file or directory but a character device\n",
    )


def test_file_names_are_stable_and_unique() -> None:
    obj = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "a", "namespace": "ml"},
    }
    assert gitops.file_name(obj, "yaml") == "ml_scheduling.volcano.sh_v1beta1_podgroup_a.yaml"
    assert (
        gitops.file_name({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}, "yaml")
        == "v1_configmap_x.yaml"
    )
    with pytest.raises(gitops.RenderDirError, match="two objects would be written"):
        gitops.files_for([obj, obj], "yaml")
