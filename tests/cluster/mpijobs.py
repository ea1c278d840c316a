"""MPIJobs for the cluster tests, compiled with `mpigen.compile`, and the scripts of their ConfigMap run on
the host with a ServiceAccount's identity (what the launcher and clean-up pods would do inside the cluster)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import mpigen
from mpigen.yaml.dump import to_yaml

Obj = dict[str, Any]


def job(version: str, name: str, workers: int = 2, **spec: Any) -> Obj:
    """A small MPIJob of input `version` ("v1alpha1", "v1alpha2", "v2beta1" or "v1") with `workers` workers."""
    container = {"name": "train", "image": "example.com/train:1.0"}
    if version == "v1alpha1":
        body: Obj = {"replicas": workers, "template": {"spec": {"containers": [container]}}}
    else:
        body = {
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "template": {
                        "spec": {"containers": [{**container, "command": ["mpirun", "python", "train.py"]}]}
                    },
                },
                "Worker": {"replicas": workers, "template": {"spec": {"containers": [container]}}},
            }
        }
    return {
        "apiVersion": f"kubeflow.org/{version}",
        "kind": "MPIJob",
        "metadata": {"name": name},
        "spec": {**body, **spec},
    }


def compiled(mpijob: Obj, namespace: str | None) -> list[Obj]:
    return mpigen.compile(mpijob, mpigen.Options(namespace=namespace))


def manifest(objects: list[Obj]) -> str:
    return to_yaml(objects)


def find(objects: list[Obj], kind: str, suffix: str = "") -> Obj:
    (found,) = [obj for obj in objects if obj["kind"] == kind and obj["metadata"]["name"].endswith(suffix)]
    return found


def script(objects: list[Obj], key: str, kubectl: str, **knobs: int | str) -> str:
    """A script of the job's ConfigMap as rendered, with its kubectl path pointed at `kubectl` and the
    named knobs set (timing ones such as `interval=5` shortened so the tests need not wait; `keys=DIR`
    where ssh-keygen.sh finds the key pair its init container would have made)."""
    text: str = find(objects, "ConfigMap")["data"][key]
    text, count = re.subn(r"^kubectl=.*$", f"kubectl={kubectl}", text, count=1, flags=re.MULTILINE)
    assert count == 1, f"{key} sets no kubectl path"
    for knob, value in knobs.items():
        text, count = re.subn(rf"^{knob}=\S+$", f"{knob}={value}", text, count=1, flags=re.MULTILINE)
        assert count == 1, f"{key} has no knob {knob}"
    return text


def run_script(text: str, kubeconfig: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run a POSIX script (dash when installed, as in the pod's busybox-like shells) as the identity of
    `kubeconfig`; the environment carries nothing else of the admin's."""
    shell = shutil.which("dash") or "/bin/sh"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "KUBECONFIG": str(kubeconfig),
        "HOME": str(kubeconfig.parent),
    }
    return subprocess.run(
        [shell, "-c", text, "script"], capture_output=True, text=True, env=env, timeout=timeout, check=False
    )
