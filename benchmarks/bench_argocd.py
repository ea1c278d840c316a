"""Benchmark: a directory of jobs rendered through Argo CD's plugin server against `mpigen render` on it.

Argo CD's repo-server streams the application's directory to the plugin's sidecar as a tgz, the sidecar's
`argocd-cmp-server` unpacks it and runs `mpigen argocd generate` there, then splits the YAML it prints
into manifests and sends them back (argo-cd cmpserver/plugin/plugin.go). This measures what that adds to
the render itself: `argocd-cmp-driver generate` (the suite's repo-server side, tests/argocd/driver) against
a running `argocd-cmp-server` with examples/gitops/argocd/plugin.yaml, beside `mpigen render DIR` with the
same options, each run in turn round after round (medians), on JOBS copies of the v2beta1 example with
distinct names. Both binaries are built by tests/cluster/gotools.py (Go needed; the first run builds them).

    python benchmarks/bench_argocd.py [--jobs 100] [--rounds 11]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "cluster"))
sys.path.insert(0, str(ROOT / "tests"))

import gotools
import yaml

EXAMPLE = ROOT / "examples" / "v2beta1" / "tensorflow-benchmarks.yaml"
PLUGIN = ROOT / "examples" / "gitops" / "argocd"


def jobs_repository(root: Path, count: int) -> Path:
    job = yaml.safe_load(EXAMPLE.read_text())
    folder = root / "repo" / "jobs"
    folder.mkdir(parents=True)
    for index in range(count):
        job["metadata"]["name"] = f"job-{index:04d}"
        (folder / f"job-{index:04d}.yaml").write_text(yaml.safe_dump(job))
    return folder.parent


def start_server(home: Path) -> subprocess.Popen[bytes]:
    server = str(gotools.binary("argocd-cmp-server"))
    (home / "bin").mkdir()
    (home / "plugins").mkdir()
    mpigen = home / "bin" / "mpigen"
    mpigen.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m mpigen "$@"\n')
    mpigen.chmod(0o755)
    env = {
        "PATH": f"{home / 'bin'}:/usr/bin:/bin",
        "HOME": str(home),
        "TMPDIR": str(home),
        "ARGOCD_PLUGINSOCKFILEPATH": str(home / "plugins"),
    }
    argv = [server, "--config-dir-path", str(PLUGIN), "--loglevel", "warn"]
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not (home / "plugins" / "mpigen.sock").exists():
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("argocd-cmp-server did not start")
        time.sleep(0.1)
    return process


def timed(argv: list[str], env: dict[str, str], stdin: str | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, input=stdin, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{argv[0]} failed: {done.stderr[-2000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args()
    driver = str(gotools.binary("argocd-cmp-driver"))
    home = Path(tempfile.mkdtemp(prefix="mpigen-bench-cmp-"))
    process = start_server(home)
    try:
        repo = jobs_repository(home, args.jobs)
        request = json.dumps(
            {"appName": "bench", "namespace": "ml", "kubeVersion": "1.34.1", "plugin": {"name": "mpigen"}}
        )
        driver_env = {
            "PATH": "/usr/bin:/bin",
            "TMPDIR": str(home),
            "ARGOCD_PLUGINSOCKFILEPATH": str(home / "plugins"),
        }
        render = [
            sys.executable,
            "-m",
            "mpigen",
            "render",
            "-n",
            "ml",
            "--kube-version",
            "1.34",
            str(repo / "jobs"),
        ]
        plugin = [driver, "generate", str(repo), "jobs"]
        times: dict[str, list[float]] = {"mpigen render": [], "plugin server": []}
        for _ in range(args.rounds):
            times["mpigen render"].append(timed(render, dict(os.environ)))
            times["plugin server"].append(timed(plugin, driver_env, request))
        base = statistics.median(times["mpigen render"])
        print(f"{args.jobs} v2beta1 jobs, {args.rounds} rounds, median wall seconds:")
        for name, values in times.items():
            median = statistics.median(values)
            print(
                f"  {name:14} {median:6.2f} s  (+{median - base:.2f} s, min {min(values):.2f}, max {max(values):.2f})"
            )
    finally:
        process.kill()  # on SIGTERM it only removes its socket (argo-cd cmpserver/server.go: Shutdown)
        process.wait(timeout=30)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
