"""Every command the user documentation gives is run as written: each ```sh block of README.md and of
docs/**/*.md runs in bash (`set -euo pipefail`), offline, in a fresh copy of examples/, with this
checkout's mpigen, the test extra's kubectl and, for a block that calls it, the suite's standalone
kustomize on PATH, and must exit 0. A command that needs a cluster, a network, root or a tool the suite
does not build is written in a ```console block, which is shown and not run here (the getting-started
page's cluster commands are run by tests/cluster/test_getting_started.py). CONTRIBUTING.md says so."""

from __future__ import annotations

import itertools
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)

# ```sh blocks that are not run here, each with the test that runs it.
NOT_HERE = {
    (
        "README.md",
        (
            "pip install . && mpigen render examples/v1alpha2/tensorflow-benchmarks.yaml\n"
            "pip install -e '.[test]' && python -m pytest\n"
        ),
    ): "the README's two commands are what .ci/run runs (tests/acceptance/test_readme.py pins them)",
}


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(language: str) -> list[tuple[str, int, str]]:
    """(page, index of the block on the page, its text) of every fenced block in `language`."""
    found = []
    for page in pages():
        name = str(page.relative_to(ROOT))
        for index, match in enumerate(m for m in FENCE.finditer(page.read_text()) if m.group(1) == language):
            found.append((name, index, match.group(2)))
    return found


SH = blocks("sh")
# The blocks run here: every one but those run elsewhere (NOT_HERE, each still required to exist below).
RUN_HERE = [(page, index, text) for page, index, text in SH if (page, text) not in NOT_HERE]


ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def commands(text: str) -> set[str]:
    """The first word of each command of a block (after pipes and `&&` too)."""
    words = set()
    for line in text.splitlines():
        for part in re.split(r"\||&&|;", line.split("  #")[0]):
            part = part.strip()
            if part and not part.startswith("#"):
                # `NAME=value command`: the command is the first word that is not an assignment.
                try:
                    split = shlex.split(part)
                except ValueError:  # a quote that a pipe inside it cut
                    split = part.split()
                command = list(itertools.dropwhile(ASSIGNMENT.match, split))
                words.add(command[0] if command else split[0])
    return words


def test_the_documentation_has_commands_and_every_exception_is_still_there() -> None:
    assert len(SH) >= 10
    assert {("README.md", text) for name, _, text in SH if name == "README.md"} >= NOT_HERE.keys()


@pytest.mark.parametrize(
    ("page", "index", "text"), RUN_HERE, ids=[f"{page}#{index}" for page, index, _ in RUN_HERE]
)
def test_a_sh_block_runs_as_written(
    page: str,
    index: int,
    text: str,
    tmp_path: Path,
    mpigen_command: list[str],
    kubectl_binary: str,
    request: pytest.FixtureRequest,
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # This checkout's mpigen (as `mpigen_command` runs it), named as a user's shell finds it.
    argv = " ".join(f'"{word}"' for word in mpigen_command)
    (bin_dir / "mpigen").write_text(f'#!/bin/sh\nexec {argv} "$@"\n')
    (bin_dir / "mpigen").chmod(0o755)
    (bin_dir / "kubectl").symlink_to(kubectl_binary)
    used = commands(text)
    if "kustomize" in used:
        (bin_dir / "kustomize").symlink_to(request.getfixturevalue("kustomize_binary"))
    unknown = used - {"mpigen", "kubectl", "kustomize", "sed", "grep", "echo", "cat", "ls", "head"}
    assert not unknown, f"{page}: a command the test does not provide; write it as ```console: {unknown}"
    work = tmp_path / "work"
    shutil.copytree(ROOT / "examples", work / "examples")
    home = tmp_path / "home"
    home.mkdir()
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"KUSTOMIZE_PLUGIN_HOME", "XDG_CONFIG_HOME", "KUBECONFIG"}
    }
    env.update(PATH=os.pathsep.join([str(bin_dir), env.get("PATH", "")]), HOME=str(home))
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", text],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, (
        f"{page}, block {index}:\n{text}\nstdout:\n{done.stdout[-2000:]}\nstderr:\n{done.stderr}"
    )


def test_the_gitops_ci_workflow_runs_mpigen_commands_the_docs_run() -> None:
    """The example's GitHub Actions workflow is not run here (no Actions runner): each of its mpigen
    steps is a command of a ```sh block, which is."""
    workflow = ROOT / "examples" / "gitops" / ".github" / "workflows" / "check-rendered.yml"
    steps = re.findall(r"^    - run: (mpigen .*)$", workflow.read_text(), re.MULTILINE)
    assert len(steps) == 2
    run_here = {line.split("  #")[0].strip() for _, _, text in SH for line in text.splitlines()}
    assert set(steps) <= run_here
