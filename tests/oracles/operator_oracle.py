"""The MPI operators' own controllers as test oracles: what mpi-operator v0.8.2 (kubeflow.org/v2beta1),
the training-operator v1.9.3 (kubeflow.org/v1) and mpi-operator v0.3.0 (kubeflow.org/v1alpha2) would
create for one MPIJob.

`tests/oracles/v2beta1/`, `tests/oracles/v1/` and `tests/oracles/v1alpha2/` are small Go programs over the
operator module pinned in their go.mod: each runs the operator's own controller over fake clients and
plays the cluster's part (pods become Running and Ready, a Volcano PodGroup Inqueue) until the controller
has created everything (see their main.go). The suite builds them with tests/cluster/gotools.py
(`v2beta1-oracle`, `v1-oracle`, `v1alpha2-oracle`, keyed by a hash of their sources).

    objects = run("kubeflow.org/v2beta1", job, gang="volcano")   # the dicts the operator would create

A job the operator refuses (its validation, reported as an event) raises OracleRefused with the
oracle's one-line message. A job the operator leaves to another controller (`managedBy`) gives [].
`as_stored(api_version, objects)` gives mpigen's objects as the API server stores them, in the oracle's
spelling (its `--canonical`), so that the two sides compare field by field. The v1alpha2 oracle's
k8s.io/api (v0.15) lacks fields mpigen writes (`seccompProfile`), so its side's canonical form is the
v2beta1 oracle's (`CANONICAL`): both encode the same typed objects alike.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

from cluster import gotools

Obj = dict[str, Any]

# apiVersion -> (tool, the flag naming the gang scheduler, the operator it runs)
TOOLS = {
    "kubeflow.org/v2beta1": ("v2beta1-oracle", "--gang-scheduling-name", "mpi-operator v0.8.2"),
    "kubeflow.org/v1": ("v1-oracle", "--gang-scheduler-name", "training-operator v1.9.3"),
    "kubeflow.org/v1alpha2": ("v1alpha2-oracle", "--gang-scheduling", "mpi-operator v0.3.0"),
}
# apiVersion -> the oracle whose --canonical spells mpigen's objects (default: the apiVersion's own)
CANONICAL = {"kubeflow.org/v1alpha2": "kubeflow.org/v2beta1"}


class OracleRefused(Exception):
    """The operator refused the job (its validation): the oracle's stderr."""


def binary(api_version: str) -> str:
    """The built oracle (skips where `go` is missing, fails when the build fails)."""
    path: str = gotools.require(TOOLS[api_version][0])
    return path


def run(api_version: str, job: Obj, gang: str | None = None, extra: tuple[str, ...] = ()) -> list[Obj]:
    """The objects the operator of `api_version` creates for `job`, sorted by kind and name.
    `gang`: the operator's gang scheduler flag (volcano, or a scheduler-plugins scheduler name)."""
    tool, gang_flag, _ = TOOLS[api_version]
    args = [binary(api_version), *extra]
    if gang:
        args += [gang_flag, gang]
    done = subprocess.run(
        args,
        input=json.dumps(job, ensure_ascii=False),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    if done.returncode == 1:
        raise OracleRefused(done.stderr.strip())
    if done.returncode != 0:
        raise AssertionError(f"{tool} failed ({done.returncode}): {done.stderr}")
    listed = json.loads(done.stdout)
    assert listed["kind"] == "List", listed
    items: list[Obj] = listed["items"]
    return items


def as_stored(api_version: str, objects: list[Obj]) -> list[Obj]:
    """`objects` (mpigen's) as the API server stores them, in the oracle's spelling: each decoded into its
    Go type and encoded again (quantities canonical, empty and false fields the type omits left out; a
    field the type lacks fails the oracle rather than vanish)."""
    api_version = CANONICAL.get(api_version, api_version)
    tool = TOOLS[api_version][0]
    listed = json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}, ensure_ascii=False)
    done = subprocess.run(
        [binary(api_version), "--canonical"],
        input=listed,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"{tool} --canonical failed ({done.returncode}): {done.stderr}")
    items: list[Obj] = json.loads(done.stdout)["items"]
    return items
