"""Namespaces: the harness's private network of named Linux network namespaces, and their clean-up.

One namespace holds a bridge (never the host's root namespace); each pod namespace is joined to it by a
veth pair whose pod end is `eth0`. Nothing here has a route off the bridge, so no packet can leave the
machine. `ip -batch` keeps namespace creation to a handful of processes even for 70+ pods.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterable, Sequence

NETNS_DIR = "/run/netns"
BRIDGE = "br0"


class HarnessError(Exception):
    """The harness could not set up, run or clean up (the message says what and why)."""


def ip_batch(commands: Sequence[str], netns: str | None = None) -> None:
    """Run `ip` commands in one process (`ip [-n NETNS] -batch -`); raise with ip's error on failure."""
    if not commands:
        return
    argv = ["ip", *(["-n", netns] if netns else []), "-batch", "-"]
    done = subprocess.run(argv, input="\n".join(commands) + "\n", capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise HarnessError(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")


def existing_netns() -> set[str]:
    """Names of the named network namespaces on this machine."""
    try:
        return set(os.listdir(NETNS_DIR))
    except FileNotFoundError:
        return set()


def create_network(bridge_ns: str, pod_ns: Sequence[str], unroutable: bool = False) -> None:
    """Create the bridge namespace and one namespace per pod with `eth0` plugged into the bridge.

    With `unroutable`, each pod also gets `net1`, a veth whose other end stays unplugged in the bridge
    namespace: an interface with an address and a subnet route that reaches nothing.

    Refuses (HarnessError, nothing created) when any of the names already exists: a previous run that
    was killed before its clean-up, or another harness using the same prefix.
    """
    taken = sorted(existing_netns().intersection([bridge_ns, *pod_ns]))
    if taken:
        raise HarnessError(
            f"network namespaces already exist: {', '.join(taken)}; delete them with "
            f"`ip netns del NAME` after checking nothing uses them"
        )
    ip_batch([f"netns add {name}" for name in (bridge_ns, *pod_ns)])
    links = [f"link add {BRIDGE} type bridge", f"link set {BRIDGE} up"]
    for i, name in enumerate(pod_ns):
        links += [f"link add v{i} type veth peer name eth0 netns {name}", f"link set v{i} master {BRIDGE} up"]
        if unroutable:
            links += [f"link add u{i} type veth peer name net1 netns {name}", f"link set u{i} up"]
    ip_batch(links, netns=bridge_ns)


def netns_inodes(names: Iterable[str]) -> set[tuple[int, int]]:
    """(device, inode) of each named namespace that still exists."""
    out = set()
    for name in names:
        try:
            st = os.stat(os.path.join(NETNS_DIR, name))
        except FileNotFoundError:
            continue
        out.add((st.st_dev, st.st_ino))
    return out


def pids_in(inodes: set[tuple[int, int]]) -> list[int]:
    """Every process whose network namespace is one of `inodes` (one pass over /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            st = os.stat(f"/proc/{entry}/ns/net")
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in inodes:
            found.append(int(entry))
    return found


def kill_all(inodes: set[tuple[int, int]], keep: Iterable[int] = (), rounds: int = 50) -> None:
    """SIGKILL every process in these namespaces except `keep`, until none is left (or raise)."""
    keep = set(keep)
    for _ in range(rounds):
        victims = [pid for pid in pids_in(inodes) if pid not in keep]
        if not victims:
            return
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.02)
    raise HarnessError(f"processes survive SIGKILL in the harness namespaces: {victims}")


def remove_stale(prefix: str, workdir_base: str) -> list[str]:
    """Remove what harnesses whose Python process is gone left behind (killed before their atexit).

    Names are `<prefix><pid>-<n>-...`; only those of PIDs that no longer run are touched. Returns the
    namespaces removed.
    """
    pattern = re.compile(rf"{re.escape(prefix)}(\d+)-")
    dead = sorted(
        n for n in existing_netns() if (m := pattern.match(n)) and not os.path.exists(f"/proc/{m[1]}")
    )
    if dead:
        kill_all(netns_inodes(dead))
        delete_netns(dead)
    for entry in os.listdir(workdir_base):
        m = pattern.match(entry)
        if m and not os.path.exists(f"/proc/{m[1]}"):
            shutil.rmtree(os.path.join(workdir_base, entry), ignore_errors=True)
    return dead


def listening(pid: int, port: int) -> bool:
    """A TCP socket listens on `port` in the network namespace of process `pid` (/proc/PID/net/tcp*)."""
    want = f":{port:04X}"
    for name in ("tcp", "tcp6"):
        try:
            with open(f"/proc/{pid}/net/{name}") as table:
                lines = table.read().splitlines()[1:]
        except FileNotFoundError:
            continue
        # columns: sl local_address rem_address st ...; st 0A is LISTEN
        if any(words[1].endswith(want) and words[3] == "0A" for words in map(str.split, lines)):
            return True
    return False


def delete_netns(names: Sequence[str]) -> None:
    """Delete these named namespaces (those that still exist)."""
    ip_batch([f"netns del {name}" for name in names if name in existing_netns()])
