"""Debian packages the test suite needs, installed by the suite itself (never by hand).

When a tool is missing and the tests run as root with apt-get (CI, a fresh developer machine), the
packages are installed once, under a lock so parallel runs don't race. Elsewhere nothing is installed
and the tests that need the tool skip, naming the package.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import progress

LOCK = Path("/tmp/mpigen-tests-apt.lock")
TIMEOUT = 900


def log_path() -> Path:
    """apt-get's output, appended run after run (beside the Go tools' cache)."""
    root = os.environ.get("MPIGEN_TEST_CACHE") or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mpigen-tests"
    )
    return Path(root) / "logs" / "apt-get.log"


def missing(tools: dict[str, str]) -> list[str]:
    """Packages whose tool (tool -> package) is not on PATH."""
    return sorted({package for tool, package in tools.items() if shutil.which(tool) is None})


def ensure(tools: dict[str, str]) -> str | None:
    """Install the packages of missing tools; the reason it could not, or None when all are there."""
    packages = sorted(set(tools.values()))
    if not missing(tools):
        for package in packages:
            progress.record("debian", package, "reused")
        return None
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        why = "needs root and apt-get"
        for package in missing(tools):
            progress.record("debian", package, "unavailable", note=why)
        return f"cannot install {' '.join(missing(tools))} here ({why})"
    log = log_path()
    with progress.locked(LOCK, f"[apt] installing Debian packages {' '.join(missing(tools))}"):
        wanted = missing(tools)
        if not wanted:
            return None
        what = f"[apt] installing Debian packages {' '.join(wanted)}"
        progress.say.info("%s with apt-get; log: %s", what, log)
        started = time.monotonic()
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for argv in (
            ["apt-get", "update"],
            ["apt-get", "install", "-y", "--no-install-recommends", *wanted],
        ):
            try:
                progress.run(argv, what=what, log=log, timeout=TIMEOUT, env=env)
            except progress.StepFailed as failed:
                for package in wanted:
                    progress.record("debian", package, "failed", time.monotonic() - started, log)
                return str(failed)[-800:]
        for package in wanted:
            progress.record("debian", package, "installed", time.monotonic() - started, log)
    left = missing(tools)
    return f"installed, but still missing: {' '.join(left)}" if left else None
