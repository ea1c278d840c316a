"""The suite says what its long builds and installs are doing (tests/progress.py, tests/progress_report.py):
a line at least every `every` seconds naming the tool, the step, the time so far and the log, shown past
pytest's capture, in one process and under pytest-xdist, and a summary of what was built or reused."""

from __future__ import annotations

import fcntl
import logging
import os
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import progress
import pytest

TESTS = Path(__file__).resolve().parent


def test_the_run_shows_progress_on_the_terminal(
    request: pytest.FixtureRequest,
) -> None:
    assert request.config.pluginmanager.get_plugin("mpigen-progress") is not None
    assert any(type(handler).__name__ == "_LiveProgress" for handler in progress.say.handlers)


@pytest.fixture
def said() -> Iterator[list[str]]:
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    keep = Keep()
    live = [handler for handler in progress.say.handlers if type(handler).__name__ == "_LiveProgress"]
    for handler in live:  # these tests' own lines stay off the run's terminal
        progress.say.removeHandler(handler)
    progress.say.addHandler(keep)
    try:
        yield lines
    finally:
        progress.say.removeHandler(keep)
        for handler in live:
            progress.say.addHandler(handler)


def test_a_running_step_says_what_it_runs_how_long_and_where_its_log_is(
    said: list[str], tmp_path: Path
) -> None:
    log = tmp_path / "build.log"
    script = "echo first; sleep 1.3; echo second; sleep 1.3; echo third"
    progress.run(["sh", "-c", script], what="[go] building demo v1", log=log, timeout=60, every=0.5)
    assert len(said) >= 3, said
    for line in said:
        assert re.fullmatch(
            rf"\[go\] building demo v1: sh, \d+ s so far, \d+ lines of output; log: {re.escape(str(log))}",
            line,
        ), line
    seconds = [int(re.search(r"(\d+) s so far", line).group(1)) for line in said]  # type: ignore[union-attr]
    assert seconds == sorted(seconds) and seconds[-1] >= 2
    assert log.read_text().splitlines() == [f"$ sh -c {script}", "first", "second", "third"]


def test_a_quick_step_says_nothing_and_a_failing_one_ends_with_its_log(
    said: list[str], tmp_path: Path
) -> None:
    log = tmp_path / "install.log"
    progress.run(["true"], what="[apt] installing demo", log=log, timeout=60, every=5)
    assert said == []
    with pytest.raises(progress.StepFailed) as failed:
        progress.run(["sh", "-c", "echo broken package; exit 3"], what="x", log=log, timeout=60, every=5)
    assert failed.value.returncode == 3
    assert str(log) in str(failed.value) and str(failed.value).endswith("broken package")


def test_a_step_past_its_timeout_is_stopped(said: list[str], tmp_path: Path) -> None:
    started = time.monotonic()
    with pytest.raises(progress.StepFailed, match="still running after"):
        progress.run(["sleep", "30"], what="x", log=tmp_path / "log", timeout=0.5, every=0.3)
    assert time.monotonic() - started < 10


def test_waiting_for_a_lock_another_process_holds_is_said(said: list[str], tmp_path: Path) -> None:
    lock = tmp_path / ".demo.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import fcntl, time; f = open({str(lock)!r}, 'a'); fcntl.flock(f, 2); "
            + "print('held', flush=True); time.sleep(2.5)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    with progress.locked(lock, "[go] building demo", every=0.5) as held:
        assert holder.wait(timeout=5) == 0  # only once the other process let go
        with pytest.raises(BlockingIOError), lock.open("a") as other:
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert held is not None
    holder.stdout.close()
    assert said, "no line while waiting"
    assert all(
        re.fullmatch(
            rf"\[go\] building demo: waiting for another process that holds {re.escape(str(lock))}, \d+ s so far",
            line,
        )
        for line in said
    ), said


def test_a_heartbeat_beats_while_its_body_runs_and_stops_after(said: list[str], tmp_path: Path) -> None:
    steps = ["fetching the wheels"]
    with progress.heartbeat("[image] building demo", tmp_path / "build.log", lambda: steps[-1], every=0.3):
        time.sleep(1.2)
    count = len(said)
    assert count >= 2, said
    for line in said:
        assert re.fullmatch(
            r"\[image\] building demo: still going \(fetching the wheels\), \d+ s so far; log: \S+/build\.log",
            line,
        ), line
    time.sleep(0.7)
    assert len(said) == count


def test_the_summary_names_what_was_built_with_its_log_and_what_was_already_there() -> None:
    records = [
        progress.Record("go", "kwok", "built", 95.0, "/c/kwok/build.log"),
        progress.Record("go", "etcd", "reused", 0, "/c/etcd"),
        progress.Record("go", "etcd", "reused", 0, "/c/etcd"),
        progress.Record("debian", "dash", "reused"),
        progress.Record("go", "kpt", "unavailable", note="`go` is not on PATH"),
    ]
    assert progress.summary(records) == [
        "go kpt: unavailable (`go` is not on PATH)",
        "go kwok: built in 1 min 35 s; log: /c/kwok/build.log",
        "debian, already there: dash",
        "go, already there: etcd",
    ]


SLOW_BUILD = """
    import progress

    def test_builds(tmp_path):
        progress.run(["sh", "-c", "sleep 2.2"], what="[go] building demo v1", log=tmp_path / "build.log",
                     timeout=60, every=0.5)
        progress.record("go", "demo", "built", 2.2, tmp_path / "build.log")

    def test_reuses():
        progress.record("go", "other", "reused", 0, "/cache/other")
"""


@pytest.mark.slow  # two pytest runs in new processes, one with two xdist workers
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_a_pytest_run_shows_the_progress_past_its_capture_and_sums_up(
    workers: list[str], tmp_path: Path
) -> None:
    (tmp_path / "test_slow_build.py").write_text(textwrap.dedent(SLOW_BUILD))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "progress_report",
            "-p",
            "no:cacheprovider",
            *workers,
            str(tmp_path),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    ticks = re.findall(
        r"\[go\] building demo v1: sh, \d+ s so far, 0 lines of output; log: \S+build\.log", out
    )
    assert len(ticks) >= 3, out
    summary = out[out.index("tools the suite built, installed or reused") :]
    assert re.search(r"go demo: built in 2 s; log: \S+build\.log", summary), out
    assert "go, already there: other" in summary, out
