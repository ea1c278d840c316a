"""The kubeflow.org/v1 input front (training-operator 1.9): defaults, ValidateV1MpiJobSpec's rules, and
what the operator accepts silently that mpigen refuses or warns about."""

from __future__ import annotations

from typing import Any

import pytest

from mpigen.errors import CompileError
from mpigen.inputs import v1
from mpigen.options import Options

OPTIONS = Options(namespace="ml")


def template(*containers: str) -> dict[str, Any]:
    return {
        "spec": {
            "containers": [
                {"name": name, "image": "mpioperator/tensorflow-benchmarks"} for name in containers
            ]
        }
    }


def job(workers: int | None = 2, **spec: Any) -> dict[str, Any]:
    worker: dict[str, Any] = {"template": template("worker")}
    if workers is not None:
        worker["replicas"] = workers
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "MPIJob",
        "metadata": {"name": "bench"},
        "spec": {
            **spec,
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": template("launcher")},
                "Worker": worker,
            },
        },
    }


def errors(document: dict[str, Any]) -> list[str]:
    with pytest.raises(CompileError) as caught:
        v1.load(document, OPTIONS)
    return [issue.text() for issue in caught.value.issues]


def warnings(document: dict[str, Any]) -> list[str]:
    return [w.text() for w in v1.load(document, OPTIONS).warnings if w.severity == "warning"]


def test_defaults_are_the_operators() -> None:
    loaded = v1.load(job(), OPTIONS)
    assert loaded.slots_per_worker == 1 and loaded.main_container is None
    assert (loaded.launcher.replicas, loaded.launcher.restart_policy) == (1, "Never")
    assert loaded.worker is not None
    assert (loaded.worker.replicas, loaded.worker.restart_policy) == (2, "Never")
    assert loaded.run.clean_pod_policy == "None" and loaded.run.suspend is False


def test_worker_replicas_default_to_zero_with_a_warning() -> None:
    document = job(workers=None)
    assert v1.load(document, OPTIONS).workers == 0
    assert warnings(document) == [
        "spec.mpiReplicaSpecs: no workers: the hostfile lists only the launcher, and only when it asks for a GPU"
    ]


def test_deprecated_clean_pod_policy_is_read_and_run_policy_wins() -> None:
    assert v1.load(job(cleanPodPolicy="All"), OPTIONS).run.clean_pod_policy == "All"
    document = job(cleanPodPolicy="All", runPolicy={"cleanPodPolicy": "Running"})
    assert v1.load(document, OPTIONS).run.clean_pod_policy == "Running"
    assert warnings(document) == [
        'spec.cleanPodPolicy: "All" is ignored: spec.runPolicy.cleanPodPolicy "Running" wins'
    ]


def test_launcher_is_required_and_single() -> None:
    document = job()
    del document["spec"]["mpiReplicaSpecs"]["Launcher"]
    assert errors(document) == [
        "spec.mpiReplicaSpecs.Launcher: required: an MPIJob needs exactly one Launcher"
    ]
    document = job()
    document["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"] = 2
    assert errors(document) == ["spec.mpiReplicaSpecs.Launcher.replicas: must be 1, got 2"]


@pytest.mark.parametrize("key", ["image", "name"])
def test_every_container_needs_a_name_and_an_image(key: str) -> None:
    document = job()
    document["spec"]["mpiReplicaSpecs"]["Worker"]["template"] = template("worker", "sidecar")
    del document["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][1][key]
    with pytest.raises(CompileError) as caught:
        v1.load(document, Options(namespace="ml", validate=False))
    assert [issue.text() for issue in caught.value.issues] == [
        (
            f"spec.mpiReplicaSpecs.Worker.template.spec.containers[1].{key}: "
            f"required: the operator refuses a Worker container without {key}"
        )
    ]


def test_a_nameless_container_is_caught_by_the_pod_schema_first() -> None:
    document = job()
    del document["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["name"]
    assert errors(document) == [
        'spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].name: missing required field "name"'
    ]


def test_unknown_replica_types_are_refused_with_help() -> None:
    document = job()
    document["spec"]["mpiReplicaSpecs"]["worker"] = document["spec"]["mpiReplicaSpecs"].pop("Worker")
    assert errors(document) == [
        'spec.mpiReplicaSpecs.worker: unknown field "worker" (did you mean "Worker"?)'
    ]


def test_restart_policies() -> None:
    document = job()
    document["spec"]["mpiReplicaSpecs"]["Worker"]["restartPolicy"] = "ExitCode"
    assert v1.load(document, OPTIONS).worker.restart_policy == "ExitCode"  # type: ignore[union-attr]
    document["spec"]["mpiReplicaSpecs"]["Launcher"]["restartPolicy"] = "Always"
    assert errors(document) == [
        (
            "spec.mpiReplicaSpecs.Launcher.restartPolicy: a launcher that always restarts never finishes: "
            'use "OnFailure" or "Never"'
        )
    ]
    document["spec"]["mpiReplicaSpecs"]["Launcher"]["restartPolicy"] = "Sometimes"
    assert errors(document)[0].startswith(
        "spec.mpiReplicaSpecs.Launcher.restartPolicy: must be one of 'Always'"
    )


def test_negative_workers_and_zero_slots_are_refused() -> None:
    assert errors(job(workers=-1)) == ["spec.mpiReplicaSpecs.Worker.replicas: must be >= 0, got -1"]
    assert errors(job(slotsPerWorker=0)) == ["spec.slotsPerWorker: must be >= 1, got 0"]


def test_main_container_must_name_a_worker_container() -> None:
    assert v1.load(job(mainContainer="worker"), OPTIONS).main_container == "worker"
    assert errors(job(mainContainer="mpi")) == [
        'spec.mainContainer: "mpi" names no container of the Worker template ("worker")'
    ]
    document = job(mainContainer="mpi")
    document["spec"]["mpiReplicaSpecs"]["Worker"]["template"] = template("sidecar", "mpi")
    assert warnings(document) == [
        (
            'spec.mainContainer: "mpi" is not the Worker\'s first container: the operator mounts /etc/mpi and sets '
            "the command only on the first, so ranks exec'd into this one do not find kubexec.sh"
        )
    ]


def test_managed_by_values_are_the_training_operators() -> None:
    assert warnings(job(runPolicy={"managedBy": "kubeflow.org/training-operator"})) == []
    assert errors(job(runPolicy={"managedBy": "kubeflow.org/mpi-operator"})) == [
        (
            'spec.runPolicy.managedBy: must be "kubeflow.org/training-operator" or "kueue.x-k8s.io/multikueue", '
            'got "kubeflow.org/mpi-operator" (did you mean "kubeflow.org/training-operator"?); '
            "the operator would skip this job without a word"
        )
    ]


@pytest.mark.parametrize(
    ("field", "hint"),
    [
        (
            "mpiImplementation",
            "mpiImplementation exists only in kubeflow.org/v2beta1: use apiVersion kubeflow.org/v2beta1 for it",
        ),
        (
            "sshAuthMountPath",
            "sshAuthMountPath exists only in kubeflow.org/v2beta1: use apiVersion kubeflow.org/v2beta1 for it",
        ),
        ("backoffLimit", "in kubeflow.org/v1 it is spec.runPolicy.backoffLimit"),
    ],
)
def test_fields_of_other_versions_get_did_you_mean_help(field: str, hint: str) -> None:
    assert errors(job(**{field: "x"})) == [f'spec.{field}: unknown field "{field}" ({hint})']


# --- the plan (mpigen.inputs.v1_plan) -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("limits", "gpu"),
    [
        ({"nvidia.com/gpu": 1}, True),
        ({"amd.com/gpu": 2}, True),
        ({"gpu.intel.com/i915": 1}, True),  # isGPULauncher: any name containing "gpu"
        ({"cpu": 2, "memory": "1Gi"}, False),
        ({}, False),
    ],
)
def test_a_launcher_that_limits_a_gpu_is_the_first_host_and_keeps_its_gpus(
    limits: dict[str, Any], gpu: bool
) -> None:
    from mpigen.inputs.v1_plan import plan_job

    document = job()
    launcher = document["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    launcher["resources"] = {"limits": limits}
    plan = plan_job(v1.load(document, OPTIONS), document)
    assert plan.host_names()[0] == ("bench-launcher" if gpu else "bench-worker-0")
    assert plan.blank_launcher_gpus is not gpu


@pytest.mark.parametrize(
    ("policy", "backoff", "expected"),
    [
        (None, None, 0),
        ("Never", None, 0),
        ("ExitCode", None, 0),
        ("OnFailure", None, None),
        ("Never", 4, 4),
        ("OnFailure", 0, 0),
    ],
)
def test_the_launcher_job_runs_once_unless_it_restarts_or_a_backoff_limit_is_set(
    policy: str | None, backoff: int | None, expected: int | None
) -> None:
    """The operator's bare launcher Pod with restartPolicy Never runs once; a Job would retry it 6 times."""
    from mpigen.inputs.v1_plan import plan_job

    document = job(**({"runPolicy": {"backoffLimit": backoff}} if backoff is not None else {}))
    if policy:
        document["spec"]["mpiReplicaSpecs"]["Launcher"]["restartPolicy"] = policy
    plan = plan_job(v1.load(document, OPTIONS), document)
    assert plan.backoff_limit == expected
    assert plan.launcher_template["spec"]["restartPolicy"] == (
        "OnFailure" if policy == "OnFailure" else "Never"
    )


@pytest.mark.parametrize(
    ("own", "expected"),
    [
        # training-operator release-1.9 mpijob_controller_test.go "Test launcher's Intel MPI handling".
        (
            {"X_MPI_HYDRA_BOOTSTRAP": "foo"},
            {"I_MPI_HYDRA_BOOTSTRAP": "rsh", "I_MPI_HYDRA_BOOTSTRAP_EXEC": "/etc/mpi/kubexec.sh"},
        ),
        (
            {"I_MPI_HYDRA_BOOTSTRAP": "RSH"},
            {"I_MPI_HYDRA_BOOTSTRAP": "RSH", "I_MPI_HYDRA_BOOTSTRAP_EXEC": "/etc/mpi/kubexec.sh"},
        ),
        (
            {"I_MPI_HYDRA_BOOTSTRAP_EXEC": "/script.sh"},
            {"I_MPI_HYDRA_BOOTSTRAP": "rsh", "I_MPI_HYDRA_BOOTSTRAP_EXEC": "/script.sh"},
        ),
        (
            {"I_MPI_HYDRA_BOOTSTRAP": "RSH", "I_MPI_HYDRA_BOOTSTRAP_EXEC": "/script.sh"},
            {"I_MPI_HYDRA_BOOTSTRAP": "RSH", "I_MPI_HYDRA_BOOTSTRAP_EXEC": "/script.sh"},
        ),
    ],
)
def test_intel_bootstrap_variables_of_the_template_are_kept_and_not_added_again(
    own: dict[str, str], expected: dict[str, str]
) -> None:
    import mpigen

    document = job()
    launcher = document["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    launcher["env"] = [{"name": name, "value": value} for name, value in own.items()]
    objects = mpigen.compile(document, OPTIONS)
    (launcher_job,) = [o for o in objects if o["kind"] == "Job" and o["metadata"]["name"] == "bench-launcher"]
    env = [
        (e["name"], e.get("value")) for e in launcher_job["spec"]["template"]["spec"]["containers"][0]["env"]
    ]
    hydra = [(name, value) for name, value in env if name.startswith("I_MPI_HYDRA_BOOTSTRAP")]
    assert sorted(hydra) == sorted(expected.items())
