"""The one job factory of the suite: a small valid MPIJob of either apiVersion, as data or as YAML.

    make_job()                                   # v1alpha2 "pi" in "ml": a launcher and 2 workers
    make_job(V1ALPHA1, workers=4)                # v1alpha1: spec.replicas 4
    make_job(V2BETA1, runPolicy={"cleanPodPolicy": "All"})   # v1 and v2beta1 as v1alpha2
    make_job(workers=3, cleanPodPolicy="All")    # further keyword arguments are spec fields
    make_job(name="a", namespace=None, annotations={"mpigen.dev/gang-scheduler": "volcano"})
    make_job(worker_fields={"restartPolicy": "OnFailure"})   # the Worker's restartPolicy: a warning
    job_yaml(name="a")                           # the same, as the YAML text of one document

Every call returns new data, so a test may change what it gets.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import yaml

V1ALPHA1 = "kubeflow.org/v1alpha1"
V1ALPHA2 = "kubeflow.org/v1alpha2"
V1 = "kubeflow.org/v1"
V2BETA1 = "kubeflow.org/v2beta1"
IMAGE = "example.com/train:1.0"
COMMAND = ["mpirun", "python", "train.py"]


def pod(container: str = "main", image: str = IMAGE, **fields: Any) -> dict[str, Any]:
    """A pod template with one container (`fields` are further container fields)."""
    return {"spec": {"containers": [{"name": container, "image": image, **copy.deepcopy(fields)}]}}


def make_job(
    api_version: str = V1ALPHA2,
    workers: Any = 2,
    *,
    name: str = "pi",
    namespace: str | None = "ml",
    annotations: dict[str, str] | None = None,
    launcher: dict[str, Any] | None = None,
    worker: dict[str, Any] | None = None,
    worker_fields: dict[str, Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """An MPIJob. v1alpha2, v1 and v2beta1: `launcher` and `worker` are the pod templates (default: one container
    each, the launcher running `mpirun`), `workers` the Worker replicas, `worker_fields` more fields
    of the Worker's replica spec (`{"restartPolicy": "OnFailure"}`: a job that warns). v1alpha1: `worker` is the
    one template and `workers` is `spec.replicas` (None leaves it out, for `gpus` or
    `processingUnits` sizing). `spec` adds or replaces spec fields."""
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    if annotations:
        metadata["annotations"] = dict(annotations)
    worker = copy.deepcopy(worker) if worker is not None else pod("worker")
    body: dict[str, Any]
    if api_version == V1ALPHA1:
        body = {} if workers is None else {"replicas": workers}
        body["template"] = worker
    else:
        replicas: dict[str, Any] = {} if workers is None else {"replicas": workers}
        body = {
            "mpiReplicaSpecs": {
                "Launcher": {
                    "template": copy.deepcopy(launcher)
                    if launcher is not None
                    else pod("launcher", command=COMMAND)
                },
                "Worker": {**replicas, **copy.deepcopy(worker_fields or {}), "template": worker},
            }
        }
    body.update(copy.deepcopy(spec))
    return {"apiVersion": api_version, "kind": "MPIJob", "metadata": metadata, "spec": body}


def job_yaml(*args: Any, **kwargs: Any) -> str:
    """`make_job(...)` as the YAML text of one document, keys in the order Kubernetes writes them."""
    return to_yaml(make_job(*args, **kwargs))


# Strings go-yaml v2 (kubectl) may read as something else when plain (`y`, `1e3`, `0o17`, `+.5`): a superset.
_KUBECTL_AMBIGUOUS = re.compile(r"[yYnN~]|<<|[-+]?[.0-9][-+._0-9a-zA-Z:]*")


class KubeDumper(yaml.SafeDumper):
    """PyYAML's safe dumper that also quotes what kubectl's go-yaml v2 would not read as a string, as
    kustomize's kyaml writes such values quoted."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "'" if _KUBECTL_AMBIGUOUS.fullmatch(value) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


KubeDumper.add_representer(str, _represent_str)


# libyaml's reading where PyYAML has it: the same YAML 1.1 as yaml.safe_load, several times faster (the
# golden corpus's checks spent most of their time reading YAML in pure Python).
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load(text: str) -> Any:
    """yaml.safe_load, by libyaml."""
    return yaml.load(text, Loader=SAFE_LOADER)


def load_all(text: str) -> list[Any]:
    """yaml.safe_load_all's documents, by libyaml."""
    return list(yaml.load_all(text, Loader=SAFE_LOADER))


def to_yaml(document: Any, **options: Any) -> str:
    """YAML text of `document` that kubectl and PyYAML both read back as it is."""
    text: str = yaml.dump(document, Dumper=KubeDumper, **{"sort_keys": False, **options})
    return text
