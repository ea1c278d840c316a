"""mpigen's Argo CD plugin on mpigen's own image, run as Argo CD's sidecar runs it: the image's entrypoint
replaced by Argo CD's `argocd-cmp-server` (here the suite's build of it, mounted where Argo CD's copyutil
init container puts it, /var/run/argocd), as uid 999, a read-only root file system with /tmp of its own,
plugin.yaml mounted at /home/argocd/cmp-server/config/plugin.yaml and the socket directory
/home/argocd/cmp-server/plugins shared with the host, where the suite's driver plays the repo-server
(tests/cluster/cmpplugin.py). The same contract as tests/cluster/test_argocd.py, against the image."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import gotools
import pytest
import yaml
from cmpplugin import APP_PATH, JOBS, PLUGIN, SOCKET, PluginServer, example_repository, repository, request
from images import Podman
from jobs import load_all
from pythons import mpigen_argv

from mpigen.options import OPTION_TABLE

CONFIG = "/home/argocd/cmp-server/config/plugin.yaml"
SOCKETS = "/home/argocd/cmp-server/plugins"
SERVER = "/var/run/argocd/argocd-cmp-server"


class Sidecar(NamedTuple):
    plugin: PluginServer
    container: str


@pytest.fixture(scope="module")
def sidecar(podman: Podman) -> Iterator[Sidecar]:
    server, driver = gotools.require("argocd-cmp-server"), gotools.require("argocd-cmp-driver")
    home = Path(tempfile.mkdtemp(prefix="mpigen-cmpi-"))  # short: a socket's path has at most 108 bytes
    (home / "tmp").mkdir()
    (home / "plugins").mkdir()
    (home / "plugins").chmod(0o777)  # the sidecar's user, 999, makes its socket there
    name = f"mpigen-argocd-{os.getpid()}"
    started = podman(
        "run", "-d", "--name", name, "--network", "none", "--read-only", "--tmpfs", "/tmp", "--user", "999",
        "-v", f"{server}:{SERVER}:ro",
        "-v", f"{PLUGIN / 'plugin.yaml'}:{CONFIG}:ro",
        "-v", f"{home / 'plugins'}:{SOCKETS}",
        "--entrypoint", SERVER,
        podman.image,
    )  # fmt: skip
    assert started.returncode == 0, started.stderr.decode()

    def logs() -> str:
        done = podman("logs", name)
        return (done.stdout + done.stderr).decode()

    try:
        deadline = time.monotonic() + 60
        while not (home / "plugins" / SOCKET).exists():
            if time.monotonic() > deadline:
                pytest.fail(f"the sidecar did not listen on {SOCKETS}/{SOCKET}:\n{logs()[-3000:]}")
            time.sleep(0.2)
        yield Sidecar(PluginServer(driver, home, logs), name)
    finally:
        podman("rm", "-f", name)
        shutil.rmtree(home, ignore_errors=True)


def rendered(*args: str) -> list[dict[str, object]]:
    done = subprocess.run(
        mpigen_argv("render", *args), capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return load_all(done.stdout)


def test_the_sidecar_runs_as_user_999_and_returns_what_render_prints(
    sidecar: Sidecar, podman: Podman, tmp_path: Path
) -> None:
    server = sidecar.plugin
    repo = example_repository(tmp_path)
    assert server.manifests(repo, APP_PATH, request({}, kube_version="")) == rendered(str(JOBS))
    plugin = {"name": "mpigen", "parameters": [{"name": "target", "string": "jobset"}]}
    manifests = server.manifests(repo, APP_PATH, request(plugin, "ml", "1.33.0"))
    assert manifests == rendered(str(JOBS), "--target", "jobset", "-n", "ml", "--kube-version", "1.33")
    who = podman("exec", sidecar.container, "id", "-u")
    assert who.stdout.decode().strip() == "999"


def test_an_invalid_job_fails_with_mpigens_message_from_the_image(sidecar: Sidecar, tmp_path: Path) -> None:
    broken = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "x"}, "spec": {}}
    repo = repository(tmp_path, {"jobs/x.yaml": yaml.safe_dump(broken)})
    done = sidecar.plugin.call("generate", repo, "jobs", request({}))
    assert done.returncode == 1
    assert "`mpigen argocd generate` failed exit status 1: ./x.yaml: MPIJob/x: " in done.stderr, done.stderr


def test_discovery_and_parameters_from_the_image(sidecar: Sidecar, tmp_path: Path) -> None:
    repo = repository(
        tmp_path,
        {
            "jobs/pi.yaml": (JOBS / "pi.yaml").read_text(),
            "other/cm.yaml": "apiVersion: v1\nkind: ConfigMap\n",
        },
    )
    assert [
        json.loads(sidecar.plugin.call("match", repo, app, request(None)).stdout)["matched"]
        for app in ("jobs", "other")
    ] == [True, False]
    done = sidecar.plugin.call("parameters", repo, "jobs", request({"name": "mpigen"}))
    assert done.returncode == 0, done.stderr
    assert [entry["name"] for entry in json.loads(done.stdout)["parameters"]] == [
        spec.flag for spec in OPTION_TABLE
    ]
