"""One input, the same objects on every path: the Python API, `mpigen render`, the KRM function (as
generator and as transformer, called directly and by the real standalone kustomize) and the legacy
kustomize plugin under the real `kubectl kustomize`. Options come from the job's annotations, the one
way that reaches every path."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from jobs import load, load_all

import mpigen
from mpigen.options import Options
from tools import function_executable

JOBS = {
    "v1alpha2-gang": """\
apiVersion: kubeflow.org/v1alpha2
kind: MPIJob
metadata:
  name: same
  namespace: ml
  annotations:
    mpigen.dev/gang-scheduler: volcano
    mpigen.dev/wait-timeout: "90"
spec:
  slotsPerWorker: 2
  cleanPodPolicy: Running
  mpiReplicaSpecs:
    Launcher:
      template:
        spec:
          containers:
          - name: launcher
            image: horovod/horovod:latest
            command: [mpirun, python, train.py]
            env: [{name: MODE, value: "on"}]
    Worker:
      replicas: 3
      template:
        spec:
          containers:
          - name: worker
            image: horovod/horovod:latest
            resources: {limits: {nvidia.com/gpu: 2}}
""",
    "v1alpha1-gpus": """\
apiVersion: kubeflow.org/v1alpha1
kind: MPIJob
metadata:
  name: same-gpus
  namespace: ml
  annotations:
    mpigen.dev/gpus-per-node: "4"
    mpigen.dev/kubectl-delivery-image: registry.example.com/kubectl-delivery:1.29
spec:
  gpus: 8
  template:
    spec:
      containers:
      - name: trainer
        image: horovod/horovod:latest
""",
}

# Bookkeeping annotations kustomize and kpt put on items; they are not part of an object.
BOOKKEEPING = (
    "config.kubernetes.io/",
    "internal.config.kubernetes.io/",
    "config.k8s.io/",
    "kustomize.config.k8s.io/",
)


def strip(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for obj in objects:
        meta = obj.get("metadata", {})
        annotations = {
            k: v for k, v in (meta.get("annotations") or {}).items() if not k.startswith(BOOKKEEPING)
        }
        if annotations:
            meta["annotations"] = annotations
        else:
            meta.pop("annotations", None)
    return objects


def run(argv: list[str], stdin: str = "", env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    done = subprocess.run(
        argv, input=stdin, capture_output=True, text=True, env=env, cwd=cwd, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def resource_list(items: list[dict[str, Any]], function_config: dict[str, Any] | None = None) -> str:
    document: dict[str, Any] = {
        "apiVersion": "config.kubernetes.io/v1",
        "kind": "ResourceList",
        "items": items,
    }
    if function_config is not None:
        document["functionConfig"] = function_config
    return yaml.safe_dump(document)


@pytest.fixture(scope="module")
def plugin_home(tmp_path_factory: pytest.TempPathFactory, mpigen_command: list[str]) -> Path:
    home = tmp_path_factory.mktemp("plugins")
    run([*mpigen_command, "kustomize-plugin", "install", "--plugin-home", str(home)])
    return home


@pytest.mark.parametrize("name", sorted(JOBS))
def test_every_path_gives_the_same_objects(
    name: str,
    tmp_path: Path,
    plugin_home: Path,
    mpigen_command: list[str],
    kubectl_binary: str,
    kustomize_binary: str,
) -> None:
    text = JOBS[name]
    job = load(text)
    (tmp_path / "job.yaml").write_text(text)
    paths: dict[str, list[dict[str, Any]]] = {}

    paths["api"] = mpigen.compile(job, Options())
    paths["render"] = load_all(run([*mpigen_command, "render", str(tmp_path / "job.yaml")]))

    generated = load(run(mpigen_command, stdin=resource_list([], job)))
    paths["krm generator"] = strip(generated["items"])
    transformed = load(run([*mpigen_command, "krm"], stdin=resource_list([job])))
    paths["krm transformer"] = strip(transformed["items"])

    plugin_dir = tmp_path / "plugin"
    plugin_dir.mkdir()
    (plugin_dir / "job.yaml").write_text(text)
    (plugin_dir / "kustomization.yaml").write_text("generators:\n- job.yaml\nsortOptions:\n  order: fifo\n")
    env = {**os.environ, "KUSTOMIZE_PLUGIN_HOME": str(plugin_home), "TMPDIR": str(tmp_path)}
    built = run([kubectl_binary, "kustomize", "--enable-alpha-plugins", str(plugin_dir)], env=env)
    paths["kubectl kustomize plugin"] = strip(load_all(built))

    function_dir = tmp_path / "function"
    function_dir.mkdir()
    script = function_executable(tmp_path)
    annotated = dict(
        job,
        metadata=dict(
            job["metadata"],
            annotations={
                **job["metadata"]["annotations"],
                "config.kubernetes.io/function": f"exec:\n  path: {script}\n",
            },
        ),
    )
    (function_dir / "job.yaml").write_text(yaml.safe_dump(annotated))
    (function_dir / "kustomization.yaml").write_text("generators:\n- job.yaml\n")
    built = run(
        [kustomize_binary, "build", "--enable-alpha-plugins", "--enable-exec", str(function_dir)], env=env
    )
    # Standalone kustomize 4 sorts by kind (no sortOptions); compare as sets of objects.
    paths["kustomize exec function"] = strip(load_all(built))

    reference = paths["api"]
    assert len(reference) >= 8
    for path, objects in paths.items():
        if path == "kustomize exec function":
            key = lambda obj: (obj["kind"], obj["metadata"]["name"])
            assert sorted(objects, key=key) == sorted(reference, key=key), path
        else:
            assert objects == reference, path
