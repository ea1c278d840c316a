"""mpigen's Argo CD plugin (examples/gitops/argocd) under Argo CD's own plugin server.

`argocd-cmp-server` (Argo CD's command, built by gotools.py) runs with the example's plugin.yaml and
mpigen on its PATH, as in the sidecar; `argocd-cmp-driver` (tests/argocd/driver, built with it) plays
the repo-server with Argo CD's own packages: it finds the plugin among the sockets (discovery's
MatchRepository), streams the application's repository as a tgz and asks for the manifests or the
parameter announcements, with the environment the repo-server builds from an Application. No cluster:
the plugin's contract ends at the manifests. The same contract against the container image, as uid 999,
is in tests/image/test_argocd_image.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gotools
import pytest
import yaml
from cmpplugin import (
    APP_PATH,
    JOBS,
    PLUGIN,
    ROOT,
    PluginServer,
    application,
    example_repository,
    mpigen_executable,
    repository,
    request,
    start_server,
    stop_server,
)
from jobs import load_all
from mpijobs import job
from pythons import mpigen_argv

from mpigen.options import OPTION_TABLE
from tools import find_kustomize

TRAINJOB = ROOT / "examples" / "trainjob"


@pytest.fixture(scope="module")
def cmp() -> Iterator[PluginServer]:
    server, driver = gotools.require("argocd-cmp-server"), gotools.require("argocd-cmp-driver")
    # In /tmp itself: a socket's path may have at most 108 bytes.
    home = Path(tempfile.mkdtemp(prefix="mpigen-cmp-"))
    process, plugin = start_server(server, driver, home, PLUGIN, mpigen_executable(home))
    try:
        yield plugin
    finally:
        stop_server(process)
        shutil.rmtree(home, ignore_errors=True)


def render(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        mpigen_argv("render", *args), capture_output=True, text=True, timeout=120, check=False
    )


def rendered(*args: str) -> list[dict[str, Any]]:
    done = render(*args)
    assert done.returncode == 0, done.stderr
    return load_all(done.stdout)


def test_the_plugin_server_returns_what_mpigen_render_prints(cmp: PluginServer, tmp_path: Path) -> None:
    repo = example_repository(tmp_path)
    # An Application with `plugin: {}`: no parameter; the jobs name their namespace themselves.
    manifests = cmp.manifests(repo, APP_PATH, request({}, kube_version=""))
    assert manifests == rendered(str(JOBS))
    assert len(manifests) > 20


def test_the_example_application_renders_with_its_parameters(cmp: PluginServer, tmp_path: Path) -> None:
    repo = example_repository(tmp_path)
    app = application()
    manifests = cmp.manifests(
        repo, APP_PATH, request(app["spec"]["source"]["plugin"], app["spec"]["destination"]["namespace"])
    )
    assert manifests == rendered(
        str(JOBS), "--network-policy", "same-job", "--namespace", "ml", "--kube-version", "1.34"
    )
    assert "NetworkPolicy" in {obj["kind"] for obj in manifests}


def plugin_with(**parameters: str) -> dict[str, Any]:
    return {
        "name": "mpigen",
        "parameters": [
            {"name": name.replace("_", "-"), "string": value} for name, value in parameters.items()
        ],
    }


def one_job_repository(root: Path, document: dict[str, Any]) -> Path:
    return repository(root, {"jobs/train.yaml": yaml.safe_dump(document)})


def test_parameters_set_the_options_under_the_flags_names(cmp: PluginServer, tmp_path: Path) -> None:
    repo = one_job_repository(tmp_path, job("v2beta1", "train"))
    manifests = cmp.manifests(repo, "jobs", request(plugin_with(target="jobset", queue="team-a"), "ml"))
    assert manifests == rendered(
        str(repo / "jobs"), "--target", "jobset", "--queue", "team-a", "-n", "ml", "--kube-version", "1.34"
    )
    [jobset] = [obj for obj in manifests if obj["kind"] == "JobSet"]
    assert jobset["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"
    assert jobset["metadata"]["namespace"] == "ml"
    # The namespace parameter wins over the destination's; a job's own annotation wins over a parameter.
    annotated = job("v2beta1", "train")
    annotated["metadata"]["annotations"] = {"mpigen.dev/target": "operator"}
    repo = one_job_repository(tmp_path / "annotated", annotated)
    manifests = cmp.manifests(repo, "jobs", request(plugin_with(target="jobset", namespace="other"), "ml"))
    assert {obj["kind"] for obj in manifests} >= {"StatefulSet", "Job"}
    assert {obj["metadata"]["namespace"] for obj in manifests} == {"other"}


def test_an_invalid_job_fails_the_generation_with_mpigens_message(cmp: PluginServer, tmp_path: Path) -> None:
    broken = job("v2beta1", "train")
    broken["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = -3
    repo = one_job_repository(tmp_path, broken)
    done = cmp.call("generate", repo, "jobs", request({}))
    assert done.returncode == 1
    assert "error generating manifests in cmp" in done.stderr
    assert "`mpigen argocd generate` failed exit status 1" in done.stderr
    expected = render(str(repo / "jobs"), "--kube-version", "1.34")
    assert expected.returncode == 1
    message = expected.stderr.strip().replace(str(repo / "jobs"), ".")
    assert "spec.mpiReplicaSpecs.Worker.replicas" in message
    assert message in done.stderr


@pytest.mark.parametrize(
    ("plugin", "kube_version", "message"),
    [
        (
            plugin_with(targt="jobset"),
            "1.34.1",
            'ARGOCD_APP_PARAMETERS: parameter "targt": unknown mpigen option (did you mean "target"?)',
        ),
        (
            plugin_with(target="slurm"),
            "1.34.1",
            'ARGOCD_APP_PARAMETERS: parameter "target": must be one of operator',
        ),
        (
            {"name": "mpigen", "parameters": [{"name": "queue", "array": ["a"]}]},
            "1.34.1",
            'parameter "queue": takes a string, got an array',
        ),
        ({}, "1.24.3", "KUBE_VERSION: unsupported Kubernetes version '1.24.3'"),
    ],
)
def test_a_bad_parameter_is_named_in_argo_cds_error(
    cmp: PluginServer, tmp_path: Path, plugin: dict[str, Any], kube_version: str, message: str
) -> None:
    repo = one_job_repository(tmp_path, job("v2beta1", "train"))
    done = cmp.call("generate", repo, "jobs", request(plugin, "ml", kube_version))
    assert done.returncode == 1
    assert message in done.stderr, done.stderr


def test_discovery_picks_the_directories_that_hold_jobs(cmp: PluginServer, tmp_path: Path) -> None:
    repo = repository(
        tmp_path,
        {
            "mpijobs/pi.yaml": (JOBS / "pi.yaml").read_text(),
            **{f"trainjobs/nested/{path.name}": path.read_text() for path in TRAINJOB.glob("*.yaml")},
            "configmaps/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
            "notes/notes.md": "kind: MPIJob in a note, not in YAML\n",
            "hidden/.git/job.yaml": (JOBS / "pi.yaml").read_text(),
        },
    )
    matched = {}
    for app in ("mpijobs", "trainjobs", "configmaps", "notes", "hidden"):
        done = cmp.call("match", repo, app, request(None))
        assert done.returncode == 0, done.stderr
        matched[app] = json.loads(done.stdout)["matched"]
    assert matched == {
        "mpijobs": True,
        "trainjobs": True,
        "configmaps": False,
        "notes": False,
        "hidden": False,
    }
    # Named by an Application, the plugin still refuses a directory with no job (Argo CD checks discovery).
    done = cmp.call("generate", repo, "configmaps", request({"name": "mpigen"}))
    assert done.returncode == 1
    assert (
        'could not find cmp-server plugin with name "mpigen" supporting the given repository' in done.stderr
    )
    # The TrainJob directory renders as `mpigen render` renders it.
    assert cmp.manifests(repo, "trainjobs", request({}, kube_version="")) == rendered(str(repo / "trainjobs"))


def test_the_parameters_announced_are_the_options(cmp: PluginServer, tmp_path: Path) -> None:
    repo = example_repository(tmp_path)
    done = cmp.call("parameters", repo, APP_PATH, request({"name": "mpigen"}))
    assert done.returncode == 0, done.stderr
    announced = json.loads(done.stdout)["parameters"]
    assert [entry["name"] for entry in announced] == [spec.flag for spec in OPTION_TABLE]
    by_name = {entry["name"]: entry for entry in announced}
    assert by_name["target"]["string"] == "operator"
    assert "jobset" in by_name["target"]["tooltip"]
    assert "ARGOCD_APP_NAMESPACE" in by_name["namespace"]["tooltip"]
    assert "string" not in by_name["queue"]


def test_the_component_adds_the_sidecar_to_argo_cds_own_repo_server(tmp_path: Path) -> None:
    """kustomize builds Argo CD's own install.yaml (v3.5.0, from the Go module cache) with the example's
    Component: the sidecar runs the argocd-cmp-server that Argo CD's copyutil init container puts into
    the var-files volume, as uid 999, with the plugin socket directory and plugin.yaml mounted."""
    kustomize = find_kustomize()
    if kustomize is None:
        pytest.skip("no kustomize")
    argo = gotools.download("github.com/argoproj/argo-cd/v3", "v3.5.0")
    shutil.copy(argo / "manifests" / "install.yaml", tmp_path / "install.yaml")
    shutil.copytree(PLUGIN, tmp_path / "mpigen")
    (tmp_path / "kustomization.yaml").write_text(
        "namespace: argocd\nresources: [install.yaml]\ncomponents: [mpigen]\n"
    )
    done = subprocess.run(
        [kustomize, "build", str(tmp_path)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    objects = load_all(done.stdout)
    [deployment] = [
        o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == "argocd-repo-server"
    ]
    pod = deployment["spec"]["template"]["spec"]
    [sidecar] = [c for c in pod["containers"] if c["name"] == "mpigen"]
    assert sidecar["command"] == ["/var/run/argocd/argocd-cmp-server"]
    assert sidecar["securityContext"]["runAsUser"] == 999
    mounts = {m["mountPath"]: m for m in sidecar["volumeMounts"]}
    assert mounts["/var/run/argocd"]["name"] == "var-files"
    assert mounts["/home/argocd/cmp-server/plugins"]["name"] == "plugins"
    assert mounts["/home/argocd/cmp-server/config/plugin.yaml"]["subPath"] == "plugin.yaml"
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert {
        m["name"] for c in pod["containers"] + pod["initContainers"] for m in c.get("volumeMounts", [])
    } <= set(volumes)
    [copyutil] = [c for c in pod["initContainers"] if c["name"] == "copyutil"]
    assert "/var/run/argocd/argocd-cmp-server" in " ".join(copyutil["args"])
    # The repo-server itself looks for plugin sockets in the same volume.
    [repo_server] = [c for c in pod["containers"] if c["name"] == "argocd-repo-server"]
    assert {"mountPath": "/home/argocd/cmp-server/plugins", "name": "plugins"} in repo_server["volumeMounts"]
    config_map = volumes["mpigen-plugin"]["configMap"]["name"]
    [data] = [o["data"] for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == config_map]
    assert data == {"plugin.yaml": (PLUGIN / "plugin.yaml").read_text()}
