"""Debian packages the test suite needs, installed by the suite itself (never by hand).

When a tool is missing and the tests run as root with apt-get (CI, a fresh developer machine), the
packages are installed once, under a lock so parallel runs don't race. Elsewhere nothing is installed
and the tests that need the tool skip, naming the package.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

LOCK = Path("/tmp/mpigen-tests-apt.lock")
TIMEOUT = 900


def missing(tools: dict[str, str]) -> list[str]:
    """Packages whose tool (tool -> package) is not on PATH."""
    return sorted({package for tool, package in tools.items() if shutil.which(tool) is None})


def ensure(tools: dict[str, str]) -> str | None:
    """Install the packages of missing tools; the reason it could not, or None when all are there."""
    if not missing(tools):
        return None
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return f"cannot install {' '.join(missing(tools))} here (needs root and apt-get)"
    with LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        packages = missing(tools)
        if not packages:
            return None
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for argv in (
            ["apt-get", "update"],
            ["apt-get", "install", "-y", "--no-install-recommends", *packages],
        ):
            done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=TIMEOUT, check=False)
            if done.returncode != 0:
                return f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()[-500:]}"
    left = missing(tools)
    return f"installed, but still missing: {' '.join(left)}" if left else None
