"""API-server rules the schemas miss: reserved names, labels, object sizes, per-job option annotations,
and the output checks that catch mpigen's own mistakes."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from jobs import V2BETA1, make_job, pod

from mpigen import names
from mpigen.checks.objectsize import OBJECT_MAX_BYTES
from mpigen.checks.rules import check_objects, label_value_problem, qualified_name_problem
from mpigen.compiler import compile_job, plan_job
from mpigen.errors import CompileError
from mpigen.inputs.annotations import ANNOTATIONS, PREFIX, options_for
from mpigen.options import Options
from mpigen.targets.operator import limits
from mpigen.targets.shared import sizes


def job(workers: int = 2, name: str = "train", slots: int = 1) -> dict[str, Any]:
    horovod = pod(image="horovod/horovod:latest")
    return make_job(workers=workers, name=name, launcher=horovod, worker=horovod, slotsPerWorker=slots)


def errors_of(document: dict[str, Any], options: Options | None = None) -> list[str]:
    with pytest.raises(CompileError) as caught:
        compile_job(document, options or Options())
    return [issue.text() for issue in caught.value.issues]


# --- reserved names ---------------------------------------------------------------------------

LAUNCHER = ("spec", "mpiReplicaSpecs", "Launcher", "template", "spec")
WORKER = ("spec", "mpiReplicaSpecs", "Worker", "template", "spec")


def at(document: dict[str, Any], path: tuple[str, ...]) -> Any:
    for key in path:
        document = document[key]
    return document


@pytest.mark.parametrize(
    ("where", "field", "value", "expected"),
    [
        (LAUNCHER, "volumes", {"name": "mpi-job-config", "emptyDir": {}}, "volumes[0].name"),
        (LAUNCHER, "volumes", {"name": "mpi-job-kubectl", "emptyDir": {}}, "volumes[0].name"),
        (WORKER, "volumes", {"name": "mpi-job-config", "emptyDir": {}}, "volumes[0].name"),
        (LAUNCHER, "initContainers", {"name": "kubectl-delivery", "image": "x"}, "initContainers[0].name"),
        (LAUNCHER, "initContainers", {"name": "wait-for-workers", "image": "x"}, "initContainers[0].name"),
    ],
)
def test_names_mpigen_adds_are_reserved(
    where: tuple[str, ...], field: str, value: dict[str, Any], expected: str
) -> None:
    document = job()
    at(document, where)[field] = [value]
    errors = errors_of(document)
    assert len(errors) == 1
    assert errors[0].startswith(".".join(where[:3]) + ".template.spec." + expected)
    assert "is reserved" in errors[0]


def test_worker_may_use_launcher_only_names() -> None:
    document = job()
    at(document, WORKER)["volumes"] = [{"name": "mpi-job-kubectl", "emptyDir": {}}]
    at(document, WORKER)["initContainers"] = [{"name": "kubectl-delivery", "image": "x"}]
    assert compile_job(document).objects


@pytest.mark.parametrize("variable", ["OMPI_MCA_plm_rsh_agent", "OMPI_MCA_orte_default_hostfile"])
def test_launcher_variables_mpigen_sets_are_reserved(variable: str) -> None:
    document = job()
    at(document, LAUNCHER)["containers"][0]["env"] = [
        {"name": "OMPI_MCA_btl", "value": "tcp"},
        {"name": variable, "value": "x"},
    ]
    expected = (
        f'{".".join(LAUNCHER)}.containers[0].env[1].name: "{variable}" is reserved: mpigen sets it in the first '
        "container of the launcher pods, to point Open MPI at kubexec.sh and the hostfile; remove yours"
    )
    assert errors_of(document) == [expected]


def launcher_env(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    (launcher,) = [
        obj for obj in objects if obj["kind"] == "Job" and obj["metadata"]["name"].endswith("-launcher")
    ]
    env: list[dict[str, Any]] = launcher["spec"]["template"]["spec"]["containers"][0]["env"]
    return env


def test_no_tree_spawn_is_the_users_to_set() -> None:
    """mpigen adds `no_tree_spawn`, v0.2.0 does not: a template's own value is kept, and mpigen's left out."""
    document = job()
    at(document, LAUNCHER)["containers"][0]["env"] = [{"name": names.NO_TREE_SPAWN_ENV, "value": "0"}]
    env = launcher_env(compile_job(document).objects)
    assert [var for var in env if var["name"] == names.NO_TREE_SPAWN_ENV] == [
        {"name": names.NO_TREE_SPAWN_ENV, "value": "0"}
    ]


@pytest.mark.parametrize(
    "variable",
    [
        "PRTE_MCA_plm_ssh_args",
        "PRTE_MCA_prte_default_hostfile",
        "PRTE_MCA_prte_set_default_slots",
        "PRTE_MCA_prte_keep_fqdn_hostnames",
    ],
)
def test_prrte_variables_are_the_users_on_v2beta1(variable: str) -> None:
    """mpi-operator v0.8.2 sets none of the PRRTE variables (only mpigen does): the template's one wins."""
    document = make_job(V2BETA1, launcher=pod(env=[{"name": variable, "value": "mine"}]))
    env = launcher_env(compile_job(document).objects)
    assert [var["value"] for var in env if var["name"] == variable] == ["mine"]
    plain = launcher_env(compile_job(make_job(V2BETA1)).objects)
    assert sorted(var["name"] for var in env) == sorted(var["name"] for var in plain)  # once each


@pytest.mark.parametrize(
    ("implementation", "variable"),
    [
        ("OpenMPI", "OMPI_MCA_plm_rsh_args"),
        ("OpenMPI", "OMPI_MCA_orte_keep_fqdn_hostnames"),
        ("OpenMPI", "OMPI_MCA_orte_set_default_slots"),
        ("Intel", "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS"),
        ("Intel", "I_MPI_PERHOST"),
        ("MPICH", "HYDRA_LAUNCH_EXTRA_ARGS"),
    ],
)
def test_variables_the_v2beta1_operator_sets_stay_reserved(implementation: str, variable: str) -> None:
    document = make_job(
        V2BETA1, launcher=pod(env=[{"name": variable, "value": "x"}]), mpiImplementation=implementation
    )
    (error,) = errors_of(document)
    assert f'containers[0].env[0].name: "{variable}" is reserved' in error


def test_other_open_mpi_variables_are_the_users() -> None:
    document = job()
    at(document, LAUNCHER)["containers"][0]["env"] = [
        {"name": "OMPI_MCA_btl_tcp_if_include", "value": "eth0"}
    ]
    assert compile_job(document).objects


@pytest.mark.parametrize(
    ("path", "role"), [("/etc/mpi", LAUNCHER), ("/opt/kube/", LAUNCHER), ("/etc/mpi/", WORKER)]
)
def test_mount_paths_mpigen_uses_are_reserved(path: str, role: tuple[str, ...]) -> None:
    document = job()
    at(document, role)["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": path}]
    at(document, role)["volumes"] = [{"name": "data", "emptyDir": {}}]
    errors = errors_of(document)
    assert len(errors) == 1 and "volumeMounts[0].mountPath" in errors[0] and "is reserved" in errors[0]


def test_mounts_below_reserved_paths_are_allowed() -> None:
    document = job()
    at(document, LAUNCHER)["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/etc/mpi-data"}]
    at(document, LAUNCHER)["volumes"] = [{"name": "data", "emptyDir": {}}]
    assert compile_job(document).objects


# --- labels -------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["app", "example.com/team", "a.b_c-d", "x" * 63, "k8s.io/" + "x" * 63])
def test_valid_label_keys(key: str) -> None:
    assert qualified_name_problem(key) is None


@pytest.mark.parametrize(
    "key",
    ["", "-app", "app-", "team owner", "x" * 64, "/name", "Example.com/team", "a/b/c", "x" * 254 + "/n"],
)
def test_invalid_label_keys(key: str) -> None:
    assert qualified_name_problem(key)


@pytest.mark.parametrize(
    ("value", "ok"),
    [("", True), ("v1.2_3-x", True), ("x" * 63, True), ("x" * 64, False), ("-a", False), ("a b", False)],
)
def test_label_values(value: str, ok: bool) -> None:
    assert (label_value_problem(value) is None) == ok


def test_template_labels_are_checked_with_their_paths() -> None:
    document = job()
    document["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["metadata"] = {"labels": {"run": "x" * 64}}
    expected = (
        "spec.mpiReplicaSpecs.Worker.template.metadata.labels.run: invalid label value: "
        f'"{"x" * 64}" has 64 characters, more than 63'
    )
    assert errors_of(document) == [expected]


# --- sizes --------------------------------------------------------------------------------------


@pytest.mark.parametrize("workers", [1, 9, 10, 11, 99, 100, 101, 1234])
@pytest.mark.parametrize("slots", [1, 16])
def test_size_arithmetic_matches_the_built_objects(workers: int, slots: int) -> None:
    plan, options = plan_job(job(workers, "size-check", slots), Options())
    objects = {
        obj["kind"]: obj
        for obj in compile_job(job(workers, "size-check", slots)).objects
        if obj["kind"] in ("ConfigMap",)
    }
    data = objects["ConfigMap"]["data"]
    assert limits.SIZES.config_map_bytes(plan, options, workers) == sum(
        len(k) + len(v.encode()) for k, v in data.items()
    )
    role = next(
        obj
        for obj in compile_job(job(workers, "size-check", slots)).objects
        if obj["kind"] == "Role" and obj["metadata"]["name"] == names.launcher("size-check")
    )
    assert sizes.role_bytes(plan, workers) == len(json.dumps(role, separators=(",", ":")).encode())


@pytest.mark.parametrize("n", [0, 1, 9, 10, 11, 100, 12345, 10**6 + 7])
def test_digit_count_sum(n: int) -> None:
    expected = sum(len(str(i)) for i in range(n)) if n < 20000 else None
    if expected is None:  # checked against the closed form of the same sum by decades
        expected = 10 * 1 + 90 * 2 + 900 * 3 + 9000 * 4 + 90000 * 5 + 900000 * 6 + 7 * 7
    assert sizes.digit_count_sum(n) == expected


def test_the_largest_job_that_fits_is_exact() -> None:
    errors = errors_of(job(60000, "large", 8))
    assert len(errors) == 1 and "the ConfigMap large-config would be" in errors[0]
    fits = int(errors[0].split("the largest job that fits has ")[1].split(" ")[0].replace(",", ""))
    assert compile_job(job(fits, "large", 8)).objects
    assert "do not fit" in errors_of(job(fits + 1, "large", 8))[0]


def test_long_names_make_the_role_the_limit() -> None:
    # With long pod names the Role's two name lists outgrow the ConfigMap's hostfile.
    name = "a" * 40
    plan, options = plan_job(job(2, name), Options())
    assert sizes.role_bytes(plan, 15000) > OBJECT_MAX_BYTES >= sizes.CONFIG_MAP_MAX_BYTES
    assert limits.SIZES.config_map_bytes(plan, options, 15000) <= sizes.CONFIG_MAP_MAX_BYTES
    errors = errors_of(job(15000, name))
    assert f"the Role {name}-launcher would be" in errors[0] and "1.5 MiB" in errors[0]


def test_absurd_worker_counts_never_build_a_hostfile(monkeypatch: pytest.MonkeyPatch) -> None:
    from mpigen.targets.operator import configmap

    def refuse(*args: object) -> str:
        raise AssertionError("the hostfile was rendered for an absurd worker count")

    monkeypatch.setattr(configmap, "render_hostfile", refuse)
    errors = errors_of(job(2**31 - 1))
    assert errors[0].startswith("spec.mpiReplicaSpecs.Worker.replicas: 2147483647 workers do not fit")


# --- per-job options ----------------------------------------------------------------------------


def annotated(**values: str) -> dict[str, Any]:
    document = job()
    document["metadata"]["annotations"] = {PREFIX + key: value for key, value in values.items()}
    return document


@pytest.mark.parametrize(
    ("key", "value", "field", "expected"),
    [
        ("gpus-per-node", "4", "gpus_per_node", 4),
        ("processing-units-per-node", "2", "processing_units_per_node", 2),
        ("processing-resource-type", "cpu", "processing_resource_type", "cpu"),
        ("kubectl-delivery-image", "reg/img:1", "kubectl_delivery_image", "reg/img:1"),
        ("namespace", "team-a", "namespace", "team-a"),
        ("wait-timeout", "30", "wait_timeout_seconds", 30),
        ("wait-timeout", "0999999999", "wait_timeout_seconds", 999_999_999),
        ("gang-scheduler", "volcano", "gang_scheduler", "volcano"),
        ("kube-version", "v1.30", "kube_version", "1.30"),
        ("validate", "false", "validate", False),
    ],
)
def test_each_option_annotation_sets_its_option(key: str, value: str, field: str, expected: object) -> None:
    options, issues = options_for(annotated(**{key: value}), Options())
    assert issues == []
    assert getattr(options, field) == expected
    assert key in ANNOTATIONS


def test_every_render_option_has_an_annotation() -> None:
    assert {field for field, _ in ANNOTATIONS.values()} == set(Options._fields)


def test_annotations_win_over_the_callers_options() -> None:
    options, _ = options_for(
        annotated(**{"gang-scheduler": "volcano"}), Options(gang_scheduler="scheduler-plugins")
    )
    assert options.gang_scheduler == "volcano"


def test_option_annotations_take_effect_and_are_not_copied() -> None:
    compilation = compile_job(annotated(**{"gang-scheduler": "volcano", "wait-timeout": "42"}))
    kinds = [obj["kind"] for obj in compilation.objects]
    assert "PodGroup" in kinds
    config = next(obj for obj in compilation.objects if obj["kind"] == "ConfigMap")
    assert "timeout=42\n" in config["data"]["wait-for-workers.sh"]
    assert PREFIX not in json.dumps(compilation.objects)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"gang-schedular": "volcano"}, 'did you mean "mpigen.dev/gang-scheduler"?'),
        ({"gpus-per-node": "0"}, "expected a whole number >= 1"),
        ({"gpus-per-node": "eight"}, "expected a whole number >= 1"),
        ({"gang-scheduler": "kueue"}, "must be one of volcano, scheduler-plugins"),
        ({"kube-version": "1.20"}, "unsupported Kubernetes version"),
        ({"namespace": "Team_A"}, "not a valid namespace"),
        ({"validate": "yes"}, 'must be "true" or "false"'),
        (
            {"kubectl-delivery-image": " "},
            'must be a container image reference (no spaces, newlines or control characters), like "mpioperator/kubectl-delivery:latest"; got " "',
        ),
        ({"kubectl-delivery-image": "alpine\nrm -rf /"}, 'got "alpine\\nrm -rf /"'),
        ({"kubectl-delivery-image": "my image:1"}, "must be a container image reference"),
        ({"scheduler-name": "gang"}, "needs mpigen.dev/gang-scheduler"),
        (
            {"gang-scheduler": "volcano", "scheduler-name": "My Scheduler"},
            "must be a DNS subdomain (lower-case letters, digits, '-' and '.', at most 253 characters), as the API server requires of such names; got \"My Scheduler\"",
        ),
        ({"gang-scheduler": "volcano", "scheduler-name": "a" * 254}, "must be a DNS subdomain"),
        ({"wait-timeout": "٣٠٠"}, 'expected a whole number >= 1, got "٣٠٠"'),
        ({"wait-timeout": "²"}, 'expected a whole number >= 1, got "²"'),
        ({"wait-timeout": "1000000000"}, "must be at most 999999999, got 1000000000"),
        ({"wait-timeout": "9223372036854775808"}, "must be at most 999999999, got 9223372036854775808"),
        ({"gpus-per-node": "9" * 5000}, "must be at most 999999999"),
        ({"gpus-per-node": "1_000"}, "expected a whole number >= 1"),
        ({"gpus-per-node": " 8"}, "expected a whole number >= 1"),
    ],
)
def test_bad_option_annotations_are_errors_with_their_paths(values: dict[str, str], message: str) -> None:
    errors = errors_of(annotated(**values))
    assert len(errors) == 1 and message in errors[0]
    assert errors[0].startswith('metadata.annotations["mpigen.dev/')


def test_option_errors_come_with_the_jobs_other_errors() -> None:
    document = annotated(**{"wait-timeout": "soon"})
    document["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"] = 2
    errors = errors_of(document)
    assert any("wait-timeout" in e for e in errors) and any("Launcher.replicas" in e for e in errors)


# --- output checks (mpigen's own bugs) ----------------------------------------------------------


def objects() -> list[dict[str, Any]]:
    return compile_job(job(), Options(gang_scheduler="volcano")).objects


def find(objs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    return next(obj for obj in objs if obj["kind"] == kind)


def test_correct_output_breaks_no_rule() -> None:
    assert list(check_objects(objects())) == []


def test_a_selector_that_misses_its_template_is_caught() -> None:
    objs = objects()
    find(objs, "StatefulSet")["spec"]["selector"]["matchLabels"]["mpi_role_type"] = "launcher"
    found = [(obj["kind"], issue.text()) for obj, issue in check_objects(objs)]
    assert ("StatefulSet", "spec.selector.matchLabels: does not match the pod template's labels") in found


def test_a_service_or_pdb_selecting_no_pod_is_caught() -> None:
    objs = objects()
    find(objs, "Service")["spec"]["selector"] = {"mpi_job_name": "other"}
    find(objs, "PodDisruptionBudget")["spec"]["selector"]["matchLabels"] = {"mpi_job_name": "other"}
    found = {(obj["kind"], issue.text()) for obj, issue in check_objects(objs)}
    assert found == {
        ("Service", "spec.selector: selects none of the job's pods"),
        ("PodDisruptionBudget", "spec.selector.matchLabels: selects none of the job's pods"),
    }


def test_a_service_account_subject_in_another_namespace_is_caught() -> None:
    objs = objects()
    find(objs, "RoleBinding")["subjects"][0]["namespace"] = "default"
    found = [issue.text() for _, issue in check_objects(objs)]
    namespace = find(objs, "RoleBinding")["metadata"]["namespace"]
    assert found == [f'subjects[0].namespace: "default" is not the binding\'s own namespace "{namespace}"']


def test_a_service_account_subject_without_namespace_is_the_bindings_own() -> None:
    objs = objects()
    del find(objs, "RoleBinding")["subjects"][0]["namespace"]
    assert list(check_objects(objs)) == []
    binding = find(objs, "RoleBinding")
    cluster = {**binding, "kind": "ClusterRoleBinding"}
    found = [issue.text() for _, issue in check_objects([cluster])]
    assert found == ["subjects[0].namespace: a ServiceAccount subject needs a namespace"]


def test_bad_labels_on_output_are_caught() -> None:
    objs = objects()
    find(objs, "ConfigMap")["metadata"]["labels"]["app"] = "x" * 64
    find(objs, "Job")["spec"]["template"]["metadata"]["labels"]["bad key"] = "v"
    found = sorted(issue.text().split(":")[0] for _, issue in check_objects(objs))
    assert found == ["metadata.labels.app", 'spec.template.metadata.labels["bad key"]']


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--scheduler-name", "My Scheduler", "must be a DNS subdomain"),
        ("--kubectl-delivery-image", "alpine\nid", "must be a container image reference"),
        ("--wait-timeout", "9223372036854775808", "must be at most 999999999"),
        ("--wait-timeout", "٣٠٠", 'expected a whole number >= 1, got "٣٠٠"'),
        ("--gpus-per-node", "0", "expected a whole number >= 1"),
        ("--wait-timeout", "0", 'expected a whole number >= 1, got "0"'),
    ],
)
def test_bad_option_flags_are_usage_errors_worded_as_for_annotations(
    flag: str, value: str, message: str
) -> None:
    from click.testing import CliRunner

    from mpigen.cli import cli

    result = CliRunner().invoke(
        cli, ["render", "--gang-scheduler", "volcano", flag, value, "-"], input="", catch_exceptions=False
    )
    assert result.exit_code == 2 and f"Invalid value for '{flag}': {message}" in result.stderr
    assert "as a string" not in result.stderr  # an annotation's wording, not a flag's


def test_good_option_flags_are_taken() -> None:
    from click.testing import CliRunner

    from mpigen.cli import cli

    args = [
        "--gang-scheduler",
        "volcano",
        "--scheduler-name",
        "sched.example.com",
        "--wait-timeout",
        "999999999",
    ]
    document = yaml.safe_dump(job())
    result = CliRunner().invoke(cli, ["render", *args, "-"], input=document, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert "schedulerName: sched.example.com" in result.stdout and "timeout=999999999\n" in result.stdout


@pytest.mark.parametrize(
    ("image", "message"),
    [
        ("", "must not be empty: the API server refuses a container without an image"),
        (None, "required field is missing: the API server refuses a container without an image"),
    ],
)
def test_an_empty_image_is_called_empty_and_a_missing_one_missing(image: str | None, message: str) -> None:
    launcher = pod()
    launcher["spec"]["containers"][0]["image"] = image
    if image is None:
        del launcher["spec"]["containers"][0]["image"]
    with pytest.raises(CompileError) as caught:
        compile_job(make_job(V2BETA1, launcher=launcher), Options())
    assert [issue.text() for issue in caught.value.issues] == [
        f"spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].image: {message}"
    ]
