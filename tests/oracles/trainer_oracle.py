"""Kubeflow Trainer's own code as a test oracle: what its TrainJob controller would create for a TrainJob.

`tests/oracles/trainer/` is a small Go program over the Trainer module pinned in its go.mod (its runtime
framework with the MPI, JobSet and CoScheduling plugins, run over a fake client; see main.go). The suite
builds it with tests/cluster/gotools.py (`trainer-oracle`, keyed by a hash of its sources). Trainer's CRDs
and shipped runtimes are read from that module in the Go module cache, never from a copy in this
repository.

    objects = run([train_job, runtime])    # the dicts Trainer's controller would apply, sorted per TrainJob

A refused input raises OracleRefused with the oracle's one-line message.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from cluster import gotools

SOURCE = Path(__file__).resolve().parent / "trainer"
MODULE = "github.com/kubeflow/trainer/v2"

Obj = dict[str, Any]


class OracleRefused(Exception):
    """The oracle refused the input (as Trainer's webhook or controller would): its stderr."""


def version() -> str:
    """The Trainer version the oracle's go.mod pins."""
    found = re.search(
        rf"^\s*(?:require\s+)?{re.escape(MODULE)}\s+(v\S+)", (SOURCE / "go.mod").read_text(), re.MULTILINE
    )
    assert found, f"{MODULE} is not required in {SOURCE / 'go.mod'}"
    return found.group(1)


def binary() -> str:
    """The built oracle (skips where `go` is missing, fails when the build fails)."""
    path: str = gotools.require("trainer-oracle")
    return path


def module_dir() -> Path:
    """The pinned Trainer module in the Go module cache (`go mod download`, which fetches it from the
    module proxy where the cache lacks it: a test may read it before any test built the oracle)."""
    import pytest

    try:
        return gotools.download(MODULE, version())
    except gotools.Unavailable as why:
        pytest.skip(str(why))
    except gotools.BuildFailed as why:
        pytest.fail(str(why), pytrace=False)


def shipped(relative: str) -> list[Obj]:
    """The documents of one file of the pinned Trainer module, e.g. manifests/base/runtimes/mpi_distributed.yaml."""
    return [doc for doc in yaml.safe_load_all((module_dir() / relative).read_text()) if doc]


def run(documents: Iterable[Obj]) -> list[Obj]:
    """The objects Trainer would create for every TrainJob among `documents` (with their runtimes)."""
    oracle = binary()
    stream = "".join("---\n" + json.dumps(doc) + "\n" for doc in documents)
    done = subprocess.run(
        [oracle, "--crds", str(module_dir() / "manifests" / "base" / "crds")],
        input=stream,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode == 1:
        raise OracleRefused(done.stderr.strip())
    if done.returncode != 0:
        raise AssertionError(f"trainer-oracle failed ({done.returncode}): {done.stderr}")
    listed = json.loads(done.stdout)
    assert listed["kind"] == "List", listed
    items: list[Obj] = listed["items"]
    return items
