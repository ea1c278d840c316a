"""The sizes mpigen computes for what grows with the worker count, judged by the real API server: on every
run target, the ConfigMap and launcher Role of the largest job mpigen renders are applied with client-side
`kubectl apply` (which stores each object's JSON in its last-applied-configuration annotation), and those of
one worker more, which mpigen refuses, are refused by the server too (annotations over 256 KiB); the same for
a TrainJob's hostfile ConfigMap at the largest numNodes mpigen renders and one node more."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from controlplane import Cluster
from jobs import V1ALPHA2, V2BETA1, make_job
from mpijobs import manifest

from mpigen import names
from mpigen.compiler import build_objects, compile_job, plan_job
from mpigen.errors import CompileError
from mpigen.inputs import train_front_for
from mpigen.options import Options
from mpigen.pipeline import collect_runtimes
from mpigen.targets.jobset import trainjob
from mpigen.yaml.load import load_documents


def grown(version: str, target: str, namespace: str, workers: int) -> list[dict[str, Any]]:
    """The job's ConfigMap and launcher Role at `workers`, built without mpigen's size check."""
    plan, options = plan_job(make_job(version, workers=2, namespace=namespace), Options(target=target))
    objects = build_objects(plan.replace(workers=workers), options)
    keep = {("ConfigMap", names.config_map(plan.name)), ("Role", names.launcher(plan.name))}
    return [o for o in objects if (o["kind"], o["metadata"]["name"]) in keep]


def largest_rendered(version: str, target: str, namespace: str) -> int:
    with pytest.raises(CompileError) as refused:
        plan_job(make_job(version, workers=30_000, namespace=namespace), Options(target=target))
    fits = int(str(refused.value).split("the largest job that fits has ")[1].split(" ")[0].replace(",", ""))
    plan_job(make_job(version, workers=fits, namespace=namespace), Options(target=target))  # renders
    with pytest.raises(CompileError, match="last-applied-configuration"):
        plan_job(make_job(version, workers=fits + 1, namespace=namespace), Options(target=target))
    return fits


@pytest.mark.parametrize("target", ["operator", "jobset", "volcano"])
@pytest.mark.parametrize("version", [V1ALPHA2, V2BETA1])
def test_client_side_apply_takes_the_largest_job_and_refuses_one_worker_more(
    cluster: Cluster, namespace: str, version: str, target: str
) -> None:
    fits = largest_rendered(version, target, namespace)
    done = cluster.kubectl(
        "apply", "-f", "-", input=manifest(grown(version, target, namespace, fits)), check=False
    )
    assert done.returncode == 0, done.stderr
    cluster.kubectl("delete", "configmap,role", "--all", "-n", namespace, "--wait=true")
    over = manifest(grown(version, target, namespace, fits + 1))
    done = cluster.kubectl("apply", "-f", "-", input=over, check=False)
    assert done.returncode != 0 and "262144" in done.stderr, done.stderr[-2000:]
    # What mpigen counts is only the annotation: the same objects go in without it.
    cluster.kubectl("delete", "configmap,role", "--all", "-n", namespace, "--wait=true")
    assert cluster.kubectl("create", "-f", "-", input=over, check=False).returncode == 0


TRAINJOB_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "trainjob"


def trainjob_hostfile(namespace: str, nodes: int) -> tuple[dict[str, Any], str | None]:
    """The example TrainJob's hostfile ConfigMap at `nodes`, built without mpigen's size check, and what
    mpigen says of the TrainJob at that count (None: it renders)."""
    documents = [
        (str(path), load_documents(path.read_text(), str(path)))
        for path in sorted(TRAINJOB_EXAMPLE.glob("*.yaml"))
    ]
    runtimes, _ = collect_runtimes(documents, Options())
    [job] = [
        json.loads(json.dumps(d.data)) for _, docs in documents for d in docs if d.data["kind"] == "TrainJob"
    ]
    job["metadata"]["namespace"] = namespace
    job["spec"]["trainer"]["numNodes"] = nodes
    front = train_front_for(job)
    assert front is not None and runtimes is not None
    hostfile = trainjob.build_hostfile(front(job, runtimes, Options(target="jobset")))
    try:
        compile_job(job, Options(), runtimes)
    except CompileError as refused:
        return hostfile, str(refused)
    return hostfile, None


def test_client_side_apply_takes_the_largest_trainjob_hostfile_and_refuses_one_node_more(
    cluster: Cluster, namespace: str
) -> None:
    _, said = trainjob_hostfile(namespace, 30_000)
    assert said is not None
    fits = int(said.split("the largest numNodes that fits is ")[1].split(" ")[0].replace(",", ""))
    largest, said = trainjob_hostfile(namespace, fits)
    assert said is None
    done = cluster.kubectl("apply", "-f", "-", input=manifest([largest]), check=False)
    assert done.returncode == 0, done.stderr
    cluster.kubectl("delete", "configmap", "--all", "-n", namespace, "--wait=true")
    over, said = trainjob_hostfile(namespace, fits + 1)
    assert said is not None and "last-applied-configuration" in said
    done = cluster.kubectl("apply", "-f", "-", input=manifest([over]), check=False)
    assert done.returncode != 0 and "262144" in done.stderr, done.stderr[-2000:]
    assert cluster.kubectl("create", "-f", "-", input=manifest([over]), check=False).returncode == 0
