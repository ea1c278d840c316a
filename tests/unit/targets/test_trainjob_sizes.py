"""A TrainJob's objects fit what the API server stores at every numNodes: the hostfile ConfigMap's size is
computed exactly as the built object measures (its data and the annotation client-side `kubectl apply`
adds), the largest numNodes named in the refusal fits and one more does not, a huge numNodes is refused
in constant time and memory through `render` and the KRM function, and a JobSet made too large by the
runtime's pod templates is refused naming the field."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import pythons

from mpigen.checks import objectsize
from mpigen.compiler import compile_job
from mpigen.errors import CompileError
from mpigen.inputs import train_front_for
from mpigen.options import Options
from mpigen.pipeline import collect_runtimes
from mpigen.targets.jobset import trainjob_sizes
from mpigen.yaml.load import load_documents

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "trainjob"


def _documents() -> tuple[dict[str, Any], dict[str, Any]]:
    """(the example's runtime, its TrainJob), as plain data."""
    found = {}
    for path in sorted(EXAMPLE.glob("*.yaml")):
        for doc in load_documents(path.read_text(), str(path)):
            found[doc.data["kind"]] = json.loads(json.dumps(doc.data))
    return found["ClusterTrainingRuntime"], found["TrainJob"]


def variants() -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """The example (launcher a host, no namespace); its launcher not a host; Intel MPI's `host:slots` with
    a namespace, 16 slots and a subdomain of the runtime's own."""
    runtime, job = _documents()
    apart = copy.deepcopy((runtime, job))
    apart[0]["spec"]["mlPolicy"]["mpi"]["runLauncherAsNode"] = False
    intel = copy.deepcopy((runtime, job))
    intel[0]["spec"]["mlPolicy"]["mpi"]["mpiImplementation"] = "Intel"
    intel[0]["spec"]["template"]["spec"]["network"]["subdomain"] = "hosts"
    intel[1]["metadata"]["namespace"] = "ml"
    intel[1]["spec"]["trainer"]["numProcPerNode"] = 16
    return {"example": (runtime, job), "launcher-apart": apart, "intel": intel}


def _with(pair: tuple[dict[str, Any], dict[str, Any]], nodes: int) -> tuple[dict[str, Any], dict[str, Any]]:
    runtime, job = copy.deepcopy(pair)
    job["spec"]["trainer"]["numNodes"] = nodes
    return runtime, job


def _compile(pair: tuple[dict[str, Any], dict[str, Any]]) -> list[dict[str, Any]]:
    runtime, job = pair
    runtimes, problems = collect_runtimes([("runtime.yaml", runtime_docs(runtime))], Options())
    assert problems == [] and runtimes is not None
    return compile_job(job, Options(), runtimes).objects


def runtime_docs(runtime: dict[str, Any]) -> list[Any]:
    return load_documents(json.dumps(runtime), "runtime.yaml")


def _plan(pair: tuple[dict[str, Any], dict[str, Any]]) -> Any:
    runtime, job = pair
    runtimes, _ = collect_runtimes([("runtime.yaml", runtime_docs(runtime))], Options())
    front = train_front_for(job)
    assert front is not None and runtimes is not None
    return front(job, runtimes, Options(target="jobset"))


def go_json(value: Any) -> str:
    """JSON as Go's encoding/json writes it (kubectl's last-applied annotation): compact, HTML-escaped."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e")):
        text = text.replace(char, escaped)
    return text


def measured(obj: dict[str, Any]) -> tuple[int, int]:
    """(the ConfigMap's data bytes, its annotations' bytes after client-side apply) of a built ConfigMap."""
    data = sum(len(k) + len(v.encode()) for k, v in obj["data"].items())
    own = obj["metadata"].get("annotations") or {}
    encoded = {**obj, "metadata": {**obj["metadata"], "annotations": own}}
    applied = sum(len(k) + len(v.encode()) for k, v in own.items())
    return data, applied + len(objectsize.LAST_APPLIED) + len((go_json(encoded) + "\n").encode())


def _hostfile(objects: list[dict[str, Any]]) -> dict[str, Any]:
    [found] = [
        o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("-mpi-hostfile")
    ]
    return found


@pytest.mark.parametrize("case", sorted(variants()))
def test_computed_sizes_equal_the_built_hostfile(case: str) -> None:
    for nodes in (1, 2, 9, 10, 11, 99, 100, 101, 1234):
        pair = _with(variants()[case], nodes)
        plan = _plan(pair)
        computed = (trainjob_sizes.config_map_bytes(plan), trainjob_sizes.config_map_applied_bytes(plan))
        assert computed == measured(_hostfile(_compile(pair))), (case, nodes)


def _fits(message: str) -> int:
    return int(message.split("the largest numNodes that fits is ")[1].split(" ")[0].replace(",", ""))


@pytest.mark.parametrize("case", sorted(variants()))
def test_the_largest_numnodes_named_fits_and_one_more_is_refused(case: str) -> None:
    with pytest.raises(CompileError) as too_many:
        _compile(_with(variants()[case], 30_000))
    [issue] = too_many.value.issues
    assert issue.path == ("spec", "trainer", "numNodes")
    assert "do not fit" in issue.message and "-mpi-hostfile" in issue.message
    fits = _fits(issue.message)
    data, applied = measured(_hostfile(_compile(_with(variants()[case], fits))))
    assert data <= 1024 * 1024 and applied <= objectsize.ANNOTATIONS_MAX_BYTES
    with pytest.raises(CompileError, match="last-applied-configuration annotation") as one_more:
        _compile(_with(variants()[case], fits + 1))
    assert _fits(one_more.value.issues[0].message) == fits


def test_a_hostfile_over_a_mebibyte_is_named_by_its_data() -> None:
    with pytest.raises(CompileError) as caught:
        _compile(_with(variants()["example"], 100_000))
    message = caught.value.issues[0].message
    assert "pi-trainjob-mpi-hostfile would be" in message and "over the 1 MiB a ConfigMap holds" in message


def test_a_jobset_made_too_large_by_the_runtime_is_refused_naming_the_field() -> None:
    runtime, job = _with(variants()["example"], 3)
    node = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    node["containers"][0]["args"].append("x" * 300_000)
    with pytest.raises(CompileError) as caught:
        _compile((runtime, job))
    [issue] = caught.value.issues
    assert issue.message.startswith("too large: the JobSet pi-trainjob would be ")
    assert "last-applied-configuration annotation" in issue.message
    assert "spec.replicatedJobs[0].template.spec.template.spec.containers[0].args" in issue.message
    # Over what etcd stores: named by that limit.
    node["containers"][0]["args"][-1] = "x" * 1_600_000
    with pytest.raises(CompileError, match=r"too large: the JobSet pi-trainjob .* \(1\.5 MiB\) etcd stores"):
        _compile((runtime, job))


LIMITED = """
import resource, subprocess, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
sys.exit(subprocess.run(sys.argv[1:]).returncode)
"""


@pytest.mark.parametrize("nodes", [2**31 - 1, 40_000])
@pytest.mark.parametrize("entry", ["render", "krm"])
def test_a_huge_numnodes_is_refused_at_once_within_a_gibibyte(nodes: int, entry: str) -> None:
    runtime, job = _with(variants()["example"], nodes)
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [runtime, job]})
    argv = [*pythons.mpigen_argv(), "render", "-"]
    if entry == "krm":
        text = json.dumps(
            {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": [runtime, job]}
        )
        argv = [*pythons.mpigen_argv(), "krm"]
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", LIMITED, *argv],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    seconds = time.monotonic() - start
    said = done.stdout + done.stderr
    assert f"{nodes:,} hosts do not fit" in said and "spec.trainer.numNodes" in said, said[-2000:]
    assert "MemoryError" not in done.stderr and "Traceback" not in done.stderr
    assert done.returncode == 1 and seconds < 30, (done.returncode, seconds)
    if entry == "render":
        assert done.stdout == ""


def test_a_runtime_whose_trainer_job_alone_passes_the_limit_is_said_to_fit_no_numnodes() -> None:
    """The example's launcher is a host (runLauncherAsNode) and its runtime's mlPolicy.numNodes gives that
    trainer job its pod count: no numNodes of the TrainJob makes such a hostfile fit."""
    runtime, job = _with(variants()["example"], 3)
    runtime["spec"]["mlPolicy"]["numNodes"] = 100_000
    with pytest.raises(CompileError) as caught:
        _compile((runtime, job))
    [issue] = caught.value.issues
    assert issue.path == ("spec", "trainer", "numNodes")
    assert issue.message.endswith(
        'no numNodes fits: the pods of ClusterTrainingRuntime "mpi-pi"\'s trainer job are hosts too'
    )
