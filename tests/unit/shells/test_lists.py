"""Jobs inside Kubernetes lists (`kind: List`, `MPIJobList`, lists in lists) are compiled or refused as
top-level ones by render, validate and the KRM function, as kubectl creates a list item by item; a list
without a job passes through untouched; mpigen reads back its own `convert -o json` output."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from jobs import V1ALPHA2, V2BETA1, make_job, to_yaml

from mpigen.cli import cli
from mpigen.shells.krm import run_function

CONFIG = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other", "namespace": "ml"}}


def a_list(*items: Any, kind: str = "List", api_version: str = "v1") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "items": list(items)}


def invoke(*args: str, text: str) -> Any:
    return CliRunner().invoke(cli, list(args), input=text, catch_exceptions=False)


def rendered(text: str) -> str:
    result = invoke("render", "-", text=text)
    assert result.exit_code == 0, result.stderr
    return result.stdout


LISTS = {
    "List": lambda job: a_list(job, CONFIG),
    "MPIJobList": lambda job: a_list(job, CONFIG, kind="MPIJobList", api_version=V1ALPHA2),
    "nested": lambda job: a_list(a_list(job), CONFIG),
}


@pytest.mark.parametrize("shape", sorted(LISTS))
def test_render_compiles_a_job_inside_a_list_as_a_top_level_one(shape: str) -> None:
    job = make_job(V2BETA1)
    top_level = rendered(to_yaml(job) + "---\n" + to_yaml(CONFIG))
    assert rendered(to_yaml(LISTS[shape](job))) == top_level
    assert "kind: MPIJob" not in top_level


@pytest.mark.parametrize("shape", sorted(LISTS))
@pytest.mark.parametrize("command", ["render", "validate"])
def test_a_bad_job_inside_a_list_is_refused_by_name_with_nothing_printed(shape: str, command: str) -> None:
    job = make_job(V1ALPHA2, workers=-3)
    result = invoke(command, "-", text=to_yaml(LISTS[shape](job)))
    assert result.exit_code == 1
    assert "MPIJob/pi: spec.mpiReplicaSpecs.Worker.replicas:" in result.stderr + result.stdout
    if command == "render":
        assert result.stdout == ""


def test_a_list_without_a_job_passes_through_untouched() -> None:
    text = to_yaml(a_list(CONFIG, {**CONFIG, "metadata": {"name": "two"}}))
    assert yaml.safe_load(rendered(text)) == yaml.safe_load(text)


def krm(items: list[Any]) -> tuple[int, dict[str, Any], str]:
    text = json.dumps({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items})
    stdout, stderr = io.BytesIO(), io.StringIO()
    code = run_function(io.BytesIO(text.encode()), stdout, stderr)
    return code, yaml.safe_load(stdout.getvalue()), stderr.getvalue()


@pytest.mark.parametrize("shape", sorted(LISTS))
def test_the_krm_function_compiles_a_job_inside_a_list_item(shape: str) -> None:
    job = make_job(V2BETA1)
    code, out, err = krm([LISTS[shape](job)])
    assert code == 0, err
    top_code, top, _ = krm([job, CONFIG])
    assert top_code == 0 and out["items"] == top["items"]


def test_the_krm_function_refuses_a_bad_job_inside_a_list_naming_the_job() -> None:
    original = [a_list(make_job(V1ALPHA2, workers=-3)), CONFIG]
    code, out, err = krm(original)
    assert code == 1 and out["items"] == original  # written back as given
    (result,) = [r for r in out["results"] if r["severity"] == "error"]
    assert result["resourceRef"]["kind"] == "MPIJob" and result["resourceRef"]["name"] == "pi"
    assert result["field"]["path"] == "spec.mpiReplicaSpecs.Worker.replicas"
    assert "MPIJob/pi" in err


@pytest.mark.parametrize("output", ["json", "yaml"])
def test_render_reads_converts_output_back(output: str) -> None:
    job = to_yaml(make_job(V2BETA1))
    converted = invoke("convert", "-o", output, "-", text=job)
    assert converted.exit_code == 0, converted.stderr
    assert "kind: TrainJob" not in rendered(converted.stdout)
    assert "kind: JobSet" in rendered(converted.stdout)
