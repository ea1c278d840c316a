"""Server-side apply (what Flux and Argo CD's ServerSideApply use) takes the custom resources mpigen renders
from the shipped examples whose templates hold a null (`command:` with nothing after it), and refuses the
same Volcano Job with the null put back (what mpigen wrote before issue #39)."""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path
from typing import Any

import pytest
import pythons
import yaml
from controlplane import Cluster
from mpijobs import manifest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ["examples/v2beta1/pi-mpich.yaml", "examples/v2beta1/pi-intel.yaml"]


def rendered(example: str, target: str, namespace: str) -> list[dict[str, Any]]:
    done = subprocess.run(
        [*pythons.mpigen_argv(), "render", "--target", target, "--namespace", namespace, str(ROOT / example)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [obj for obj in yaml.safe_load_all(done.stdout) if obj]


def server_side(cluster: Cluster, objects: list[dict[str, Any]], namespace: str) -> Any:
    return cluster.kubectl(
        "apply",
        "--server-side",
        "--dry-run=server",
        "--field-manager=mpigen-tests",
        "-n",
        namespace,
        "-f",
        "-",
        input=manifest(objects),
        check=False,
    )


@pytest.mark.parametrize("target", ["volcano", "jobset"])
@pytest.mark.parametrize("example", EXAMPLES)
def test_server_side_apply_takes_the_custom_resources(
    cluster: Cluster, namespace: str, example: str, target: str
) -> None:
    objects = rendered(example, target, namespace)
    custom = [
        o
        for o in objects
        if o["kind"] in ("Job", "JobSet") and "/" in o["apiVersion"] and "batch/" not in o["apiVersion"]
    ]
    assert custom
    done = server_side(cluster, custom, namespace)
    assert done.returncode == 0, done.stderr


def test_server_side_apply_refuses_a_volcano_job_with_a_null(cluster: Cluster, namespace: str) -> None:
    objects = rendered(EXAMPLES[0], "volcano", namespace)
    (job,) = [o for o in objects if o["apiVersion"].startswith("batch.volcano.sh/")]
    with_null = copy.deepcopy(job)
    worker = next(t for t in with_null["spec"]["tasks"] if t["name"] == "worker")
    worker["template"]["spec"]["containers"][0]["command"] = None
    done = server_side(cluster, [with_null], namespace)
    assert done.returncode != 0 and "null" in done.stderr.lower(), done.stderr
