"""The terminal side of tests/progress.py, as a pytest plugin (registered by tests/conftest.py; `-p
progress_report` with tests/ on the path elsewhere): progress lines past pytest's capture while a fixture
waits for a build or an install, and at the end of the session a summary of what was built, installed or
found already there, gathered from every pytest-xdist worker.
"""

from __future__ import annotations

import contextlib
import logging
import os
from typing import Any

import progress
import pytest

_RECORDS = pytest.StashKey[list[dict[str, object]]]()


class _LiveProgress(logging.Handler):
    """Shows the progress of the suite's builds and installs (tests/progress.py) on the terminal while a
    fixture waits for them, past pytest's capture: a cold build takes minutes, and a silent one looks
    hung. In a pytest-xdist worker, whose terminal reporter prints nowhere, the line goes to the worker's
    stderr, which is the terminal of the run."""

    def __init__(self, config: pytest.Config) -> None:
        super().__init__(logging.INFO)
        self.config = config
        self.worker = os.environ.get("PYTEST_XDIST_WORKER", "")

    def emit(self, record: logging.LogRecord) -> None:
        line = self.format(record)
        capture = self.config.pluginmanager.getplugin("capturemanager")
        reporter = self.config.pluginmanager.getplugin("terminalreporter")
        with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
            if self.worker or reporter is None:
                os.write(2, f"\n{line}\n".encode(errors="replace"))
            else:
                reporter.write_line(line)


def pytest_configure(config: pytest.Config) -> None:
    say = progress.say
    say.setLevel(logging.INFO)
    say.addHandler(_LiveProgress(config))
    config.stash[_RECORDS] = []
    progress.RECORDS.clear()


def pytest_unconfigure(config: pytest.Config) -> None:
    for handler in [h for h in progress.say.handlers if isinstance(h, _LiveProgress)]:
        progress.say.removeHandler(handler)


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: its records go to the controller
        workeroutput["mpigen_progress"] = [entry.as_dict() for entry in progress.RECORDS]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """pytest-xdist: a worker ended; keep what it built or reused for the summary."""
    records = getattr(node, "workeroutput", {}).get("mpigen_progress", [])
    node.config.stash[_RECORDS].extend(records)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """What the run built or installed, and what it found already there (tests/progress.py)."""
    records = [progress.Record(**entry) for entry in config.stash[_RECORDS]]  # type: ignore[arg-type]
    lines = progress.summary([*progress.RECORDS, *records])
    if lines:
        terminalreporter.section("tools the suite built, installed or reused")
        for line in lines:
            terminalreporter.write_line(line)
