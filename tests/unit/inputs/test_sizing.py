"""v1alpha1 sizing arithmetic (mpi-operator v0.2.0 `allocateProcessingUnits`) and slot rules."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import V1ALPHA1, make_job, pod

import mpigen
from mpigen.inputs import v1alpha1
from mpigen.options import Options
from mpigen.quantity import whole_units


def job(spec: dict[str, Any], limits: dict[str, Any] | None = None) -> dict[str, Any]:
    worker = pod("c") if limits is None else pod("c", resources={"limits": limits})
    return make_job(V1ALPHA1, workers=None, name="j", namespace="ns", worker=worker, **spec)


@pytest.mark.parametrize(
    ("spec", "options", "workers", "slots"),
    [
        ({"gpus": 1}, Options(), 1, 1),
        ({"gpus": 4}, Options(), 1, 4),
        ({"gpus": 8}, Options(), 1, 8),
        ({"gpus": 16}, Options(), 2, 8),
        ({"gpus": 64}, Options(), 8, 8),
        ({"gpus": 16, "gpusPerNode": 4}, Options(), 4, 4),
        ({"gpus": 8}, Options(gpus_per_node=2), 4, 2),
        ({"gpus": 16, "gpusPerNode": 16}, Options(gpus_per_node=2), 1, 16),
        ({"processingUnits": 2}, Options(), 2, 1),
        ({"processingUnits": 8, "processingUnitsPerNode": 4}, Options(), 2, 4),
        ({"processingUnits": 4}, Options(processing_units_per_node=8), 1, 4),
        ({"gpus": 16, "slotsPerWorker": 3}, Options(), 2, 3),
    ],
)
def test_total_sizing(spec: dict[str, Any], options: Options, workers: int, slots: int) -> None:
    plan = v1alpha1.to_plan(job(spec), options)
    assert (plan.workers, plan.slots_per_worker) == (workers, slots)


def test_gpus_sizing_sets_worker_limit_as_quantity_string() -> None:
    plan = v1alpha1.to_plan(job({"gpus": 16, "gpusPerNode": 4}), Options())
    limits = plan.worker_template["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"nvidia.com/gpu": "4"}


def test_processing_resource_type_decides_the_limit_written() -> None:
    plan = v1alpha1.to_plan(job({"processingUnits": 4, "processingResourceType": "cpu"}), Options())
    assert plan.worker_template["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "1"}


@pytest.mark.parametrize(
    ("limits", "resource", "slots"),
    [
        ({"nvidia.com/gpu": 4}, "nvidia.com/gpu", 4),
        ({"nvidia.com/gpu": "2"}, "nvidia.com/gpu", 2),
        ({"cpu": "1500m"}, "cpu", 1),
        ({"cpu": "2000m"}, "cpu", 2),
        ({"cpu": "0"}, "cpu", 1),
        ({"memory": "1Gi"}, "cpu", 1),
        (None, "nvidia.com/gpu", 1),
    ],
)
def test_replicas_sizing_reads_units_from_the_limit(
    limits: dict[str, Any] | None, resource: str, slots: int
) -> None:
    spec = {"replicas": 3, "processingResourceType": resource}
    plan = v1alpha1.to_plan(job(spec, limits), Options())
    assert plan.workers == 3
    assert plan.slots_per_worker == slots
    # Never rewritten: the limit stays exactly as the user wrote it (or absent).
    written = plan.worker_template["spec"]["containers"][0].get("resources", {}).get("limits")
    assert written == limits


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        ({"gpus": 16, "gpusPerNode": 6}, ("spec", "gpus")),
        ({"processingUnits": 24, "processingUnitsPerNode": 16}, ("spec", "processingUnits")),
        ({"gpus": 12}, ("spec", "gpus")),
        ({"gpus": 3}, ("spec", "gpus")),
        ({"gpus": 8, "replicas": 1}, ("spec", "replicas")),
        ({"gpus": 8, "processingUnits": 8}, ("spec", "processingUnits")),
        ({}, ("spec",)),
        ({"replicas": 0}, ("spec", "replicas")),
    ],
)
def test_sizing_errors_name_the_field(spec: dict[str, Any], path: tuple[str, ...]) -> None:
    with pytest.raises(mpigen.CompileError) as info:
        v1alpha1.to_plan(job(spec), Options())
    assert [issue.path for issue in info.value.issues] == [path]


@pytest.mark.parametrize(
    ("value", "units"),
    [
        (4, 4),
        ("4", 4),
        ("1500m", None),
        ("2000m", 2),
        ("1k", 1000),
        ("1Ki", 1024),
        ("1e3", 1000),
        ("0.5", None),
        ("abc", None),
        (True, None),
        ("", None),
        ("-2", -2),
    ],
)
def test_whole_units(value: object, units: int | None) -> None:
    assert whole_units(value) == units


@pytest.mark.parametrize(
    "spec",
    [
        {},
        {"runLauncherAsWorker": True, "slotsPerWorker": 12},
        {"mpiImplementation": "Intel", "launcherCreationPolicy": "WaitForWorkersReady"},
        {"mpiImplementation": "MPICH", "runPolicy": {"cleanPodPolicy": "All"}},
    ],
)
@pytest.mark.parametrize("namespace", [None, "team-a"])
def test_v2beta1_config_map_size_is_what_the_builder_builds(
    spec: dict[str, Any], namespace: str | None
) -> None:
    """The arithmetic size of the ConfigMap (FQDN hostfile, discover_hosts.sh) equals the built one."""
    from mpigen.compiler import plan_job
    from mpigen.targets.operator.configmap import config_data
    from mpigen.targets.operator.limits import SIZES

    container = {"name": "c", "image": "busybox"}
    template = {"spec": {"containers": [container]}}
    document = {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "size", **({"namespace": namespace} if namespace else {})},
        "spec": {
            **spec,
            "mpiReplicaSpecs": {
                "Launcher": {"template": template},
                "Worker": {"replicas": 3, "template": template},
            },
        },
    }
    plan, options = plan_job(document, Options(cluster_domain="example.org"))
    for workers in (1, 10, 101):
        sized = plan.replace(workers=workers)
        built = config_data(sized, options)
        assert SIZES.config_map_bytes(sized, options, workers) == sum(
            len(k) + len(v.encode()) for k, v in built.items()
        )


@pytest.mark.parametrize("gpu_launcher", [False, True])
@pytest.mark.parametrize(
    "spec", [{}, {"slotsPerWorker": 12, "runPolicy": {"cleanPodPolicy": "All"}}, {"mainContainer": "c"}]
)
def test_v1_config_map_size_is_what_the_builder_builds(spec: dict[str, Any], gpu_launcher: bool) -> None:
    """The arithmetic size of a v1 ConfigMap (discover_hosts.sh with `host:slots`, a GPU launcher as
    the first host, kubexec.sh with --container) equals the built one."""
    from mpigen.compiler import plan_job
    from mpigen.targets.operator.configmap import config_data
    from mpigen.targets.operator.limits import SIZES

    launcher = {
        "name": "c",
        "image": "busybox",
        **({"resources": {"limits": {"nvidia.com/gpu": 1}}} if gpu_launcher else {}),
    }
    document = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "MPIJob",
        "metadata": {"name": "size"},
        "spec": {
            **spec,
            "mpiReplicaSpecs": {
                "Launcher": {"template": {"spec": {"containers": [launcher]}}},
                "Worker": {
                    "replicas": 3,
                    "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
                },
            },
        },
    }
    plan, options = plan_job(document, Options())
    assert plan.hostnames.launcher_first == gpu_launcher
    for workers in (1, 10, 101):
        sized = plan.replace(workers=workers)
        built = config_data(sized, options)
        assert SIZES.config_map_bytes(sized, options, workers) == sum(
            len(k) + len(v.encode()) for k, v in built.items()
        )
