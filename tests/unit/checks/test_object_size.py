"""Every built object fits what etcd stores (1.5 MiB) and the API server accepts (3 MiB a request):
a larger one is refused before anything is printed, with the field that makes it large."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from mpigen import CompileError, compile
from mpigen.checks.objectsize import json_size, largest_field, last_applied_bytes
from mpigen.cli import cli


def job(launcher: dict[str, Any], worker: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1alpha2",
        "kind": "MPIJob",
        "metadata": {"name": "a", "namespace": "ml"},
        "spec": {
            "mpiReplicaSpecs": {
                "Launcher": {"template": {"spec": launcher}},
                "Worker": {
                    "replicas": 1,
                    "template": {"spec": worker or {"containers": [{"name": "w", "image": "i"}]}},
                },
            }
        },
    }


def test_a_launcher_with_100000_containers_is_refused_at_its_containers() -> None:
    containers = [{"name": f"c{i}", "image": "i"} for i in range(100_000)]
    with pytest.raises(CompileError) as caught:
        compile(job({"containers": containers}))
    [issue] = caught.value.issues
    assert issue.path == ("spec", "mpiReplicaSpecs", "Launcher", "template", "spec", "containers")
    assert issue.message.startswith(
        "too large: the Job a-launcher would be 2,991,631 bytes, over the 1,572,864 (1.5 MiB) etcd stores per object"
    )
    assert issue.message.endswith("its spec.template.spec.containers holds 2,989,276 bytes (100,000 items)")


def test_a_large_worker_template_is_refused_through_render_with_nothing_printed() -> None:
    env = [{"name": f"V{i}", "value": "x" * 50_000} for i in range(40)]  # 2 MB of environment
    worker = {"containers": [{"name": "w", "image": "i", "env": env}]}
    text = yaml.safe_dump(job({"containers": [{"name": "l", "image": "i"}]}, worker))
    result = CliRunner().invoke(cli, ["render", "-"], input=text, catch_exceptions=False)
    assert (result.exit_code, result.stdout) == (1, "")
    where = "spec.mpiReplicaSpecs.Worker.template.spec.containers[0].env"
    assert result.stderr == (
        f"<stdin>: MPIJob/a: {where}: too large: the StatefulSet a-worker would be 2,002,141 bytes, over the "
        "1,572,864 (1.5 MiB) etcd stores per object (and the API server takes at most 3 MiB per request); "
        "its spec.template.spec.containers[0].env holds 2,001,031 bytes (40 items)\n"
    )


def test_an_object_just_under_the_annotation_limit_renders() -> None:
    """Client-side `kubectl apply` stores the object's JSON in an annotation (256 KiB at most)."""
    arg = "x" * (256 * 1024 - 3000)
    objects = compile(job({"containers": [{"name": "l", "image": "i", "args": [arg]}]}))
    launcher = next(
        obj for obj in objects if obj["kind"] == "Job" and obj["metadata"]["name"] == "a-launcher"
    )
    assert 256 * 1024 - 3000 < last_applied_bytes(launcher) <= 256 * 1024


def test_an_object_under_etcds_limit_but_over_the_annotation_limit_is_refused_at_its_field() -> None:
    arg = "x<&" * (300 * 1024 // 3)  # Go's JSON writes < and & as six bytes each
    with pytest.raises(CompileError) as caught:
        compile(job({"containers": [{"name": "l", "image": "i", "args": [arg]}]}))
    [issue] = caught.value.issues
    assert issue.path == (
        "spec",
        "mpiReplicaSpecs",
        "Launcher",
        "template",
        "spec",
        "containers",
        0,
        "args",
        0,
    )
    size = int(issue.message.split(" would be ")[1].split(" bytes")[0].replace(",", ""))
    # The argument alone: 102,400 times 1 + 6 + 6 bytes, and its quotes; the rest of the Job is small.
    assert 1_331_202 < size < 1_331_202 + 4000
    assert "with the last-applied-configuration annotation client-side `kubectl apply` adds" in issue.message
    assert "over the 262,144 (256 KiB) of annotations the API server accepts" in issue.message


def test_the_largest_field_stops_where_no_single_field_dominates() -> None:
    obj = {"spec": {"a": "x" * 10, "b": {"c": ["y" * 100, "z" * 100], "d": 1}}}
    path, size = largest_field(obj, json_size(obj))
    assert path == ("spec", "b", "c") and size == json_size(obj["spec"]["b"]["c"])
    one = {"spec": {"big": "x" * 1000, "small": 1}}
    assert largest_field(one, json_size(one)) == (("spec", "big"), 1002)
