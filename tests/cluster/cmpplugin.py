"""Argo CD's plugin server for the tests of mpigen's plugin (test_argocd.py here, and
tests/image/test_argocd_image.py against the image): `argocd-cmp-server` started with a plugin.yaml and
an `mpigen` on its PATH, and `argocd-cmp-driver` (tests/argocd/driver) that talks to it as Argo CD's
repo-server does, given the Application and cluster facts the repo-server takes (`request`)."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from pythons import mpigen_python

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "examples" / "gitops" / "argocd"
JOBS = ROOT / "examples" / "gitops" / "jobs"
APP_PATH = "examples/gitops/jobs"
SOCKET = "mpigen.sock"  # plugin.yaml's metadata.name, no spec.version (cmpserver/plugin/config.go: Address)


class PluginServer:
    """A running argocd-cmp-server and the driver that talks to it as the repo-server would."""

    def __init__(self, driver: str, home: Path, logs: Callable[[], str]) -> None:
        self.driver, self.home, self.logs = driver, home, logs

    def call(
        self, action: str, repo: Path, app: str, request: dict[str, Any]
    ) -> subprocess.CompletedProcess[str]:
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(self.home),
            "TMPDIR": str(self.home / "tmp"),
            "ARGOCD_PLUGINSOCKFILEPATH": str(self.home / "plugins"),
        }
        return subprocess.run(
            [self.driver, action, str(repo), app],
            input=json.dumps(request),
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def manifests(self, repo: Path, app: str, request: dict[str, Any]) -> list[dict[str, Any]]:
        done = self.call("generate", repo, app, request)
        assert done.returncode == 0, done.stderr + self.logs()[-3000:]
        return [json.loads(text) for text in json.loads(done.stdout)["manifests"]]


def start_server(
    server: str, driver: str, home: Path, config: Path, mpigen: Path
) -> tuple[subprocess.Popen[bytes], PluginServer]:
    """argocd-cmp-server with the plugin.yaml in `config`, `mpigen` (an executable) on its PATH and its
    socket in home/plugins, started and listening."""
    for folder in ("plugins", "tmp", "bin"):
        (home / folder).mkdir(exist_ok=True)
    shutil.copy(mpigen, home / "bin" / "mpigen")
    env = {
        "PATH": f"{home / 'bin'}:/usr/bin:/bin",
        "HOME": str(home),
        "TMPDIR": str(home / "tmp"),
        "ARGOCD_PLUGINSOCKFILEPATH": str(home / "plugins"),
    }
    log = home / "cmp-server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [server, "--config-dir-path", str(config), "--logformat", "text", "--loglevel", "info"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    socket = home / "plugins" / SOCKET
    deadline = time.monotonic() + 60
    while not socket.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"argocd-cmp-server did not listen on {socket}:\n{log.read_text()[-3000:]}")
        time.sleep(0.1)
    return process, PluginServer(driver, home, log.read_text)


def mpigen_executable(directory: Path) -> Path:
    """`mpigen`: this checkout's, as the sidecar's PATH finds it."""
    script = directory / "mpigen"
    script.write_text(f'#!/bin/sh\nexec "{mpigen_python()}" -m mpigen "$@"\n')
    script.chmod(0o755)
    return script


def application() -> dict[str, Any]:
    [app] = yaml.safe_load_all((PLUGIN / "application-plugin.yaml").read_text())
    return app  # type: ignore[no-any-return]


def request(
    plugin: dict[str, Any] | None = None, namespace: str = "", kube_version: str = "1.34.1"
) -> dict[str, Any]:
    """What the repo-server takes from an Application and its cluster."""
    return {
        "appName": "mpijobs",
        "namespace": namespace,
        "project": "default",
        "revision": "0123456789abcdef0123456789abcdef01234567",
        "repoURL": "https://git.example.com/ml/training.git",
        "targetRevision": "main",
        "kubeVersion": kube_version,
        "apiVersions": ["v1", "apps/v1", "batch/v1"],
        "plugin": plugin,
    }


def repository(root: Path, files: dict[str, str]) -> Path:
    """A repository holding `files` (path: text) and a README, as Argo CD checks it out."""
    repo = root / "repo"
    for name, text in {"README.md": "# training\n", **files}.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    return repo


def example_repository(root: Path) -> Path:
    return repository(root, {f"{APP_PATH}/{path.name}": path.read_text() for path in sorted(JOBS.iterdir())})


def stop_server(process: subprocess.Popen[bytes]) -> None:
    """End argocd-cmp-server: on SIGTERM it removes its socket but goes on serving until killed, as a pod's
    grace period ends (argo-cd cmpserver/server.go: Run, Shutdown)."""
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=30)
