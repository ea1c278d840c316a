"""What a release is made of: the license, one version everywhere, a changelog entry for it, and a
wheel that installs as the Argo CD Dockerfile installs it."""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import zipfile
from pathlib import Path

import mpigen

ROOT = Path(__file__).resolve().parent.parent


def test_the_license_is_the_full_apache_2_0_text() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    for clause in (
        "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION",
        "9. Accepting Warranty or Additional Liability",
        "END OF TERMS AND CONDITIONS",
    ):
        assert clause in text
    assert 'license = "Apache-2.0"' in (ROOT / "pyproject.toml").read_text()


def test_one_version_everywhere(mpigen_command: list[str]) -> None:
    version = mpigen.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    assert importlib.metadata.version("mpigen") == version, "stale install: run pip install -e '.[test]'"
    # The newest released section names the version (an "Unreleased" section may come before it).
    headings = re.findall(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(), re.MULTILINE)
    [first] = [heading for heading in headings if heading != "Unreleased"][:1]
    assert first == version
    # No release is tagged yet: the pre-commit snippets name a commit, never a tag that does not exist.
    tags = subprocess.run(
        ["git", "tag", "--list"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout
    for path in (ROOT / "README.md", ROOT / "docs" / "howto" / "ci.md", ROOT / ".pre-commit-hooks.yaml"):
        for rev in re.findall(r"rev: (\S+)", path.read_text()):
            assert re.fullmatch(r"[0-9a-f]{40}", rev) or rev in tags.split(), (path, rev)
    done = subprocess.run([*mpigen_command, "--version"], capture_output=True, text=True, check=True)
    assert done.stdout == f"mpigen {version}\n"


def test_one_project_address_everywhere() -> None:
    """The project's address is one placeholder, the image's source label, wherever a file names it."""
    source = re.search(r'^SOURCE = "(\S+)"$', (ROOT / "tools" / "image.py").read_text(), re.MULTILINE)
    assert source and source.group(1) == "https://github.com/OWNER/mpigen"
    named = subprocess.run(
        ["git", "grep", "-h", "-o", "-E", r"https://github\.com/[A-Za-z0-9_-]+/mpigen\b[^ )`\"]*"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    # A path inside the project (`.../tree/main/examples/kpt/...`, image/metadata.yaml) names the same address.
    assert named and {name.split("/tree/", 1)[0] for name in named} == {source.group(1)}


def test_the_wheel_installs_and_runs(tmp_path: Path, fresh_python: str) -> None:
    # The wheel as `pip wheel --no-deps -w dist .` builds it from a checkout
    subprocess.run(
        [fresh_python, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"), str(ROOT)],
        check=True,
        capture_output=True,
    )
    [wheel] = (tmp_path / "dist").glob("mpigen-*.whl")
    assert wheel.name == f"mpigen-{mpigen.__version__}-py3-none-any.whl"
    names = zipfile.ZipFile(wheel).namelist()
    assert f"mpigen-{mpigen.__version__}.dist-info/licenses/LICENSE" in names
    # Installed alone (its dependencies come from this environment), it renders and installs its plugin.
    target = tmp_path / "site"
    subprocess.run(
        [fresh_python, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    where = subprocess.run(
        [fresh_python, "-c", "import mpigen; print(mpigen.__file__)"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.startswith(str(target))
    example = ROOT / "examples" / "v1alpha2" / "tensorflow-benchmarks.yaml"
    render = subprocess.run(
        [fresh_python, "-m", "mpigen", "render", str(example)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert render.returncode == 0, render.stderr
    assert "kind: StatefulSet" in render.stdout
    home = tmp_path / "plugins"
    install = [fresh_python, "-m", "mpigen", "kustomize-plugin", "install", "--plugin-home", str(home)]
    subprocess.run(install, env=env, cwd=tmp_path, check=True, capture_output=True)
    assert (home / "kubeflow.org" / "v1alpha2" / "mpijob" / "MPIJob").is_file()
