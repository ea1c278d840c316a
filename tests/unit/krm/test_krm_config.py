"""The KRM function's options: a ConfigMap `functionConfig` (kpt's `-- key=value`, a Kptfile's `configMap:`)
or mpigen's kustomize transformer config (`Compile`, options under `spec`) sets render options for every job,
under the option table's names; a job's own `mpigen.dev/*` annotation wins; a key refused is an error result
naming it, the items unchanged, exit 1."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from jobs import job_yaml, load

import mpigen
from mpigen.krm import protocol
from mpigen.krm.config import function_options
from mpigen.options import OPTION_TABLE, Options
from tools import function_executable


def config_map(data: dict[str, Any]) -> dict[str, Any]:
    # As kpt v1.0.0-beta.49 writes `kpt fn eval IMAGE -- key=value` (internal/fnruntime/utils.go: NewConfigMap).
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "function-input", "annotations": {"config.kubernetes.io/local-config": "true"}},
        "data": data,
    }


def compile_config(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "mpigen.dev/v1", "kind": "Compile", "metadata": {"name": "mpigen"}, "spec": spec}


def resource_list(items: list[dict[str, Any]], config: dict[str, Any]) -> bytes:
    document = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items}
    document["functionConfig"] = config
    return yaml.safe_dump(document, sort_keys=False).encode()


def run(items: list[dict[str, Any]], config: dict[str, Any]) -> tuple[dict[str, Any], int, list[str]]:
    output, outcome = protocol.process_resource_list(resource_list(items, config))
    return yaml.safe_load(output), outcome.exit_code, outcome.lines()


def train(annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return load(job_yaml(name="train", annotations=annotations))


@pytest.mark.parametrize("make", [config_map, compile_config], ids=["ConfigMap", "Compile"])
def test_a_function_config_sets_the_options_of_every_job(make: Any) -> None:
    jobs = [train(), load(job_yaml(name="other"))]
    output, code, lines = run(jobs, make({"target": "jobset", "namespace": "ml", "wait-timeout": "30"}))
    assert code == 0
    # the jobset target's own warning, once per job: the option reached both
    assert [line.split(": ")[1:3] for line in lines] == [
        ["MPIJob/train", "warning"],
        ["MPIJob/other", "warning"],
    ]
    options = Options(target="jobset", namespace="ml", wait_timeout_seconds=30)
    expected = [obj for job in jobs for obj in mpigen.compile(job, options)]
    assert output["items"] == expected
    assert "JobSet" in {item["kind"] for item in output["items"]}
    # The config is kpt's or kustomize's, not a job: it comes back as given.
    assert output["functionConfig"] == make({"target": "jobset", "namespace": "ml", "wait-timeout": "30"})


def test_a_jobs_own_annotation_wins_over_the_function_config() -> None:
    pinned = train({"mpigen.dev/target": "operator"})
    output, code, _ = run([pinned, load(job_yaml(name="other"))], config_map({"target": "jobset"}))
    assert code == 0
    expected = mpigen.compile(pinned) + mpigen.compile(load(job_yaml(name="other")), Options(target="jobset"))
    assert output["items"] == expected
    kinds = [item["kind"] for item in output["items"]]
    assert "StatefulSet" in kinds and "JobSet" in kinds


def test_every_option_of_the_table_is_a_key() -> None:
    # One value each that the option's flag takes; a key the table gains without a value here fails.
    values = {
        "namespace": "ml",
        "gpus-per-node": "4",
        "processing-units-per-node": "2",
        "processing-resource-type": "cpu",
        "kubectl-delivery-image": "example.com/kubectl:1",
        "wait-timeout": "30",
        "gang-scheduler": "volcano",
        "kube-version": "1.30",
        "validate": "false",
        "scheduler-name": "my-scheduler",
        "cluster-domain": "cluster.local",
        "ssh-secret": "keys",
        "network-policy": "same-job",
        "target": "jobset",
        "queue": "q",
        "priority-class": "high",
        "topology": "required:rack",
        "free-disruptions": "false",
    }
    assert sorted(values) == sorted(spec.flag for spec in OPTION_TABLE)
    options, issues = function_options(config_map(values))
    assert issues == []
    for spec in OPTION_TABLE:
        assert getattr(options, spec.field) != getattr(Options(), spec.field), spec.flag


@pytest.mark.parametrize(
    ("data", "path", "words"),
    [
        ({"tagret": "jobset"}, "data.tagret", 'unknown mpigen option "tagret" (did you mean "target"?)'),
        ({"target": "kubeflow"}, "data.target", "must be one of operator"),
        ({"wait-timeout": "0"}, "data.wait-timeout", "expected a whole number >= 1"),
        ({"scheduler-name": "mine"}, "data.scheduler-name", "needs gang-scheduler"),
    ],
)
def test_a_key_refused_is_an_error_result_naming_it_and_nothing_changes(
    data: dict[str, str], path: str, words: str
) -> None:
    items = [train()]
    output, code, lines = run(items, config_map(data))
    assert code == 1
    assert output["items"] == items
    (result,) = output["results"]
    assert result["severity"] == "error"
    assert result["field"] == {"path": path}
    assert words in result["message"]
    assert result["resourceRef"] == {"apiVersion": "v1", "kind": "ConfigMap", "name": "function-input"}
    assert lines == [f"functionConfig: ConfigMap/function-input: {path}: {result['message']}"]


def test_a_refused_config_is_an_error_even_without_jobs() -> None:
    other = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other"}, "data": {"a": "b"}}
    output, code, _ = run([other], compile_config({"targte": "jobset"}))
    assert code == 1
    assert output["items"] == [other]
    assert output["results"][0]["field"] == {"path": "spec.targte"}


@pytest.mark.parametrize(
    ("config", "path", "words"),
    [
        (compile_config({"validate": False}), "spec.validate", "expected a string (quote it"),
        (config_map({"wait-timeout": 30}), "data.wait-timeout", "got int"),
        ({**compile_config({}), "spec": ["target=jobset"]}, "spec", "expected a mapping"),
    ],
)
def test_values_that_are_not_strings_are_refused(config: dict[str, Any], path: str, words: str) -> None:
    output, code, _ = run([train()], config)
    assert code == 1
    assert output["results"][0]["field"] == {"path": path}
    assert words in output["results"][0]["message"]


def test_other_function_configs_set_no_option() -> None:
    foreign = {
        "apiVersion": "example.com/v1",
        "kind": "Settings",
        "metadata": {"name": "x"},
        "data": {"a": "b"},
    }
    output, code, _ = run([train()], foreign)
    assert code == 0
    assert output["items"] == mpigen.compile(train())
    assert output["functionConfig"] == foreign


def test_an_empty_config_map_sets_nothing() -> None:
    output, code, _ = run([train()], {**config_map({}), "data": None})
    assert code == 0
    assert output["items"] == mpigen.compile(train())


def test_an_option_off_the_jobs_target_is_refused_per_job_as_the_flag_is() -> None:
    # queue means something on the jobset target only: the job on the default target is refused, the job
    # whose annotation picks jobset takes the queue.
    on_jobset = load(job_yaml(name="other", annotations={"mpigen.dev/target": "jobset"}))
    output, code, lines = run([train(), on_jobset], config_map({"queue": "team-a"}))
    assert code == 1
    assert output["items"] == [train(), on_jobset]
    errors = [line for line in lines if "warning:" not in line]
    assert errors == [
        line
        for line in lines
        if line.startswith("items[0]: MPIJob/train: --queue (mpigen.dev/queue) is refused")
    ]
    assert len(errors) == 1


# kustomize runs the transformer with its config as the functionConfig ------------------------------------


def kustomization(directory: Path, spec: dict[str, str]) -> Path:
    (directory / "job.yaml").write_text(job_yaml(name="train"))
    config = compile_config(spec)
    function = f"exec:\n  path: {function_executable(directory)}\n"
    config["metadata"]["annotations"] = {"config.kubernetes.io/function": function}
    (directory / "mpigen.yaml").write_text(yaml.safe_dump(config))
    (directory / "kustomization.yaml").write_text(
        "resources:\n- job.yaml\ntransformers:\n- mpigen.yaml\nsortOptions:\n  order: fifo\n"
    )
    return directory


def kustomize_build(kustomize_binary: str, directory: Path) -> subprocess.CompletedProcess[str]:
    argv = [kustomize_binary, "build", "--enable-alpha-plugins", "--enable-exec", str(directory)]
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)


def test_kustomize_passes_the_compile_configs_spec_as_options(kustomize_binary: str, tmp_path: Path) -> None:
    done = kustomize_build(kustomize_binary, kustomization(tmp_path, {"target": "jobset", "queue": "team-a"}))
    assert done.returncode == 0, done.stderr
    expected = mpigen.compile(train(), Options(target="jobset", queue="team-a"))
    assert list(yaml.safe_load_all(done.stdout)) == expected


def test_kustomize_fails_on_a_compile_config_key_refused(kustomize_binary: str, tmp_path: Path) -> None:
    done = kustomize_build(kustomize_binary, kustomization(tmp_path, {"targte": "jobset"}))
    assert done.returncode != 0
    assert "spec.targte: unknown mpigen option" in done.stderr
    assert done.stdout == ""
