"""The suite's cache (`MPIGEN_TEST_CACHE`) where the e2e tests' non-root pods cannot reach it: found up
front, by the mode bits along its path (tests/pypi.py), and said with what to do (tests/conftest.py's
report header, tests/e2e/e2e_harness/mpi.py before anything is installed)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pypi
import pytest

ROOT = Path(__file__).resolve().parent.parent
USER = pypi.NON_ROOT


@pytest.fixture
def home() -> Iterator[Path]:
    """A home directory (0700, as `useradd -m` makes one) in a directory every user may enter: not
    pytest's tmp_path, whose own parent is 0700."""
    base = Path(tempfile.mkdtemp(prefix="mpigen-cache-check-", dir="/var/tmp"))
    base.chmod(0o755)
    home = base / "home"
    home.mkdir(mode=0o700)
    home.chmod(0o700)
    try:
        yield home
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_cache_under_a_0700_home_is_out_of_the_non_root_users_reach(home: Path) -> None:
    cache = home / ".cache" / "mpigen-tests"
    assert pypi.untraversable(cache, USER, USER) == home
    assert pypi.untraversable(cache / "pypi" / "mpi-mpich", USER, USER) == home


def test_a_cache_every_user_may_enter_is_within_reach(home: Path) -> None:
    home.chmod(0o711)  # search without listing is enough
    (home / ".cache").mkdir(mode=0o755)
    assert pypi.untraversable(home / ".cache" / "mpigen-tests", USER, USER) is None
    assert pypi.untraversable(home, 0, 0) is None  # root enters anything


def test_a_directory_the_user_owns_or_shares_a_group_with_is_entered_by_its_bits(home: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("changing a directory's owner needs root")
    os.chown(home, USER, 0)
    assert pypi.untraversable(home, USER, USER) is None  # the owner's x
    os.chown(home, 0, USER)
    home.chmod(0o710)
    assert pypi.untraversable(home, USER, USER) is None  # the group's x
    home.chmod(0o701)
    assert pypi.untraversable(home, USER, 4321) is None  # others' x
    assert pypi.untraversable(home, USER, USER) == home  # the group's bits decide for a member


def test_the_mode_bits_say_what_the_non_root_user_meets(home: Path) -> None:
    """The same answers as the kernel gives that user (setpriv, as the e2e harness runs non-root pods)."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("running a command as another user needs root and setpriv (util-linux)")
    (home / "inner").mkdir(mode=0o755)
    for mode in (0o700, 0o711, 0o755, 0o701):
        home.chmod(mode)
        argv = [
            setpriv,
            f"--reuid={USER}",
            f"--regid={USER}",
            "--clear-groups",
            "test",
            "-x",
            str(home / "inner"),
        ]
        entered = subprocess.run(argv, check=False).returncode == 0
        assert (pypi.untraversable(home / "inner", USER, USER) is None) == entered, oct(mode)


def test_the_reason_says_what_to_do(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pypi, "CACHE", home / ".cache" / "mpigen-tests")
    problem = pypi.unreachable()
    assert problem is not None
    assert f"{home} has mode 0700" in problem
    assert "set MPIGEN_TEST_CACHE to a directory every user may enter" in problem
    assert f"chmod o+x {home}" in problem
    home.chmod(0o755)
    assert pypi.unreachable() is None


def test_the_run_says_so_before_anything_runs(home: Path) -> None:
    """The report header of a run, as root: the warning with what to do, before the first test."""
    if os.geteuid() != 0:
        pytest.skip("the e2e tests, and so the check, run as root only")
    env = {**os.environ, "MPIGEN_TEST_CACHE": str(home / ".cache" / "mpigen-tests")}
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "--collect-only",
        "-p",
        "no:cacheprovider",
        "tests/test_layout.py",
    ]
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=300)
    assert (
        f"warning: MPIGEN_TEST_CACHE {home}/.cache/mpigen-tests is out of reach of uid {USER}" in done.stdout
    )


def test_the_user_is_the_one_the_non_root_pods_run_as() -> None:
    sys.path.insert(0, str(ROOT / "tests" / "e2e"))
    try:
        from e2e_harness.v2beta1 import MPIUSER
    finally:
        sys.path.remove(str(ROOT / "tests" / "e2e"))
    assert USER == MPIUSER
