"""Pod file systems: the files a pod sees and the holder script that mounts them in its namespaces.

Each pod's files are prepared on the machine under `<workdir>/pods/<pod>/` (volumes, hosts,
resolv.conf, overlay dirs) and mounted by the pod's holder inside its own mount namespace, which the
holder made private before mounting; so nothing shows up outside the pod. Nothing a container does is
emulated here: the kubectl stand-in sits where the kubectl-delivery image keeps kubectl (/bin/kubectl,
published.py), and the launcher's kubectl-delivery init container copies it as its command says.
"""

from __future__ import annotations

import os
import select
import shlex
import shutil
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from .image import Image
from .netns import HarnessError
from .pods import Pod

KUBELET_HOSTS = """# Kubernetes-managed hosts file (mpigen e2e harness).
127.0.0.1\tlocalhost
::1\tlocalhost ip6-localhost ip6-loopback
fe00::0\tip6-localnet
fe00::0\tip6-mcastprefix
fe00::1\tip6-allnodes
fe00::2\tip6-allrouters
"""
# No nameserver: glibc then asks 127.0.0.1 inside the pod, where nothing listens, so a name that is
# not in /etc/hosts fails at once and no DNS query can leave the pod.
RESOLV_CONF = "search {searches}\noptions ndots:5\n"
UNROUTABLE_PREFIX = "192.168.77."
SHARED_HOSTNAME = "shared-node"
HOLDER_START_TIMEOUT = 60  # seconds for all pods of a cluster to be set up


def hosts_entry(pod: Pod, address: str) -> str:
    """The line kubelet writes for a pod (`IP FQDN HOSTNAME` for a pod with a subdomain)."""
    if pod.subdomain:
        return f"{address}\t{pod.dns_names()[0]}\t{pod.host}\n"
    return f"{address}\t{pod.host}\n"


def dns_entry(pod: Pod, address: str, searches: tuple[str, ...]) -> str:
    """What cluster DNS lets a pod with `searches` resolve for another pod behind a headless Service,
    as a hosts line: the FQDN, and every shorter name that one of the search domains completes to it
    (glibc's files backend does not apply the search list, so the harness does). Empty without DNS."""
    if not pod.dns_names():
        return ""
    fqdn = pod.dns_names()[0]
    short = [fqdn.removesuffix(f".{domain}") for domain in searches if fqdn.endswith(f".{domain}")]
    return "\t".join([address, fqdn, *sorted(set(short), key=len, reverse=True)]) + "\n"


def _write_volume(root: Path, pod: Pod, name: str) -> Path:
    path = root / "volumes" / name
    if path.exists():
        return path
    path.mkdir(parents=True)
    path.chmod(0o777 if pod.volume(name).kind == "emptyDir" else 0o755)
    for file in pod.volume(name).files:
        target = path / file.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(file.content)
        target.chmod(file.mode)
    return path


def _nearest_existing(path: str) -> str:
    parent = os.path.dirname(path.rstrip("/")) or "/"
    while not os.path.isdir(parent):
        parent = os.path.dirname(parent)
    return parent


def _in_overlay(root: Path, pod: Pod, overlays: dict[str, Path], path: str) -> Path:
    """Where `path` (missing on the machine) lives in the overlay of its nearest existing parent."""
    parent = _nearest_existing(path)
    if parent == "/":
        raise HarnessError(f"pod {pod.name}: {path}: no parent directory to overlay")
    upper = overlays.setdefault(parent, root / "overlay" / str(len(overlays)))
    (upper / "work").mkdir(parents=True, exist_ok=True)
    return upper / "upper" / os.path.relpath(path, parent)


def _image_lines(root: Path, pod: Pod, image: Image, overlays: dict[str, Path]) -> list[str]:
    """Put the image's dirs and new files in overlays; return bind mounts for files it replaces."""
    lines = []
    for item in image.dirs:
        target = _in_overlay(root, pod, overlays, item.path)
        target.mkdir(parents=True, exist_ok=True)
        target.chmod(item.mode)
        os.chown(target, item.uid, item.gid)
    for i, file in enumerate(image.files):
        if os.path.isfile(file.path):
            target = root / "image" / str(i)
            lines.append(f"mount --bind {shlex.quote(str(target))} {shlex.quote(file.path)}")
        else:
            target = _in_overlay(root, pod, overlays, file.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        if file.source is not None:
            shutil.copyfile(file.source, target)
        else:
            target.write_text(file.content)
        target.chmod(file.mode)
        os.chown(target, file.uid, file.gid)
    return lines


def mount_lines(root: Path, pod: Pod, image: Image) -> list[str]:
    """Shell lines (run as root inside the pod's private mount namespace) that mount its volumes.

    A mountPath missing on the machine is created in an overlay of its nearest existing parent
    (e.g. /etc/mpi in an overlay of /etc), whose upper dir lives in the work dir; so are the image's
    new files and dirs, while files it replaces are bound over the machine's.
    """
    lines: list[str] = []
    overlays: dict[str, Path] = {}
    mounts = pod.mounts()
    for path in sorted(mounts):
        if os.path.lexists(path):
            if not os.path.isdir(path):
                raise HarnessError(f"pod {pod.name}: mountPath {path} exists on this machine as a file")
            continue
        _in_overlay(root, pod, overlays, path).mkdir(parents=True, exist_ok=True)
    image_binds = _image_lines(root, pod, image, overlays)
    for parent in sorted(overlays, key=lambda p: p.count("/")):
        upper = overlays[parent]
        (upper / "upper").mkdir(parents=True, exist_ok=True)
        opts = f"lowerdir={parent},upperdir={upper / 'upper'},workdir={upper / 'work'}"
        lines.append(f"mount -t overlay overlay -o {shlex.quote(opts)} {shlex.quote(parent)}")
    lines += image_binds
    for path, mount in sorted(mounts.items()):
        source = _write_volume(root, pod, mount.volume)
        lines.append(f"mount --bind {shlex.quote(str(source))} {shlex.quote(path)}")
        if mount.read_only or pod.volume(mount.volume).kind in ("configMap", "secret"):
            lines.append(f"mount -o remount,bind,ro {shlex.quote(path)}")
    return lines


def prepare_pod_files(root: Path, pod: Pod, hosts: str, image: Image) -> list[str]:
    """Write the pod's files under `root`; return the mount lines for its holder."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "hosts").write_text(hosts)
    (root / "resolv.conf").write_text(RESOLV_CONF.format(searches=" ".join(pod.search_list())))
    lines = mount_lines(root, pod, image)
    for name in ("hosts", "resolv.conf"):
        lines.append(f"mount --bind {shlex.quote(str(root / name))} /etc/{name}")
    if not (root / "ready").exists():  # not scripted before start: Ready at once
        (root / "ready").write_text("True\n")
    return lines


def holder_script(
    *,
    hostname: str,
    address: str,
    index: int,
    mounts: list[str],
    shm: Path | None,
    unroutable: bool,
    run_dirs: tuple[str, ...] = (),
) -> str:
    """The pause container: network, hostname, private /dev/shm and /tmp (and /run with `run_dirs`),
    volumes; prints its PID."""
    lines = [
        "ip link set lo up",
        f"ip addr add {address}/16 dev eth0",
        "ip link set eth0 up",
    ]
    if unroutable:
        lines += [
            f"ip addr add {UNROUTABLE_PREFIX}{index % 250 + 2}/24 dev net1",
            "ip link set net1 up",
        ]
    lines.append(f"hostname {shlex.quote(hostname)}")
    if shm is None:
        lines.append("mount -t tmpfs -o mode=1777,size=256m shm /dev/shm")
    else:
        lines.append(f"mount --bind {shlex.quote(str(shm))} /dev/shm")
    lines.append("mount -t tmpfs -o mode=1777 tmp /tmp")
    if run_dirs:
        lines.append("mount -t tmpfs -o mode=755 run /run")
        lines += [f"mkdir -p -m 755 {shlex.quote(d)}" for d in run_dirs]
    lines += mounts
    lines += ["echo $$", "exec sleep infinity"]
    return "\n".join(lines) + "\n"


def start_holder(netns_path: str, script: str) -> subprocess.Popen[bytes]:
    """Start a pod's holder: `script` in new UTS, mount and IPC namespaces inside the named netns.

    The parent-death signal survives exec (setpriv -> nsenter -> unshare) and unshare's --kill-child
    passes it on, so no holder outlives a killed pytest (atexit cannot run then).
    """
    argv = [
        "setpriv",
        "--pdeathsig",
        "KILL",
        "nsenter",
        f"--net={netns_path}",
        "unshare",
        "--uts",
        "--mount",
        "--ipc",
        "--propagation=private",
        "--fork",
        "--kill-child",
        "sh",
        "-ec",
        script,
    ]
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def read_holder_pid(pod: str, holder: subprocess.Popen[bytes], deadline: float) -> int:
    """The PID a holder prints once its pod is set up (HarnessError with its stderr if it fails)."""
    assert holder.stdout is not None and holder.stderr is not None
    ready, _, _ = select.select([holder.stdout], [], [], max(deadline - time.monotonic(), 0))
    line = holder.stdout.readline().decode().strip() if ready else ""
    if line.isdigit():
        return int(line)
    if not ready:
        raise HarnessError(f"pod {pod} did not start within {HOLDER_START_TIMEOUT}s")
    holder.wait(timeout=10)
    raise HarnessError(f"pod {pod} did not start: {holder.stderr.read().decode().strip()}")


def kubectl_text(template: str, state: Path) -> str:
    """The fake kubectl with its state dir filled in."""
    return template.replace("@STATE@", shlex.quote(str(state)), 1)


def enter_script(command: list[str]) -> str:
    """`enter CMD...`: run CMD in a pod as its first container (what `kubectl exec` does)."""
    return f'#!/bin/sh\nexec {shlex.join(command)} "$@"\n'


def check_env(env: Mapping[str, str]) -> None:
    """Refuse env names `env -i NAME=VALUE` would misread."""
    for name in env:
        if not name or "=" in name:
            raise HarnessError(f"invalid environment variable name {name!r}")
