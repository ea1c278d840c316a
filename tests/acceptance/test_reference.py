"""The golden corpus and the shells' tests again, with MPIGEN_REFERENCE=1 (mpigen.reference): every
stand-in declines, the libraries (libyaml, PyYAML's dumper, pydantic, jsonschema, jinja2, click) do all
the work, and every golden file, message and exit code must come out the same.

One pytest process of its own per test file, since the switch is read once per process (one file each,
so that pytest-xdist's workers share the pass); it runs whatever of those tests the outer run's `-m`
selects (so `python -m pytest` runs them all both ways), but those marked `one_way` and the files of
ONE_WAY_FILES: tests of what a stand-in spares (they skip under the switch) and tests on whose way the
switch changes nothing (signals, staging files, listing directories, a write that fails where click
parses the call both ways), which the pass would only repeat (tests/unit/shells/test_streams.py says
which of its tests the pass runs, and why).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mpigen.reference import REFERENCE, VARIABLE

ROOT = Path(__file__).resolve().parents[2]
SHELLS_TESTS = sorted(
    str(path.relative_to(ROOT)) for path in (ROOT / "tests" / "unit" / "shells").glob("test_*.py")
)
# Shells' test files the pass leaves out, and why.
ONE_WAY_FILES = {
    "tests/unit/shells/test_startup.py": "it runs each stand-in beside its library itself (in processes "
    "of its own, with and without the switch) and pins generated files; under the switch its stand-in "
    "tests skip and the rest take no stand-in's path",
    "tests/unit/shells/test_gitops.py": "its subject is the files `render --output-dir` writes and `--check` "
    "compares (mpigen.shells.outdir, mpigen.gitops), which no stand-in takes part in: click parses those "
    "calls both ways, and the bytes written are the render's, which the golden corpus holds both ways",
}
BOTH_WAYS = ["tests/acceptance/test_golden.py", *(path for path in SHELLS_TESTS if path not in ONE_WAY_FILES)]


def test_every_shells_test_file_runs_both_ways_or_says_why_not() -> None:
    assert "tests/unit/shells/test_cli.py" in BOTH_WAYS and len(SHELLS_TESTS) >= 7, SHELLS_TESTS
    assert set(ONE_WAY_FILES) <= set(SHELLS_TESTS), "a file left out that is not there"
    assert sorted([*BOTH_WAYS[1:], *ONE_WAY_FILES]) == SHELLS_TESTS


@pytest.mark.slow  # a second run of the golden corpus and the shells' tests: about as long as the first
@pytest.mark.skipif(REFERENCE, reason=f"this run is already under {VARIABLE}=1")
@pytest.mark.parametrize("tests", BOTH_WAYS)
def test_the_libraries_alone_give_the_same_bytes(tests: str, request: pytest.FixtureRequest) -> None:
    if request.config.getoption("--update-golden"):
        pytest.skip("--update-golden rewrites the golden files from the fast path only")
    marks = request.config.getoption("markexpr")
    marks = f"({marks}) and not one_way" if marks else "not one_way"
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-n",
        "0",  # in this process: the outer run's workers share the files out
        tests,
        "-m",
        marks,
    ]
    env = {**os.environ, VARIABLE: "1"}
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, (
        f"{VARIABLE}=1 {' '.join(command[1:])}\n{result.stdout[-8000:]}{result.stderr[-2000:]}"
    )
    assert " passed" in result.stdout.splitlines()[-1], result.stdout[-2000:]
