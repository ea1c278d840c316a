"""The kubeflow.org/v2beta1 input front: the operator's defaults, each of its validation rules, and the
nonsense it accepts silently that mpigen refuses or warns about (mpi-operator release-0.8)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from jobs import V2BETA1, make_job, pod

from mpigen.errors import CompileError, Issue
from mpigen.inputs import v2beta1
from mpigen.options import Options

OPTIONS = Options(namespace="ml")


def job(workers: int | None = 2, name: str = "pi", **spec: Any) -> dict[str, Any]:
    image = "mpioperator/mpi-pi:openmpi"
    launcher, worker = pod("launcher", image), pod("worker", image)
    return make_job(V2BETA1, workers, name=name, namespace=None, launcher=launcher, worker=worker, **spec)


def errors(document: dict[str, Any]) -> list[str]:
    with pytest.raises(CompileError) as caught:
        v2beta1.load(document, OPTIONS)
    return [issue.text() for issue in caught.value.issues]


def warnings(document: dict[str, Any]) -> list[str]:
    return [w.text() for w in v2beta1.load(document, OPTIONS).warnings if w.severity == "warning"]


def test_defaults_are_the_operators() -> None:
    loaded = v2beta1.load(job(), OPTIONS)
    assert loaded.slots_per_worker == 1
    assert loaded.run_launcher_as_worker is False
    assert loaded.ssh_auth_mount_path == "/root/.ssh"
    assert loaded.launcher_creation_policy == "AtStartup"
    assert loaded.mpi_implementation == "OpenMPI"
    assert (loaded.launcher.replicas, loaded.launcher.restart_policy) == (1, "OnFailure")
    assert loaded.worker is not None
    assert (loaded.worker.replicas, loaded.worker.restart_policy) == (2, "Never")
    run = loaded.run
    assert run.clean_pod_policy == "None"
    assert run.suspend is False
    assert (run.ttl_seconds_after_finished, run.active_deadline_seconds, run.backoff_limit) == (
        None,
        None,
        None,
    )
    assert run.managed_by is None and run.scheduling is None
    assert loaded.namespace == "ml"


def test_written_values_win_over_defaults() -> None:
    document = job(
        slotsPerWorker=4,
        runLauncherAsWorker=True,
        sshAuthMountPath="/home/mpiuser/.ssh",
        launcherCreationPolicy="WaitForWorkersReady",
        mpiImplementation="Intel",
        runPolicy={
            "cleanPodPolicy": "Running",
            "ttlSecondsAfterFinished": 60,
            "activeDeadlineSeconds": 3600,
            "backoffLimit": 2,
            "suspend": True,
            "schedulingPolicy": {
                "minAvailable": 3,
                "queue": "q",
                "priorityClass": "high",
                "minResources": {"cpu": 4},
            },
        },
    )
    document["spec"]["mpiReplicaSpecs"]["Launcher"]["restartPolicy"] = "Never"
    loaded = v2beta1.load(document, OPTIONS)
    assert (loaded.slots_per_worker, loaded.run_launcher_as_worker) == (4, True)
    assert loaded.ssh_auth_mount_path == "/home/mpiuser/.ssh"
    assert (loaded.launcher_creation_policy, loaded.mpi_implementation) == ("WaitForWorkersReady", "Intel")
    assert loaded.launcher.restart_policy == "Never"
    run = loaded.run
    assert (run.clean_pod_policy, run.ttl_seconds_after_finished, run.active_deadline_seconds) == (
        "Running",
        60,
        3600,
    )
    assert (run.backoff_limit, run.suspend) == (2, True)
    assert run.scheduling is not None
    assert (run.scheduling.min_available, run.scheduling.queue, run.scheduling.priority_class) == (
        3,
        "q",
        "high",
    )
    assert run.scheduling.min_resources == {"cpu": 4}


def test_empty_ssh_auth_mount_path_is_defaulted_like_the_operator() -> None:
    assert v2beta1.load(job(sshAuthMountPath=""), OPTIONS).ssh_auth_mount_path == "/root/.ssh"


def test_the_mpi_operator_pi_example_loads() -> None:
    document = job(
        slotsPerWorker=1,
        sshAuthMountPath="/home/mpiuser/.ssh",
        runPolicy={"cleanPodPolicy": "Running", "ttlSecondsAfterFinished": 60},
    )
    loaded = v2beta1.load(document, OPTIONS)
    assert loaded.workers == 2 and loaded.run.clean_pod_policy == "Running"


def test_launcher_is_required() -> None:
    document = job()
    del document["spec"]["mpiReplicaSpecs"]["Launcher"]
    assert errors(document) == [
        "spec.mpiReplicaSpecs.Launcher: required: an MPIJob needs exactly one Launcher"
    ]


@pytest.mark.parametrize("replicas", [0, 2, -1])
def test_launcher_replicas_must_be_one(replicas: int) -> None:
    document = job()
    document["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"] = replicas
    assert errors(document) == [f"spec.mpiReplicaSpecs.Launcher.replicas: must be 1, got {replicas}"]


def test_worker_replicas_missing_is_an_error_as_in_the_operator() -> None:
    assert errors(job(workers=None)) == [
        (
            "spec.mpiReplicaSpecs.Worker.replicas: required field is missing "
            "(the operator defaults it to 0 and then refuses the job)"
        )
    ]


@pytest.mark.parametrize("replicas", [0, -3])
def test_worker_replicas_must_be_at_least_one(replicas: int) -> None:
    assert errors(job(workers=replicas)) == [
        f"spec.mpiReplicaSpecs.Worker.replicas: must be >= 1, got {replicas}"
    ]


def test_worker_is_optional_but_an_empty_hostfile_is_warned_about() -> None:
    document = job()
    del document["spec"]["mpiReplicaSpecs"]["Worker"]
    assert v2beta1.load(document, OPTIONS).worker is None
    assert warnings(document) == [
        "spec.mpiReplicaSpecs: no Worker and runLauncherAsWorker is false: the hostfile lists no hosts"
    ]
    document["spec"]["runLauncherAsWorker"] = True
    assert warnings(document) == []


@pytest.mark.parametrize("policy", ["Always", "ExitCode", "never"])
def test_restart_policy_is_never_or_on_failure(policy: str) -> None:
    document = job()
    document["spec"]["mpiReplicaSpecs"]["Worker"]["restartPolicy"] = policy
    hint = ' (did you mean "Never"?)' if policy == "never" else ""
    assert errors(document) == [
        (
            "spec.mpiReplicaSpecs.Worker.restartPolicy: must be one of 'Never' or 'OnFailure', "
            f'got string "{policy}"{hint}'
        )
    ]


def test_a_template_without_containers_is_refused() -> None:
    document = job()
    document["spec"]["mpiReplicaSpecs"]["Launcher"]["template"] = {"spec": {"containers": []}}
    assert errors(document) == [
        "spec.mpiReplicaSpecs.Launcher.template.spec.containers: at least one container is required"
    ]


def test_slots_per_worker_zero_is_refused() -> None:
    # validation.go only demands >= 0; a hostfile with slots=0 offers mpirun nothing.
    assert errors(job(slotsPerWorker=0)) == ["spec.slotsPerWorker: must be >= 1, got 0"]


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("mpiImplementation", "IntelMPI", "must be one of 'OpenMPI', 'Intel' or 'MPICH', got string \"IntelMPI\""),
        ("mpiImplementation", "mpich", ("must be one of 'OpenMPI', 'Intel' or 'MPICH', got string \"mpich\" "
         '(did you mean "MPICH"?)')),
        # The CRD's enum marker for this field is malformed, so the operator accepts any string and
        # treats it as WaitForWorkersReady.
        ("launcherCreationPolicy", "Eventually", ("must be one of 'AtStartup' or 'WaitForWorkersReady', "
         'got string "Eventually"')),
        ("launcherCreationPolicy", "atstartup", ("must be one of 'AtStartup' or 'WaitForWorkersReady', "
         'got string "atstartup" (did you mean "AtStartup"?)')),
    ],
)  # fmt: skip
def test_enumerations(field: str, value: str, expected: str) -> None:
    assert errors(job(**{field: value})) == [f"spec.{field}: {expected}"]


def test_ssh_auth_mount_path_must_be_absolute() -> None:
    assert errors(job(sshAuthMountPath=".ssh")) == [
        'spec.sshAuthMountPath: must be an absolute path, got ".ssh"'
    ]


@pytest.mark.parametrize(
    ("name", "workers", "reason"),
    [
        ("1pi", 2, "a DNS-1035 label starts with a lower-case letter"),
        ("a" * 54, 11, "it has 64 characters, at most 63 are allowed"),
    ],
)
def test_the_last_worker_hostname_must_be_a_dns_1035_label(name: str, workers: int, reason: str) -> None:
    hostname = f"{name}-worker-{workers - 1}"
    assert errors(job(workers=workers, name=name)) == [
        f'metadata.name: the last worker pod\'s hostname "{hostname}" is not a valid DNS-1035 label: {reason}'
    ]


def test_the_name_rule_counts_the_workers() -> None:
    name = "a" * 54  # with 10 workers the last is "<name>-worker-9", 63 characters; with 11, 64.
    assert v2beta1.load(job(workers=10, name=name), OPTIONS).workers == 10
    assert len(errors(job(workers=11, name=name))) == 1


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("cleanPodPolicy", "Finished", "must be one of 'None', 'Running' or 'All', got string \"Finished\""),
        ("ttlSecondsAfterFinished", -1, "must be >= 0, got -1"),
        ("activeDeadlineSeconds", -5, "must be >= 0, got -5"),
        ("activeDeadlineSeconds", 0, ("must be >= 1, got 0 (a launcher Job with a deadline of 0 fails at once)")),
        ("backoffLimit", -1, "must be >= 0, got -1"),
        ("suspend", "yes", 'expected true or false, got string "yes"'),
        ("managedBy", "kubeflow.org/mpi-operater", ('must be "kubeflow.org/mpi-operator" or '
         '"kueue.x-k8s.io/multikueue", got "kubeflow.org/mpi-operater" (did you mean "kubeflow.org/mpi-operator"?); '
         "the operator would skip this job without a word")),
    ],
)  # fmt: skip
def test_run_policy_rules(field: str, value: Any, expected: str) -> None:
    assert errors(job(runPolicy={field: value})) == [f"spec.runPolicy.{field}: {expected}"]


def test_managed_by_the_operator_itself_or_multikueue_is_accepted_and_left_to_the_target() -> None:
    """The front accepts both values without a word; each run target warns about MultiKueue in its own
    terms (tests/unit/targets/test_target_table.py)."""
    assert warnings(job(runPolicy={"managedBy": "kubeflow.org/mpi-operator"})) == []
    assert warnings(job(runPolicy={"managedBy": "kueue.x-k8s.io/multikueue"})) == []


def test_scheduling_policy_rules() -> None:
    path = "spec.runPolicy.schedulingPolicy"
    policy = {
        "minAvailable": 4,
        "minResources": {"cpu": "lots", "memory": "2Gi"},
        "scheduleTimeoutSeconds": 10,
    }
    assert errors(job(runPolicy={"schedulingPolicy": policy})) == [
        f'{path}.minResources.cpu: expected a quantity such as 4, 500m or 2Gi, got "lots"',
        (
            f"{path}.minAvailable: must be <= 3, the job's pod count (launcher and workers), got 4: "
            "the gang could never start"
        ),
    ]
    assert errors(job(runPolicy={"schedulingPolicy": {"scheduleTimeoutSeconds": -1}})) == [
        f"{path}.scheduleTimeoutSeconds: must be >= 0, got -1"
    ]
    assert errors(job(runPolicy={"schedulingPolicy": {"minAvailable": -1}})) == [
        f"{path}.minAvailable: must be >= 0, got -1"
    ]
    assert warnings(job(runPolicy={"schedulingPolicy": {"minAvailable": 0}})) == [
        (
            f"{path}.minAvailable: 0 lets the gang scheduler start the job's pods one by one: "
            "gang scheduling is off for this job"
        )
    ]
    assert warnings(job(runPolicy={"schedulingPolicy": {"minAvailable": 3}})) == []


def test_template_restart_policy_is_overridden_with_a_warning() -> None:
    document = job()
    document["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["restartPolicy"] = "Always"
    document["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["restartPolicy"] = "Never"
    assert warnings(document) == [
        (
            'spec.mpiReplicaSpecs.Launcher.template.spec.restartPolicy: "Always" is replaced by the Launcher '
            'restartPolicy "OnFailure" (set it on the replica spec instead)'
        )
    ]


@pytest.mark.parametrize(
    ("field", "value", "hint"),
    [
        ("cleanPodPolicy", "All", "in kubeflow.org/v2beta1 it is spec.runPolicy.cleanPodPolicy"),
        ("backoffLimit", 3, "in kubeflow.org/v2beta1 it is spec.runPolicy.backoffLimit"),
        ("activeDeadlineSeconds", 60, "in kubeflow.org/v2beta1 it is spec.runPolicy.activeDeadlineSeconds"),
        ("mainContainer", "mpi", "mainContainer exists only in kubeflow.org/v1alpha2 and kubeflow.org/v1"),
        ("gpus", 8, "gpus exists only in kubeflow.org/v1alpha1"),
        ("replicas", 2, "in kubeflow.org/v2beta1 it is spec.mpiReplicaSpecs.Worker.replicas"),
    ],
)
def test_fields_of_other_versions_get_did_you_mean_help(field: str, value: Any, hint: str) -> None:
    assert errors(job(**{field: value})) == [f'spec.{field}: unknown field "{field}" ({hint})']


def test_a_spec_field_misplaced_under_run_policy_is_pointed_back() -> None:
    assert errors(job(runPolicy={"slotsPerWorker": 2})) == [
        (
            'spec.runPolicy.slotsPerWorker: unknown field "slotsPerWorker" (in kubeflow.org/v2beta1 it is '
            "spec.slotsPerWorker)"
        )
    ]


def test_typos_still_get_the_closest_name() -> None:
    document = job(slotPerWorker=2)
    document["spec"]["mpiReplicaSpecs"]["workers"] = document["spec"]["mpiReplicaSpecs"].pop("Worker")
    assert errors(document) == [
        'spec.mpiReplicaSpecs.workers: unknown field "workers" (did you mean "Worker"?)',
        'spec.slotPerWorker: unknown field "slotPerWorker" (did you mean "slotsPerWorker"?)',
    ]


def test_every_problem_is_reported_at_once() -> None:
    document = job(workers=0, name="1pi", sshAuthMountPath="rel", runPolicy={"managedBy": "me"})
    del document["spec"]["mpiReplicaSpecs"]["Launcher"]
    found = errors(document)
    assert [line.split(":")[0] for line in found] == [
        "metadata.name",
        "spec.mpiReplicaSpecs.Launcher",
        "spec.mpiReplicaSpecs.Worker.replicas",
        "spec.sshAuthMountPath",
        "spec.runPolicy.managedBy",
    ]


def test_load_does_not_touch_its_input() -> None:
    document = job(runPolicy={"schedulingPolicy": {"minResources": {"cpu": 1}}})
    before = copy.deepcopy(document)
    v2beta1.load(document, OPTIONS)
    assert document == before


def test_warnings_are_issues_with_paths() -> None:
    loaded = v2beta1.load(job(runPolicy={"managedBy": "kueue.x-k8s.io/multikueue"}), OPTIONS)
    assert all(isinstance(w, Issue) and w.path for w in loaded.warnings)
