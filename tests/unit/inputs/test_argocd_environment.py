"""Options from Argo CD's plugin environment (mpigen.inputs.argocd): the variables the repo-server sets,
each problem naming its variable and parameter, and the parameter announcements made from the option
table."""

from __future__ import annotations

import json

import pytest

from mpigen.checks.kube.versions import supported_kube_versions
from mpigen.inputs.argocd import announcements, names_a_job, options_from_environment, param_variable
from mpigen.options import OPTION_TABLE, Options


def parameters(*entries: dict[str, object]) -> dict[str, str]:
    return {"ARGOCD_APP_PARAMETERS": json.dumps(list(entries))}


def test_no_variable_sets_no_option() -> None:
    assert options_from_environment({}) == (Options(), [], [])
    assert options_from_environment({"ARGOCD_APP_PARAMETERS": "null"}) == (Options(), [], [])


def test_parameters_are_named_as_the_flags_and_parsed_as_the_annotations() -> None:
    env = parameters(
        {"name": "target", "string": "jobset"},
        {"name": "queue", "string": "team-a"},
        {"name": "wait-timeout", "string": "300"},
        {"name": "validate", "string": "false"},
        {"name": "gang-scheduler", "string": ""},  # empty: unset, as the UI may send it
    )
    options, problems, warnings = options_from_environment(env)
    assert (problems, warnings) == ([], [])
    assert options == Options(target="jobset", queue="team-a", wait_timeout_seconds=300, validate=False)


def test_the_destination_namespace_and_cluster_version_are_defaults_a_parameter_overrides() -> None:
    env = {"ARGOCD_APP_NAMESPACE": "ml", "KUBE_VERSION": "1.30.2"}
    assert options_from_environment(env)[0] == Options(namespace="ml", kube_version="1.30")
    overridden = env | parameters(
        {"name": "namespace", "string": "other"}, {"name": "kube-version", "string": "1.29"}
    )
    assert options_from_environment(overridden)[0] == Options(namespace="other", kube_version="1.29")
    # An empty parameter is as if it were not set: the defaults hold.
    empty = env | parameters({"name": "namespace", "string": ""}, {"name": "kube-version", "string": ""})
    assert options_from_environment(empty)[0] == Options(namespace="ml", kube_version="1.30")


def test_a_cluster_newer_than_the_schemas_is_checked_against_the_newest_with_a_warning() -> None:
    options, problems, warnings = options_from_environment({"KUBE_VERSION": "1.99.0"})
    assert problems == []
    assert options.kube_version == supported_kube_versions()[-1]
    [warning] = warnings
    assert warning.startswith('KUBE_VERSION: "1.99.0" is newer than the newest Kubernetes schemas')


def test_a_cluster_older_than_the_schemas_is_refused() -> None:
    _, problems, _ = options_from_environment({"KUBE_VERSION": "1.20.0"})
    [problem] = problems
    assert problem.startswith("KUBE_VERSION: unsupported Kubernetes version '1.20.0'")


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        (
            parameters({"name": "targt", "string": "jobset"}),
            'ARGOCD_APP_PARAMETERS: parameter "targt": unknown mpigen option (did you mean "target"?); known: namespace,',
        ),
        (
            parameters({"name": "target", "string": "slurm"}),
            'ARGOCD_APP_PARAMETERS: parameter "target": must be one of operator',
        ),
        (
            parameters({"name": "queue", "array": ["a"]}),
            'ARGOCD_APP_PARAMETERS: parameter "queue": takes a string, got an array',
        ),
        (
            parameters({"name": "queue", "map": {"a": "b"}}),
            'ARGOCD_APP_PARAMETERS: parameter "queue": takes a string, got a map',
        ),
        (
            parameters({"name": "queue", "string": "a"}, {"name": "queue", "string": "b"}),
            'ARGOCD_APP_PARAMETERS: parameter "queue": given twice',
        ),
        (parameters({"string": "a"}), "ARGOCD_APP_PARAMETERS: a parameter without a name"),
        ({"ARGOCD_APP_PARAMETERS": "[{"}, "ARGOCD_APP_PARAMETERS: not JSON"),
        (
            {"ARGOCD_APP_PARAMETERS": "{}"},
            "ARGOCD_APP_PARAMETERS: expected a JSON list of parameters, got dict",
        ),
        (
            {"ARGOCD_APP_NAMESPACE": "Not_A_Namespace"},
            'ARGOCD_APP_NAMESPACE: "Not_A_Namespace" is not a valid namespace',
        ),
        (
            parameters({"name": "priority-class", "string": "high"}, {"name": "target", "string": "jobset"}),
            'parameter "priority-class" needs the parameter "queue"',
        ),
        ({"PARAM_TARGET": "slurm"}, "PARAM_TARGET: must be one of operator"),
        ({"PARAM_TARGT": "jobset"}, "PARAM_TARGT: no mpigen option is named so; known: PARAM_NAMESPACE,"),
    ],
)
def test_each_problem_names_its_variable_and_parameter(env: dict[str, str], expected: str) -> None:
    options, problems, _ = options_from_environment(env)
    assert len(problems) == 1, problems
    assert problems[0].startswith(expected), problems[0]


def test_param_variables_are_read_only_without_argocd_app_parameters() -> None:
    """Argo CD derives PARAM_* from ARGOCD_APP_PARAMETERS; alone, they are a command run by hand."""
    assert options_from_environment({"PARAM_GANG_SCHEDULER": "volcano"})[0] == Options(
        gang_scheduler="volcano"
    )
    env = {"PARAM_GANG_SCHEDULER": "volcano", **parameters({"name": "target", "string": "jobset"})}
    assert options_from_environment(env)[0] == Options(target="jobset")


def test_param_variable_names_escape_as_argo_cd_does() -> None:
    # argo-cd v3.5.0 pkg/apis/application/v1alpha1/types.go: escaped (upper case, [^A-Z0-9_] -> "_")
    assert param_variable("gang-scheduler") == "PARAM_GANG_SCHEDULER"
    assert param_variable("kube-version") == "PARAM_KUBE_VERSION"


def test_one_announcement_per_option_with_its_default() -> None:
    announced = announcements()
    assert [entry["name"] for entry in announced] == [spec.flag for spec in OPTION_TABLE]
    by_name = {entry["name"]: entry for entry in announced}
    assert by_name["target"]["string"] == "operator"
    assert by_name["wait-timeout"]["string"] == "600"
    assert by_name["validate"]["string"] == "true"
    assert "string" not in by_name["queue"]
    assert all(entry["title"] and entry["tooltip"] for entry in announced)
    # Every announced default is a value the parameter takes back unchanged.
    env = parameters(*({"name": e["name"], "string": e["string"]} for e in announced if "string" in e))
    assert options_from_environment(env) == (Options(), [], [])


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\n", True),
        ('{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob"}', True),
        ("kind: 'mpijob'\n", True),
        ("apiVersion: v1\nkind: ConfigMap\n", False),
        ("kind: MPIJobs\n", False),
        ("kind: TrainingRuntime\n", False),
    ],
)
def test_discovery_looks_for_a_job_kind(text: str, found: bool) -> None:
    assert names_a_job(text) is found
