"""Every run target computes the size of what grows with the worker count (the ConfigMap's data, the
launcher Role, and the annotation client-side `kubectl apply` adds to both) exactly as the built objects
measure, without building them; a huge worker count is refused in constant time and memory on every
target, through `render` and the KRM function. tests/cluster/test_sizes.py sends the objects at the
computed limits to the real API server."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

import pytest
import pythons
from jobs import V1, V1ALPHA1, V1ALPHA2, V2BETA1, make_job

from mpigen import names
from mpigen.checks import objectsize
from mpigen.compiler import build_objects, plan_job
from mpigen.errors import CompileError
from mpigen.options import Options
from mpigen.targets.jobset import sizes as jobset_sizes
from mpigen.targets.operator import limits
from mpigen.targets.shared import sizes
from mpigen.targets.volcano import limits as volcano_limits

TARGETS = ("operator", "jobset", "volcano")


def jobs() -> dict[str, dict[str, Any]]:
    """A job of each version: kubectl exec and SSH, discover_hosts.sh (v1, v2beta1 with Horovod's
    `slots`), a launcher that is a host (v1 GPU launcher), a namespace and none."""
    gpu = make_job(V1)
    gpu["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["resources"] = {
        "limits": {"nvidia.com/gpu": 1}
    }
    return {
        "v1alpha1": make_job(V1ALPHA1, workers=2),
        "v1alpha2": make_job(V1ALPHA2),
        "v1alpha2-no-namespace": make_job(V1ALPHA2, namespace=None),
        "v1": make_job(V1),
        "v1-gpu-launcher": gpu,
        "v2beta1": make_job(V2BETA1),
        "v2beta1-intel": make_job(V2BETA1, mpiImplementation="Intel"),
    }


def go_json(value: Any) -> str:
    """JSON as Go's encoding/json writes it (kubectl's last-applied annotation): compact, HTML-escaped."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e")):
        text = text.replace(char, escaped)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def measured(obj: dict[str, Any]) -> tuple[int, int]:
    """(ConfigMap data bytes or Role JSON bytes, annotation bytes after client-side apply) of a built object."""
    if obj["kind"] == "ConfigMap":
        data = sum(len(k) + len(v.encode()) for k, v in obj["data"].items())
    else:
        data = len(json.dumps(obj, separators=(",", ":")).encode())
    own = obj["metadata"].get("annotations") or {}
    applied = sum(len(k) + len(v.encode()) for k, v in own.items())
    # kubectl encodes the object with an empty annotations map where it has none (GetModifiedConfiguration).
    encoded = {**obj, "metadata": {**obj["metadata"], "annotations": own}}
    applied += len(objectsize.LAST_APPLIED) + len((go_json(encoded) + "\n").encode())
    return data, applied


def computed(target: str, kind: str, plan: Any, options: Options, workers: int) -> tuple[int, int]:
    if kind == "Role":
        role = sizes.role_bytes(plan, workers)
        return role, len(objectsize.LAST_APPLIED) + role + len('"annotations":{},') + 1
    if target == "operator":
        return (
            limits.SIZES.config_map_bytes(plan, options, workers),
            limits.SIZES.config_map_applied_bytes(plan, options, workers),
        )
    if target == "volcano":
        return (
            volcano_limits.SIZES.config_map_bytes(plan, options, workers),
            volcano_limits.SIZES.config_map_applied_bytes(plan, options, workers),
        )
    scripts = jobset_sizes._scripts(plan)
    return (
        jobset_sizes.config_map_bytes(plan, scripts, workers),
        jobset_sizes.config_map_applied_bytes(plan, scripts, workers),
    )


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", sorted(jobs()))
def test_computed_sizes_equal_the_built_objects(case: str, target: str) -> None:
    options = Options(target=target)
    plan, options = plan_job(jobs()[case], options)
    for workers in (1, 9, 10, 11, 99, 100, 101, 1234):
        sized = plan.replace(workers=workers)
        objects = build_objects(sized, options)
        grown = [
            o
            for o in objects
            if (o["kind"], o["metadata"]["name"])
            in {("ConfigMap", names.config_map(plan.name)), ("Role", names.launcher(plan.name))}
        ]
        assert grown
        for obj in grown:
            if obj["kind"] == "Role" and target == "jobset":
                continue  # no resourceNames: it does not grow
            assert computed(target, obj["kind"], sized, options, workers) == measured(obj), (
                obj["kind"],
                workers,
            )


def fits_of(message: str) -> int:
    return int(message.split("the largest job that fits has ")[1].split(" ")[0].replace(",", ""))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("version", [V1ALPHA2, V2BETA1])
def test_every_target_refuses_the_first_count_whose_annotation_does_not_fit(
    version: str, target: str
) -> None:
    with pytest.raises(CompileError) as too_many:
        plan_job(make_job(version, workers=30_000), Options(target=target))
    fits = fits_of(str(too_many.value))
    plan, options = plan_job(make_job(version, workers=fits), Options(target=target))
    objects = build_objects(plan, options)
    largest = max(measured(o)[1] for o in objects if o["kind"] in ("ConfigMap", "Role"))
    assert largest <= objectsize.ANNOTATIONS_MAX_BYTES
    with pytest.raises(CompileError, match="last-applied-configuration annotation"):
        plan_job(make_job(version, workers=fits + 1), Options(target=target))


LIMITED = """
import resource, subprocess, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
sys.exit(subprocess.run(sys.argv[1:]).returncode)
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "job",
    [
        make_job(V1ALPHA2, workers=2**31 - 1),
        make_job(V2BETA1, workers=2**31 - 1),
        make_job(V1ALPHA1, workers=None, gpus=2**31 - 8),
    ],
    ids=["v1alpha2", "v2beta1", "v1alpha1-gpus"],
)
@pytest.mark.parametrize("entry", ["render", "krm"])
def test_a_huge_worker_count_is_refused_at_once_within_a_gibibyte(
    job: dict[str, Any], target: str, entry: str, tmp_path: Any
) -> None:
    job["metadata"]["annotations"] = {"mpigen.dev/target": target}  # what the KRM function reads
    text = json.dumps(job)
    argv = [*pythons.mpigen_argv(), "render", "-"]
    if entry == "krm":
        text = json.dumps({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": [job]})
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
    assert "do not fit" in done.stdout + done.stderr, done.stdout[-2000:] + done.stderr[-2000:]
    assert "MemoryError" not in done.stderr and "Traceback" not in done.stderr
    assert done.returncode == 1 and seconds < 30, (done.returncode, seconds)
