"""Images: what a container image adds to the machine's file system, and the env it starts with.

The harness has no image layers: every pod sees this machine's files. An `Image` lists the few files
and directories an image would change (users in /etc/passwd, ssh configuration, a home directory) and
the env its containers start with; each pod gets them in its own mount namespace (files bound over the
machine's, new paths in an overlay), so the machine itself never changes.

`mpi_operator_base` is mpi-operator's `build/base/Dockerfile` (v0.8.2) as data: openssh-server with
`Port 2222` for sshd and ssh, `StrictModes no`, `StrictHostKeyChecking no`, `UserKnownHostsFile
/dev/null`, the privilege separation directory, and user `mpiuser` (uid 1000) whose `~/.sshd_config`
lets sshd run without root (`PidFile`, `HostKey ~/.ssh/id_rsa`, i.e. the job's key from the Secret).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"  # a container image's PATH
SSH_PORT = 2222  # build/base/Dockerfile: ARG port=2222


@dataclass(frozen=True)
class ImageFile:
    """A file the image has at `path` (replacing the machine's, or new)."""

    path: str
    content: str
    mode: int = 0o644
    uid: int = 0
    gid: int = 0
    source: Path | None = None  # a file of this machine whose bytes it has (a program), instead of content


@dataclass(frozen=True)
class ImageDir:
    """A directory the image has at `path` (new on this machine)."""

    path: str
    mode: int = 0o755
    uid: int = 0
    gid: int = 0


@dataclass(frozen=True)
class Image:
    """Files, directories and env of an image; `homes` gives HOME for a uid (kubelet reads /etc/passwd)."""

    env: Mapping[str, str] = field(default_factory=lambda: {"PATH": DEFAULT_PATH})
    files: tuple[ImageFile, ...] = ()
    dirs: tuple[ImageDir, ...] = ()
    homes: Mapping[int, str] = field(default_factory=lambda: {0: "/root"})
    run_dirs: tuple[str, ...] = ()  # made on the pod's own /run (a tmpfs) when not empty

    def home(self, uid: int | None) -> str:
        """HOME for a container running as `uid` (None: the image's user, root)."""
        return self.homes.get(uid or 0, "/")

    def with_env(self, **env: str) -> Image:
        """The same image with more env (e.g. PATH with an MPI's bin first)."""
        return Image({**self.env, **env}, self.files, self.dirs, self.homes, self.run_dirs)

    def with_files(self, files: tuple[ImageFile, ...]) -> Image:
        """The same image with more files (those of a pod's other images, e.g. kubectl-delivery's)."""
        return Image(self.env, (*self.files, *files), self.dirs, self.homes, self.run_dirs)


PLAIN = Image()


def _edit(text: str, substitutions: list[tuple[str, str]], append: str = "") -> str:
    for pattern, repl in substitutions:
        text = re.sub(pattern, repl, text, flags=re.MULTILINE)
    return text + append


def _users(passwd: str, group: str, name: str, uid: int) -> tuple[str, str]:
    """passwd and group with `name` as uid/gid `uid` (dropping any entry of the machine with that id)."""

    def keep(line: str) -> bool:
        fields = line.split(":")
        return len(fields) < 3 or (fields[0] != name and fields[2] != str(uid))

    kept_p = [line for line in passwd.splitlines() if keep(line)]
    kept_g = [line for line in group.splitlines() if keep(line)]
    kept_p.append(f"{name}:x:{uid}:{uid}::/home/{name}:/bin/sh")
    kept_g.append(f"{name}:x:{uid}:")
    return "\n".join(kept_p) + "\n", "\n".join(kept_g) + "\n"


def mpi_operator_base(
    etc: Path = Path("/etc"), port: int = SSH_PORT, user: str = "mpiuser", uid: int = 1000
) -> Image:
    """mpi-operator's base image over this machine's openssh-server (needs /etc/ssh/sshd_config)."""
    sshd_config = _edit(
        (etc / "ssh" / "sshd_config").read_text(),
        [(r"^#(StrictModes ).*", r"\1no"), (r"^#(Port ).*", rf"\g<1>{port}")],
    )
    ssh_config = _edit(
        (etc / "ssh" / "ssh_config").read_text(),
        [(r"^[ #](.*StrictHostKeyChecking ).*", r" \1no"), (r"^[ #](.*Port ).*", rf" \g<1>{port}")],
        append="    UserKnownHostsFile /dev/null\n",
    )
    passwd, group = _users((etc / "passwd").read_text(), (etc / "group").read_text(), user, uid)
    home = f"/home/{user}"
    user_sshd = f"PidFile {home}/sshd.pid\nHostKey {home}/.ssh/id_rsa\nStrictModes no\nPort {port}\n"
    return Image(
        files=(
            ImageFile("/etc/ssh/sshd_config", sshd_config),
            ImageFile("/etc/ssh/ssh_config", ssh_config),
            ImageFile("/etc/passwd", passwd),
            ImageFile("/etc/group", group),
            ImageFile(f"{home}/.sshd_config", user_sshd, 0o644, uid, uid),
        ),
        dirs=(ImageDir(home, 0o755, uid, uid),),
        homes={0: "/root", uid: home},
        run_dirs=("/run/sshd",),
    )
