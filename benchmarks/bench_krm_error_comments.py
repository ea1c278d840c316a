"""Benchmark: the KRM function's error path on a ResourceList with an error in a job and 200,000 comment
lines after its items (issue #39: 80 s before, when adding the results took ruamel.yaml's round trip of the
whole list; the success path had stopped taking it).

Each run is a new process, as kustomize and kpt run the function; it must exit 1 with the error in
`results`. Printed: wall time (the best of `--repeat` runs), the size and the comment lines. Target: within
seconds, linear in the comment lines. tests/unit/krm/test_krm_trust.py checks the same case's bytes.

    python benchmarks/bench_krm_error_comments.py [--comments 200000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEADER = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
JOB = """\
- apiVersion: kubeflow.org/v1alpha2
  kind: MPIJob
  metadata:
    name: pi
  spec:
    mpiReplicaSpecs:
      Launcher:
        replicas: 1
        template: {spec: {containers: [{name: launcher, image: mpioperator/mpi-pi:openmpi}]}}
      Worker:
        replicas: -3
        template: {spec: {containers: [{name: worker, image: mpioperator/mpi-pi:openmpi}]}}
"""


def resource_list(comments: int) -> str:
    note = "# a comment that explains the line above it, as people write them in their manifests\n"
    return HEADER + JOB + note * comments


def run(path: Path) -> float:
    started = time.perf_counter()
    with path.open("rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-m", "mpigen", "krm"], stdin=stdin, capture_output=True, check=False
        )
    elapsed = time.perf_counter() - started
    if done.returncode != 1 or b"must be >= 0" not in done.stdout:
        raise SystemExit(f"mpigen krm exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--comments", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        text = resource_list(args.comments)
        path = Path(directory) / "list.yaml"
        path.write_text(text)
        seconds = min(run(path) for _ in range(args.repeat))
        print(
            f"{len(text) / 2**20:5.1f} MiB, {args.comments:,} comment lines after the items: {seconds:6.2f} s"
        )


if __name__ == "__main__":
    main()
