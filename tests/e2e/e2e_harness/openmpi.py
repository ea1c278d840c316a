"""Open MPI and the machine: can the e2e tests run here, install Open MPI if missing, build the program.

The e2e tests need root (network and mount namespaces), iproute2's `ip netns`, util-linux's `unshare`
and `nsenter`, and Open MPI (`mpirun`, `mpicc`). Open MPI comes from Debian's `openmpi-bin` and
`libopenmpi-dev`; when they are missing and apt-get can be used (root), they are installed once, under
a lock, so that parallel sessions don't race. Anything else missing makes the tests skip, naming it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

APT_PACKAGES = ("openmpi-bin", "libopenmpi-dev")
OPENMPI_TOOLS = {"mpirun": "openmpi-bin", "mpicc": "libopenmpi-dev"}
# What the harness adds to the launcher container's env: it runs every pod as root, and Open MPI
# refuses root unless told twice (the same as `mpirun --allow-run-as-root`). A real image's user
# decides this; mpigen does not.
RUN_AS_ROOT_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
TOOLS = ("ip", "unshare", "nsenter", "setpriv", "flock", "sleep")
PROGRAM = Path(__file__).with_name("allreduce.c")


def missing_prerequisite() -> str | None:
    """Why namespaced pods cannot run here, or None when they can."""
    if os.name != "posix" or not Path("/proc/self/ns/net").exists():
        return "e2e tests need Linux namespaces"
    if os.geteuid() != 0:
        return "e2e tests need root (they create network and mount namespaces)"
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        return f"e2e tests need {', '.join(missing)} (iproute2, util-linux, coreutils)"
    probe = subprocess.run(
        ["unshare", "--net", "--uts", "--mount", "--ipc", "--fork", "true"],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        return f"e2e tests cannot create namespaces here: {probe.stderr.strip()}"
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    if netns.returncode != 0:
        return f"`ip netns` does not work here: {netns.stderr.strip()}"
    return None


def have_openmpi() -> bool:
    """`mpirun` and `mpicc` are on PATH."""
    return shutil.which("mpirun") is not None and shutil.which("mpicc") is not None


def ensure_openmpi() -> str | None:
    """Install Open MPI with apt-get if it is missing (tests/debian.py); the reason it can't, or None.

    Raises RuntimeError when apt-get was tried and failed: that is a broken machine, not a skip.
    """
    import debian  # tests/debian.py, on sys.path through tests/conftest.py

    if have_openmpi():
        return None
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return f"Open MPI is missing and cannot be installed here (needs root and apt-get: {' '.join(APT_PACKAGES)})"
    problem = debian.ensure(OPENMPI_TOOLS)
    if problem:
        raise RuntimeError(f"installing {' '.join(APT_PACKAGES)}: {problem}")
    return None


def openmpi_version() -> str:
    """`mpirun --version`'s first line, e.g. `mpirun (Open MPI) 4.1.4`."""
    done = subprocess.run(["mpirun", "--version"], capture_output=True, text=True, check=True)
    return done.stdout.splitlines()[0]


def build_program(dest_dir: Path) -> Path:
    """Compile allreduce.c with mpicc into `dest_dir` (which every pod sees: not under /tmp)."""
    exe = dest_dir / "allreduce"
    subprocess.run(
        ["mpicc", "-O2", "-Wall", "-o", str(exe), str(PROGRAM)], check=True, capture_output=True, text=True
    )
    return exe
