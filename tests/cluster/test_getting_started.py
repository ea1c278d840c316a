"""The getting-started page's cluster commands, run as written against the suite's control plane: each
```console block of docs/getting-started.md that calls kubectl (but for those marked `<!-- not run by the
tests: ... -->`, which need pods that run or a namespace controller), in the page's order, with the
tutorial's namespace renamed to one of this test's own. The render is applied, every object it names is
then on the API server, and the page's delete leaves nothing with the job's label behind."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pythons
from controlplane import Cluster

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "getting-started.md"
FENCE = re.compile(
    r"^(<!-- not run by the tests:[^\n]*-->\n)?```console\n(.*?)^```$", re.MULTILINE | re.DOTALL
)
TUTORIAL = "mpigen-tutorial"
INSTANCE = "app.kubernetes.io/instance=pi"
KINDS = "serviceaccounts,roles,rolebindings,configmaps,secrets,services,statefulsets,jobs"


def cluster_commands() -> list[str]:
    """The commands of the page's console blocks that call kubectl and are not marked, in order."""
    found = []
    for match in FENCE.finditer(PAGE.read_text()):
        if match.group(1) is None and "kubectl" in match.group(2):
            found.extend(line for line in match.group(2).splitlines() if line.strip())
    return found


def test_the_page_applies_and_deletes_the_job_on_a_real_api_server(cluster: Cluster, tmp_path: Path) -> None:
    commands = cluster_commands()
    apply = next(i for i, line in enumerate(commands) if "| kubectl apply -f -" in line)
    delete = next(i for i, line in enumerate(commands) if "| kubectl delete --ignore-not-found -f -" in line)
    assert commands[0] == f"kubectl create namespace {TUTORIAL}" and apply < delete
    namespace = f"{TUTORIAL}-{os.getpid()}"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "mpigen").write_text(f'#!/bin/sh\nexec "{pythons.mpigen_python()}" -m mpigen "$@"\n')
    (bin_dir / "mpigen").chmod(0o755)
    (bin_dir / "kubectl").symlink_to(cluster.kubectl_path)
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]),
        "KUBECONFIG": str(cluster.admin_kubeconfig),
    }

    def run(line: str) -> str:
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", line.replace(TUTORIAL, namespace)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, f"{line}\n{done.stderr}"
        return done.stdout

    def live() -> set[tuple[str, str]]:
        items = cluster.get(KINDS, "-n", namespace, "-l", INSTANCE)["items"]
        return {(item["kind"], item["metadata"]["name"]) for item in items}

    try:
        for line in commands[: apply + 1]:
            run(line)
        render = run(f"mpigen render -n {TUTORIAL} examples/v2beta1/pi.yaml")
        rendered = set(
            re.findall(r"^kind: (\S+)\nmetadata:\n(?:  .*\n)*?  name: (\S+)$", render, re.MULTILINE)
        )
        assert {("StatefulSet", "pi-worker"), ("Job", "pi-launcher"), ("Secret", "pi-ssh")} <= rendered
        assert live() == rendered
        for line in commands[apply + 1 : delete + 1]:
            run(line)
        cluster.wait_for("the tutorial's objects to go", lambda: not live(), timeout=60)
        for line in commands[delete + 1 :]:
            run(line)
    finally:
        if not cluster.owned:
            cluster.kubectl("delete", "namespace", namespace, "--wait=false", check=False)
