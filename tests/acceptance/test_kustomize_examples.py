"""The shipped kustomize examples, built by every kustomize the suite has, as the README says to build
them for that version: kustomize v5 (and `kubectl kustomize` from kubectl 1.27 on) as they are;
kustomize v4 with the `sortOptions` lines deleted and `--reorder none`. Each build must print exactly
what `mpigen render` prints for the job, in mpigen's order."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from mpigen.cli import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "kustomize"
SORT_OPTIONS = re.compile(r"^sortOptions:\n(?:  .*\n)+", re.MULTILINE)


def version_of(text: str) -> tuple[int, int]:
    """`{Version:kustomize/v4.5.4 ...}`, `v5.4.3` or kubectl's `v5.8.1` -> (major, minor)."""
    found = re.search(r"v(\d+)\.(\d+)", text)
    assert found, f"no version in {text!r}"
    return int(found.group(1)), int(found.group(2))


def render(path: Path) -> list[dict[str, Any]]:
    result = CliRunner().invoke(cli, ["render", str(path)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return list(yaml.safe_load_all(result.stdout))


def copy_for(version: tuple[int, int], tmp_path: Path) -> tuple[Path, list[str]]:
    """The examples as the README tells users of `version` to use them, and the extra build flags."""
    copy = tmp_path / "kustomize"
    shutil.copytree(EXAMPLES, copy)
    if version >= (5, 0):
        return copy, []
    for kustomization in copy.rglob("kustomization.yaml"):
        text = kustomization.read_text()
        kustomization.write_text(SORT_OPTIONS.sub("", text))
    return copy, ["--reorder", "none"]


@pytest.fixture(scope="module")
def standalone(kustomize_binary: str) -> tuple[str, tuple[int, int]]:
    out = subprocess.run([kustomize_binary, "version"], capture_output=True, text=True, check=True).stdout
    return kustomize_binary, version_of(out)


@pytest.fixture(scope="module")
def environ(tmp_path_factory: pytest.TempPathFactory, mpigen_command: list[str]) -> dict[str, str]:
    """mpigen on PATH (for the exec function) and its legacy plugins installed (for the generators)."""
    home = tmp_path_factory.mktemp("plugins")
    subprocess.run(
        [*mpigen_command, "kustomize-plugin", "install", "--plugin-home", str(home)],
        check=True,
        capture_output=True,
    )
    path = os.pathsep.join([sysconfig.get_path("scripts"), os.environ.get("PATH", "")])
    return {**os.environ, "PATH": path, "KUSTOMIZE_PLUGIN_HOME": str(home)}


def build(argv: list[str], env: dict[str, str]) -> list[dict[str, Any]]:
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    return list(yaml.safe_load_all(done.stdout))


def in_production(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for obj in objects:
        obj["metadata"]["namespace"] = "ml-production"
        obj["metadata"]["labels"]["environment"] = "production"
        for subject in obj.get("subjects", []):
            if "namespace" in subject:
                subject["namespace"] = "ml-production"
    return objects


def test_the_function_example_builds_what_render_prints(
    standalone: tuple[str, tuple[int, int]], environ: dict[str, str], tmp_path: Path
) -> None:
    kustomize, version = standalone
    examples, flags = copy_for(version, tmp_path)
    argv = [kustomize, "build", "--enable-alpha-plugins", "--enable-exec", *flags, str(examples / "function")]
    assert build(argv, environ) == render(EXAMPLES / "function" / "jobs" / "pi.yaml")


def test_without_enable_exec_kustomize_prints_the_job_uncompiled(
    standalone: tuple[str, tuple[int, int]], environ: dict[str, str], tmp_path: Path
) -> None:
    """What the README warns of: `--enable-alpha-plugins` alone skips the exec function without a word."""
    kustomize, version = standalone
    examples, flags = copy_for(version, tmp_path)
    argv = [kustomize, "build", "--enable-alpha-plugins", *flags, str(examples / "function")]
    kinds = [obj["kind"] for obj in build(argv, environ)]
    assert kinds == ["MPIJob"]
    readme = (ROOT / "docs" / "howto" / "kustomize.md").read_text()
    assert "With `--enable-alpha-plugins` but without `--enable-exec`" in readme


def test_under_kustomize_with_origin_annotations_a_bad_job_is_named_by_its_file(
    standalone: tuple[str, tuple[int, int]], environ: dict[str, str], tmp_path: Path
) -> None:
    """kustomize tells an exec function no file, but with `buildMetadata: [originAnnotations]` (as the
    README says) it writes the origin, which the function names the job by."""
    kustomize, version = standalone
    if version < (5, 0):
        pytest.skip(f"kustomize v{version[0]}.{version[1]}: buildMetadata arrived in v5")
    examples, flags = copy_for(version, tmp_path)
    function = examples / "function"
    job = function / "jobs" / "pi.yaml"
    job.write_text(job.read_text().replace("replicas: 2", "replicas: 0", 1))
    with (function / "kustomization.yaml").open("a") as out:
        out.write("buildMetadata: [originAnnotations]\n")
    argv = [kustomize, "build", "--enable-alpha-plugins", "--enable-exec", *flags, str(function)]
    done = subprocess.run(argv, capture_output=True, text=True, env=environ, check=False, timeout=120)
    assert done.returncode != 0
    assert (
        "jobs/pi.yaml: MPIJob/pi-function: spec.mpiReplicaSpecs.Worker.replicas: must be >= 1, got 0"
        in done.stderr
    )
    readme = (ROOT / "docs" / "howto" / "kustomize.md").read_text()
    assert "buildMetadata: [originAnnotations]" in readme


@pytest.mark.slow
def test_the_readme_go_install_of_kustomize_builds_the_pinned_version(tmp_path: Path) -> None:
    """The README's `go install` of kustomize names the version the suite builds, and that command works
    with the installed Go (`@latest` does not: v5.8.3 needs Go 1.27)."""
    from cluster import gotools

    pin = gotools.TOOLS["kustomize"]
    readme = (ROOT / "docs" / "howto" / "kustomize.md").read_text()
    [command] = re.findall(r"`(go install sigs\.k8s\.io/kustomize/\S+)`", readme)
    assert command == f"go install {pin.module}@{pin.version}"
    go = shutil.which("go")
    if go is None:
        pytest.skip("`go` is not on PATH")
    # As the suite's own builds (tests/cluster/gotools.py): the installed Go, never a fetched toolchain;
    # -trimpath shares their build cache. GOBIN keeps the binary here.
    env = {
        **os.environ,
        "GOBIN": str(tmp_path),
        "GOTOOLCHAIN": "local",
        "GOFLAGS": "-trimpath -buildvcs=false",
    }
    env.setdefault("GOPROXY", "https://proxy.golang.org")
    done = subprocess.run(command.split(), env=env, capture_output=True, text=True, check=False, timeout=1800)
    assert done.returncode == 0, done.stderr
    out = subprocess.run([str(tmp_path / "kustomize"), "version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == pin.version


def test_the_plugin_examples_build_with_the_standalone_kustomize(
    standalone: tuple[str, tuple[int, int]], environ: dict[str, str], tmp_path: Path
) -> None:
    kustomize, version = standalone
    examples, flags = copy_for(version, tmp_path)
    expected = render(EXAMPLES / "base" / "mpijob.yaml")
    base = build([kustomize, "build", "--enable-alpha-plugins", *flags, str(examples / "base")], environ)
    assert base == expected
    overlay = build(
        [kustomize, "build", "--enable-alpha-plugins", *flags, str(examples / "overlays" / "production")],
        environ,
    )
    assert overlay == in_production(expected)


def test_the_examples_say_which_kustomize_they_need() -> None:
    """Every kustomization that uses sortOptions says what to do with kustomize v4."""
    for kustomization in EXAMPLES.rglob("kustomization.yaml"):
        text = kustomization.read_text()
        if "sortOptions" in text:
            assert "kustomize v5.0 or later" in text and "--reorder none" in text, kustomization
    assert "apply -k" not in (EXAMPLES / "base" / "kustomization.yaml").read_text()


def test_kubectls_own_kustomize_is_new_enough_for_the_examples(kubectl_binary: str) -> None:
    """The test extra's kubectl embeds kustomize v5 (kubectl 1.27 and later), which the README names."""
    out = subprocess.run(
        [kubectl_binary, "version", "--client", "-o", "json"], capture_output=True, text=True, check=True
    )
    assert version_of(json.loads(out.stdout)["kustomizeVersion"]) >= (5, 0)
