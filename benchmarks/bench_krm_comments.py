"""Benchmark: the KRM function on a 16 MiB ResourceList with 200,000 comment lines, in kyaml's layout
(items at column 0) and in the wider ones other writers use (items indented by 2 or 4, as go-yaml v3
writes them).

100 v2beta1 MPIJobs, each item with 2,000 comment lines among its own lines, and as many passed-through
ConfigMaps. Each run is a new process, as kustomize and kpt run the function. Printed: wall time (the best
of `--repeat` runs), the size and the comment lines. Target (issue #22): every layout within seconds,
time linear in the comment lines (the whole-list round trip, which other layouts took before, needed
minutes).

    python benchmarks/bench_krm_comments.py [--comments 200000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

JOB = """\
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: pi-{n}
spec:
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: launcher
            image: mpioperator/mpi-pi:openmpi
            command: [mpirun, /home/mpiuser/pi]
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: worker
            image: mpioperator/mpi-pi:openmpi
"""
SETTINGS = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings-{n}
data:
  mode: '0123'
"""


def item(text: str, indent: int, comments: int) -> str:
    lines = text.splitlines()
    per_line = comments // (len(lines) - 1)
    note = " " * (indent + 2) + "# " + "a comment that explains the line above it, as people write them in their manifests"
    out = [" " * indent + "- " + lines[0]]
    for line in lines[1:]:
        out.append(" " * (indent + 2) + line)
        out.extend([note] * per_line)
    return "\n".join(out) + "\n"


def resource_list(indent: int, comments: int, jobs: int = 100) -> str:
    per_item = comments // (2 * jobs)
    items = "".join(item(JOB.format(n=n), indent, per_item) + item(SETTINGS.format(n=n), indent, per_item) for n in range(jobs))
    return "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + items


def run(path: Path) -> float:
    started = time.perf_counter()
    with path.open("rb") as stdin:
        done = subprocess.run([sys.executable, "-m", "mpigen", "krm"], stdin=stdin, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"mpigen krm exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--comments", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        for indent in (0, 2, 4):
            text = resource_list(indent, args.comments)
            path = Path(directory) / f"list-{indent}.yaml"
            path.write_text(text)
            seconds = min(run(path) for _ in range(args.repeat))
            comment_lines = sum(1 for line in text.splitlines() if line.lstrip().startswith("#"))
            print(f"items indented {indent}: {len(text) / 2**20:5.1f} MiB, {comment_lines:,} comment lines: {seconds:6.2f} s")


if __name__ == "__main__":
    main()
