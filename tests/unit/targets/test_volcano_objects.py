"""The volcano target's own arithmetic and refusals, against what its builders build."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import V1ALPHA2, make_job

from mpigen import CompileError, Options, compile
from mpigen.compiler import plan_job


def v2beta1(spec: dict[str, Any], workers: int = 3, name: str = "size") -> dict[str, Any]:
    template = {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": name, "namespace": "team-a"},
        "spec": {
            **spec,
            "mpiReplicaSpecs": {
                "Launcher": {"template": template},
                "Worker": {"replicas": workers, "template": template},
            },
        },
    }


def v1(gpu_launcher: bool) -> dict[str, Any]:
    launcher = {
        "name": "c",
        "image": "busybox",
        **({"resources": {"limits": {"nvidia.com/gpu": 1}}} if gpu_launcher else {}),
    }
    worker = {"name": "c", "image": "busybox"}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "MPIJob",
        "metadata": {"name": "size"},
        "spec": {
            "mpiReplicaSpecs": {
                "Launcher": {"template": {"spec": {"containers": [launcher]}}},
                "Worker": {"replicas": 3, "template": {"spec": {"containers": [worker]}}},
            }
        },
    }


@pytest.mark.parametrize(
    "document",
    [
        v2beta1({}),
        v2beta1({"runLauncherAsWorker": True, "slotsPerWorker": 12}),
        v2beta1({"mpiImplementation": "Intel", "launcherCreationPolicy": "WaitForWorkersReady"}),
        v1(gpu_launcher=False),
        v1(gpu_launcher=True),
    ],
)
def test_config_map_size_is_what_the_builder_builds(document: dict[str, Any]) -> None:
    """The arithmetic size (the launcher's host `<job>-launcher-0`, two characters longer than the
    operator target's) equals the built ConfigMap's, for any worker count."""
    from mpigen.targets.volcano.job import config_data
    from mpigen.targets.volcano.limits import SIZES

    plan, options = plan_job(document, Options(target="volcano"))
    for workers in (1, 10, 101):
        sized = plan.replace(workers=workers)
        built = config_data(sized, options)
        assert SIZES.config_map_bytes(sized, options, workers) == sum(
            len(k) + len(v.encode()) for k, v in built.items()
        )


def test_hostfile_names_volcano_pods() -> None:
    objects = compile(v2beta1({"runLauncherAsWorker": True}, workers=2, name="pi"), Options(target="volcano"))
    (config,) = [o for o in objects if o["kind"] == "ConfigMap"]
    assert config["data"]["hostfile"] == (
        "pi-launcher-0.pi.team-a.svc slots=1\npi-worker-0.pi.team-a.svc slots=1\npi-worker-1.pi.team-a.svc slots=1\n"
    )
    (job,) = [o for o in objects if o["apiVersion"] == "batch.volcano.sh/v1alpha1"]
    # Volcano's own per-job NetworkPolicy stays (no --network-policy here)
    assert job["spec"]["plugins"]["svc"] == ["--publish-not-ready-addresses"]


@pytest.mark.parametrize(("policy", "svc"), [(None, []), ("same-job", ["--disable-network-policy"])])
def test_volcanos_own_network_policy_stays_unless_mpigen_renders_one(
    policy: str | None, svc: list[str]
) -> None:
    objects = compile(make_job(V1ALPHA2), Options(target="volcano", network_policy=policy))
    (job,) = [o for o in objects if o["apiVersion"] == "batch.volcano.sh/v1alpha1"]
    assert [arg for arg in job["spec"]["plugins"]["svc"] if "network-policy" in arg] == svc
    assert len([o for o in objects if o["kind"] == "NetworkPolicy"]) == (0 if policy is None else 1)


def test_too_many_workers_for_the_config_map_are_refused_with_the_largest_that_fits() -> None:
    with pytest.raises(CompileError) as caught:
        compile(v2beta1({}, workers=100_000), Options(target="volcano"))
    (issue,) = caught.value.issues
    assert issue.path == ("spec", "mpiReplicaSpecs", "Worker", "replicas")
    assert (
        "the ConfigMap size-config would be" in issue.message
        and "the largest job that fits has" in issue.message
    )


def test_operator_output_is_unchanged_by_the_option_table_row() -> None:
    """The default target's output never mentions Volcano's Job."""
    objects = compile(v2beta1({}), Options())
    assert not [o for o in objects if o["apiVersion"].startswith("batch.volcano.sh")]


@pytest.mark.parametrize("version", ["v1alpha1", "v1alpha2", "v1", "v2beta1"])
def test_the_volcano_target_names_the_pods_hosts_and_role_it_builds(version: str) -> None:
    from jobs import V1, V1ALPHA1, V1ALPHA2, V2BETA1, make_job

    from mpigen.targets import target

    document = make_job(
        {"v1alpha1": V1ALPHA1, "v1alpha2": V1ALPHA2, "v1": V1, "v2beta1": V2BETA1}[version], 3
    )
    plan, options = plan_job(document, Options(target="volcano"))
    run = target("volcano")
    objects = run.build(plan, options)
    assert objects == compile(document, Options(target="volcano"))
    (job,) = [o for o in objects if o["apiVersion"] == "batch.volcano.sh/v1alpha1"]
    tasks = {task["name"]: task for task in job["spec"]["tasks"]}
    assert [(name, task["replicas"]) for name, task in tasks.items()] == [("launcher", 1), ("worker", 3)]
    assert job["spec"]["minAvailable"] == 4 == sum(task["minAvailable"] for task in tasks.values())
    # Volcano names a task's pods <job>-<task>-<index>.
    assert run.worker_pods(plan) == [f"{plan.name}-worker-{index}" for index in range(3)]
    (config,) = [o for o in objects if o["kind"] == "ConfigMap"]
    hosts = [line.split()[0].split(":")[0] for line in config["data"]["hostfile"].splitlines()]
    assert [host.split(".")[0] for host in hosts] == run.worker_pods(plan) and hosts == run.hosts(plan)
    roles = [o for o in objects if o["kind"] == "Role"]
    assert run.launcher_role(plan) == (roles[0] if roles else None)
    assert not [o for o in objects if o["kind"] in ("StatefulSet", "PodGroup", "Service", "Secret")]


def test_scheduler_name_alone_names_the_volcano_jobs_scheduler() -> None:
    """A Volcano Job is always one gang, and Volcano sets its spec.schedulerName on every pod whose
    template names none (v1.14 createJobPod): --scheduler-name needs no --gang-scheduler here, and means
    what it means with --gang-scheduler volcano."""
    from click.testing import CliRunner

    from mpigen.cli import cli

    job = v2beta1({})
    alone = compile(job, Options(target="volcano", scheduler_name="vc-batch"))
    assert alone == compile(
        job, Options(target="volcano", gang_scheduler="volcano", scheduler_name="vc-batch")
    )
    (vcjob,) = [o for o in alone if o["apiVersion"] == "batch.volcano.sh/v1alpha1"]
    assert vcjob["spec"]["schedulerName"] == "vc-batch"
    assert not [t for t in vcjob["spec"]["tasks"] if "schedulerName" in t["template"]["spec"]]
    annotated = {**job, "metadata": {**job["metadata"], "annotations": {
        "mpigen.dev/target": "volcano", "mpigen.dev/scheduler-name": "vc-batch"}}}  # fmt: skip
    assert [o for o in compile(annotated) if o["kind"] == "Job"] == [vcjob]
    # The other targets gang-schedule only when asked: there the name still needs a gang scheduler.
    for target in ("operator", "jobset"):
        result = CliRunner().invoke(cli, ["render", "--target", target, "--scheduler-name", "x"], input="")
        assert result.exit_code == 2 and "--scheduler-name needs --gang-scheduler" in result.stderr, target
        refused = {**annotated, "metadata": {**annotated["metadata"], "annotations": {
            "mpigen.dev/target": target, "mpigen.dev/scheduler-name": "x"}}}  # fmt: skip
        with pytest.raises(CompileError) as caught:
            compile(refused)
        assert [i.text() for i in caught.value.issues] == [
            'metadata.annotations["mpigen.dev/scheduler-name"]: needs mpigen.dev/gang-scheduler (or --gang-scheduler)'
        ]
