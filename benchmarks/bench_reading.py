"""Benchmark: how long reading YAML takes (mpigen.yaml.load.load_documents), for a stream of typical jobs
and for 16 MiB inputs of hostile shapes, each answered (read or refused) in process.

    python benchmarks/bench_reading.py [--jobs 1000] [--repeat 5] [--no-hostile]

Prints the best of `--repeat` runs for the stream of jobs, and one run per hostile shape with what
mpigen said. Reading is on the start-up path of every command, so the stream of 1,000 jobs is the
number to keep low; the hostile shapes must each end within seconds.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from mpigen.yaml.load import MAX_INPUT_BYTES, InputError, load_documents

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from hostile_yaml import SHAPES  # the tests' table of hostile shapes

JOB = (ROOT / "golden" / "v2beta1-defaults" / "input.yaml").read_text()

HOSTILE = {
    **SHAPES,
    "alias bomb": lambda n: "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(f"{c}: &{c} [" + ", ".join([f"*{p}"] * 10) + "]\n" for p, c in zip("abcdefgh", "bcdefghi")),
}


def stream(jobs: int) -> str:
    return "---\n".join(JOB.replace("name: pi\n", f"name: pi{i}\n", 1) for i in range(jobs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-hostile", action="store_true")
    args = parser.parse_args()
    text = stream(args.jobs)
    best = min(_timed(text)[0] for _ in range(args.repeat))
    print(f"{args.jobs} jobs ({len(text):,} bytes): {best:.3f} s")
    if args.no_hostile:
        return
    for name, make in HOSTILE.items():
        seconds, said = _timed(make(MAX_INPUT_BYTES)[:MAX_INPUT_BYTES])
        print(f"{name:16} {seconds:6.2f} s  {said[:110]}")


def _timed(text: str) -> tuple[float, str]:
    start = time.perf_counter()
    try:
        said = f"{len(load_documents(text, 'input.yaml'))} documents"
    except InputError as exc:
        said = str(exc)
    return time.perf_counter() - start, said


if __name__ == "__main__":
    main()
