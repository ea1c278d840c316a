"""Benchmark: the KRM function at scale, side by side with `mpigen render` of the same jobs.

For each size N, N v1alpha2 MPIJobs (4 workers, clean-up on: 11 objects each), each followed by a
ConfigMap with comments and values a YAML 1.1 reader would mistake (passed through), are given

- to `mpigen render` as one YAML stream;
- to `mpigen krm` as a ResourceList in kyaml's layout, with the path and index annotations kustomize
  and kpt add;
- to `mpigen krm` again, as its own output (already compiled: only passed through).

Each run is a new process, as kustomize and kpt run the function, so times include start-up. Printed:
wall time (the best of `--repeat` runs: the machine may be shared), the ratio to render, peak memory
(maximum resident set) and output size; the function's own output must come back byte for byte. Targets (issue #16): krm at most 1.2 x render at 1,000 jobs, krm
on its own output at most 0.5 x render, and times growing linearly up to 5,000 jobs.

    python benchmarks/bench_krm.py [--jobs 100,1000,5000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml


def job(index: int) -> dict[str, Any]:
    def pod(role: str, **fields: Any) -> dict[str, Any]:
        return {"spec": {"containers": [{"name": role, "image": "example.com/train:1.0", **fields}]}}

    return {
        "apiVersion": "kubeflow.org/v1alpha2",
        "kind": "MPIJob",
        "metadata": {"name": f"train-{index}", "namespace": "ml"},
        "spec": {
            "cleanPodPolicy": "All",
            "mpiReplicaSpecs": {
                "Launcher": {"template": pod("launcher", command=["mpirun", "python", "train.py"])},
                "Worker": {"replicas": 4, "template": pod("worker", resources={"limits": {"nvidia.com/gpu": 2}})},
            },
        },
    }


def settings(index: int) -> str:
    return f"""\
# settings of train-{index}
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings-{index} # read by the job's pods
  namespace: ml
data:
  # values a YAML 1.1 reader would not take as strings, unless quoted
  enabled: 'yes'
  mode: "0123"
  script: |
    echo "hello"
"""


def documents(count: int) -> list[str]:
    """The jobs and their ConfigMaps, as the YAML text of one document each."""
    return [text for index in range(count) for text in (yaml.safe_dump(job(index), sort_keys=False), settings(index))]


def as_item(document: str, path: str, index: int) -> str:
    """A document as an item in kyaml's layout, with kustomize's path and index annotations (comments
    above the object stay above the item)."""
    lines = document.rstrip("\n").split("\n")
    first = next(number for number, line in enumerate(lines) if not line.startswith("#"))
    meta = lines.index("metadata:")
    annotations = ["  annotations:", *(f"    {key}: '{value}'" for key, value in (
        ("config.kubernetes.io/path", path), ("config.kubernetes.io/index", index),
        ("internal.config.kubernetes.io/path", path), ("internal.config.kubernetes.io/index", index)))]
    lines[meta + 1 : meta + 1] = annotations
    body = lines[first:]
    return "\n".join([*lines[:first], "- " + body[0], *(f"  {line}" if line else line for line in body[1:])]) + "\n"


def resource_list(texts: list[str]) -> str:
    items = "".join(as_item(text, f"jobs/train-{number // 2}.yaml", number % 2) for number, text in enumerate(texts))
    return f"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{items}"


def run(argv: list[str], stdin: Path | None, stdout: Path) -> tuple[float, float]:
    """Run mpigen in a new process: wall seconds and peak resident MiB."""
    with open(stdout, "wb") as out, open(stdin or os.devnull, "rb") as into:
        start = time.perf_counter()
        process = subprocess.Popen([sys.executable, "-m", "mpigen", *argv], stdin=into, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        assert process.stderr is not None
        sys.exit(f"mpigen {' '.join(argv)} exited {process.returncode}: {process.stderr.read().decode()[:2000]}")
    return elapsed, usage.ru_maxrss / 1024


def best(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return min(seconds for seconds, _ in runs), max(peak for _, peak in runs)


def measure(count: int, directory: Path, repeat: int) -> dict[str, Any]:
    texts = documents(count)
    stream, listing = directory / f"render-{count}.yaml", directory / f"list-{count}.yaml"
    stream.write_text("---\n".join(texts))
    listing.write_text(resource_list(texts))
    output, again = directory / f"krm-{count}.yaml", directory / f"krm-again-{count}.yaml"
    runs: dict[str, list[tuple[float, float]]] = {"render": [], "krm": [], "own": []}
    for _ in range(repeat):  # in turns, so that a busier moment of the machine falls on all three
        runs["render"].append(run(["render", str(stream)], None, directory / f"render-{count}.out"))
        runs["krm"].append(run(["krm"], listing, output))
        runs["own"].append(run(["krm"], output, again))
    render, krm, own = best(runs["render"]), best(runs["krm"]), best(runs["own"])
    if output.read_bytes() != again.read_bytes():
        sys.exit(f"{count} jobs: the function changed its own output")
    return {"count": count, "render": render, "krm": krm, "own": own, "out": output.stat().st_size / 2**20,
            "in": listing.stat().st_size / 2**20}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", default="100,1000,5000", help="comma-separated job counts (default: 100,1000,5000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command; the best time counts (default: 3)")
    args = parser.parse_args()
    counts = [int(count) for count in args.jobs.split(",")]
    print(f"{'jobs':>6} {'objects':>8} {'render s':>9} {'krm s':>7} {'x render':>8} {'own s':>7} {'x render':>8}"
          f" {'in MiB':>7} {'out MiB':>8} {'peak MiB render/krm/own':>24}")
    with tempfile.TemporaryDirectory() as temp:
        for count in counts:
            row = measure(count, Path(temp), args.repeat)
            render, krm, own = row["render"], row["krm"], row["own"]
            print(f"{count:>6} {count * 12:>8} {render[0]:>9.2f} {krm[0]:>7.2f} {krm[0] / render[0]:>8.2f}"
                  f" {own[0]:>7.2f} {own[0] / render[0]:>8.2f} {row['in']:>7.1f} {row['out']:>8.1f}"
                  f" {render[1]:>8.0f}/{krm[1]:.0f}/{own[1]:.0f}", flush=True)


if __name__ == "__main__":
    main()
