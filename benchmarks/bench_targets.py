"""Benchmark: a render for `--target jobset` and `--target volcano` against the default target.

The run targets build the same plan and most of the same pod templates as the default target and emit one
JobSet or Volcano Job in place of the launcher Job, StatefulSet, Service and helper Jobs; a render for
them should cost what a default one costs. Three comparisons, each command run in turn round after
round (medians, so a loaded machine slows every target alike), the default target the base:

1. One job through the CLI with validation on, one process per render (start-up included), for the
   v1alpha1, v1alpha2, v1 and v2beta1 examples: wall and CPU seconds, peak memory, ratio to the default.
2. 1,000 jobs in one `mpigen render` per target (v1alpha2 example, distinct names).
3. One job with 10,000 workers, one `mpigen render` per target (v1alpha2 example, as bench_startup.py:
   the hostfile and, on the default and volcano targets, the launcher Role's worker names grow with it;
   a v2beta1 job with SSH host names reaches the ConfigMap's 1 MiB at about 8,300 workers).

Uses bench_startup.py's process spawner (peak memory per process) and, like it, byte-compiles the
checkout first, or runs an installed `mpigen` with `--mpigen PATH`:

    python benchmarks/bench_targets.py [--mpigen /tmp/benv/bin/mpigen] [--rounds 21] [--jobs 1000] [--workers 10000]
"""

from __future__ import annotations

import argparse
import compileall
import copy
import os
import platform
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_startup  # noqa: E402 - the sibling benchmark's spawner and medians
from bench_startup import MPIGEN, ROOT, Command, Result, Spawner, side_by_side, shown  # noqa: E402

TARGETS = {"default": [], "jobset": ["--target", "jobset"], "volcano": ["--target", "volcano"]}
EXAMPLES = {
    "v1alpha1": "v1alpha1/tensorflow-benchmarks.yaml",
    "v1alpha2": "v1alpha2/tensorflow-benchmarks.yaml",
    "v1": "v1/tensorflow-mnist.yaml",
    "v2beta1": "v2beta1/tensorflow-benchmarks.yaml",
}


def compare(commands: dict[str, Command], rounds: int, indent: str = "     ") -> None:
    results = side_by_side(commands, rounds)
    base: Result = results["default"]
    for name, result in results.items():
        print(f"{indent}{name:8} {shown(result, None if name == 'default' else base, 'default')}")


def one_job(rounds: int) -> None:
    print("1. One job per process, validation on: median seconds (peak memory), ratio to the default target")
    for version, path in EXAMPLES.items():
        example = str(ROOT / "examples" / path)
        print(f"   {version} {Path(path).stem}:")
        compare({name: ([*MPIGEN, "render", *flags, example], None) for name, flags in TARGETS.items()}, rounds)


def many_jobs(work: Path, jobs: int, rounds: int) -> None:
    import yaml

    job = yaml.safe_load((ROOT / "examples" / "v1alpha2" / "tensorflow-benchmarks.yaml").read_text())
    documents = []
    for index in range(jobs):
        each = copy.deepcopy(job)
        each["metadata"]["name"] = f"tf-{index}"
        documents.append(each)
    source = work / "jobs.yaml"
    source.write_text(yaml.dump_all(documents, Dumper=yaml.CSafeDumper, sort_keys=False))
    print(f"2. {jobs} jobs in one mpigen render, validation on:")
    compare({name: ([*MPIGEN, "render", *flags, str(source)], None) for name, flags in TARGETS.items()}, max(3, rounds // 4))


def wide_job(work: Path, workers: int, rounds: int) -> None:
    import yaml

    job = yaml.safe_load((ROOT / "examples" / "v1alpha2" / "tensorflow-benchmarks.yaml").read_text())
    job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = workers
    path = work / f"workers-{workers}.yaml"
    path.write_text(yaml.safe_dump(job))
    print(f"3. One v1alpha2 job with {workers} workers, render with validation:")
    compare({name: ([*MPIGEN, "render", *flags, str(path)], None) for name, flags in TARGETS.items()}, max(5, rounds // 2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21, help="runs of each command (medians)")
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=10000)
    parser.add_argument("--only", type=int, choices=(1, 2, 3), help="run one part only")
    parser.add_argument("--mpigen", metavar="PATH", help="an installed mpigen executable (default: this checkout)")
    args = parser.parse_args()
    if args.mpigen:
        MPIGEN[:] = [args.mpigen]
        bench_startup.ENV.pop("PYTHONPATH", None)
    else:
        compileall.compile_dir(str(ROOT / "mpigen"), quiet=1)
    print(f"mpigen: {' '.join(MPIGEN)}")
    print(f"{platform.node()}: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}, Python {platform.python_version()}")
    # The jobset target warns about its launcher Role at every kubectl-exec job: not printed here.
    bench_startup.SPAWNER = bench_startup.SPAWNER.replace("stdout=subprocess.DEVNULL", "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL")
    bench_startup.SPAWN = Spawner()
    with tempfile.TemporaryDirectory() as name:
        work = Path(name)
        parts = [lambda: one_job(args.rounds), lambda: many_jobs(work, args.jobs, args.rounds), lambda: wide_job(work, args.workers, args.rounds)]
        for number, part in enumerate(parts, 1):
            if args.only in (None, number):
                part()


if __name__ == "__main__":
    main()
