"""Jobs mpigen refuses, against the API server: for each golden error case whose refusal is about the objects
(not the MPIJob's own fields), the objects the job would have produced are sent with `kubectl apply
--dry-run=server`. Either the API server refuses them too (mpigen only says so earlier, offline), or the case
is one where mpigen is deliberately stricter (listed in docs/departures.md): the server takes the objects and
the job would fail later, or behave unlike the operator's."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from controlplane import Cluster
from mpijobs import compiled, find, job, manifest

import mpigen

ROOT = Path(__file__).resolve().parents[2]
Obj = dict[str, Any]


def base() -> list[Obj]:
    return compiled(job("v1alpha2", "base", workers=2), None)


def renamed(name: str) -> Callable[[list[Obj]], list[Obj]]:
    """The job's objects as they would be named for a job called `name` (only the names matter here)."""

    def mutate(objects: list[Obj]) -> list[Obj]:
        text = manifest(objects).replace("base-", f"{name}-")
        import yaml

        return [obj for obj in yaml.safe_load_all(text) if obj]

    return mutate


def pod_spec(objects: list[Obj], suffix: str) -> Obj:
    spec: Obj = find(objects, "StatefulSet" if suffix == "-worker" else "Job", suffix)["spec"]["template"][
        "spec"
    ]
    return spec


def in_launcher(change: Callable[[Obj], None]) -> Callable[[list[Obj]], list[Obj]]:
    def mutate(objects: list[Obj]) -> list[Obj]:
        objects = copy.deepcopy(objects)
        change(pod_spec(objects, "-launcher"))
        return objects

    return mutate


def first_container(spec: Obj) -> Obj:
    container: Obj = spec["containers"][0]
    return container


def big_config_map(objects: list[Obj]) -> list[Obj]:
    objects = copy.deepcopy(objects)
    find(objects, "ConfigMap")["data"]["hostfile"] = "base-worker-0 slots=1\n" * 60_000  # ~1.3 MB
    return objects


def long_label(objects: list[Obj]) -> list[Obj]:
    objects = copy.deepcopy(objects)
    template = find(objects, "Job", "-launcher")["spec"]["template"]
    template["metadata"]["labels"]["experiment"] = (
        "resnet50-imagenet-batch-256-lr-0.1-momentum-0.9-warmup-5-epochs-90"
    )
    return objects


def no_containers(objects: list[Obj]) -> list[Obj]:
    objects = copy.deepcopy(objects)
    pod_spec(objects, "-worker")["containers"] = []
    return objects


def zero_workers(objects: list[Obj]) -> list[Obj]:
    objects = copy.deepcopy(objects)
    find(objects, "StatefulSet")["spec"]["replicas"] = 0
    return objects


def volcano_scheduling_names(objects: list[Obj]) -> list[Obj]:
    """The volcano target's Job with the golden case's queue and priority class (Volcano v1.14's Job CRD:
    DNS-1123 subdomains); the CRD is on the `cluster` control plane (conftest.py)."""
    rendered = mpigen.compile(job("v2beta1", "base"), mpigen.Options(target="volcano"))
    vcjob = copy.deepcopy(find(rendered, "Job"))
    vcjob["spec"].update(queue="Team_A", priorityClassName="High-Priority")
    return [*objects, vcjob]


# golden case -> (the objects its job would have given, whether the API server refuses them)
CASES: dict[str, tuple[Callable[[list[Obj]], list[Obj]], bool]] = {
    "error-name-invalid": (renamed("Bad_Name"), True),
    "error-config-map-over-1mib": (big_config_map, True),
    "error-template-label-value-too-long": (long_label, True),
    "error-v1alpha2-no-containers": (no_containers, True),
    "error-reserved-container-names": (
        in_launcher(lambda s: s["initContainers"].append({**s["initContainers"][0]})),
        True,
    ),
    "error-reserved-volume-name": (
        in_launcher(lambda s: s["volumes"].append({"name": "mpi-job-config", "emptyDir": {}})),
        True,
    ),
    "error-reserved-mount-paths": (
        in_launcher(
            lambda s: (
                first_container(s)["volumeMounts"].append({"name": "data", "mountPath": "/opt/kube"})
                or s["volumes"].append({"name": "data", "emptyDir": {}})
            )
        ),
        True,
    ),
    "volcano-error-scheduling-names": (volcano_scheduling_names, True),
    # The launcher Job's pods get its name as a label (job-name), at most 63 characters.
    "error-name-too-long": (renamed("a-very-long-job-name-that-is-fine-alone-but-not-derived"), True),
    # Stricter than the API server: it takes these objects.
    # This API server (1.37) takes a Service named "1job-worker"; servers that check Service names as
    # DNS-1035 labels refuse it, and mpigen supports those versions too.
    "error-name-starts-with-digit": (renamed("1job"), False),
    # A second OMPI_MCA_orte_default_hostfile silently wins over mpigen's (the server only warns).
    "error-reserved-ompi-env": (
        in_launcher(
            lambda s: (
                first_container(s)
                .setdefault("env", [])
                .append({"name": "OMPI_MCA_orte_default_hostfile", "value": "/tmp/hosts"})
            )
        ),
        False,
    ),
    # A StatefulSet of 0 replicas is valid; the operator refuses an MPIJob without workers.
    "error-v1alpha2-worker-replicas-zero": (zero_workers, False),
}


def test_every_case_names_a_golden_error_case() -> None:
    for case in CASES:
        assert (ROOT / "golden" / case / "errors.txt").is_file(), case


@pytest.mark.parametrize("case", sorted(CASES))
def test_server_dry_run_of_what_a_refused_job_would_give(cluster: Cluster, namespace: str, case: str) -> None:
    mutate, refused = CASES[case]
    objects = mutate(base())
    done = cluster.kubectl(
        "apply", "--dry-run=server", "-n", namespace, "-f", "-", input=manifest(objects), check=False
    )
    if refused:
        assert done.returncode != 0, f"the API server accepted what mpigen refuses in {case}:\n{done.stdout}"
        assert "Invalid" in done.stderr or "invalid" in done.stderr, done.stderr
    else:
        assert done.returncode == 0, f"{case}: the API server refuses it too, move it up:\n{done.stderr}"
    control = cluster.kubectl(
        "apply", "--dry-run=server", "-n", namespace, "-f", "-", input=manifest(base()), check=False
    )
    assert control.returncode == 0, control.stderr
