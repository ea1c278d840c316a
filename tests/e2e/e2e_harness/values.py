"""Values: how a test's pods differ from plain ones (`ClusterOptions`), and what a command in a pod
produced (`Run`, or `RunTimeout` for one that did not finish)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Literal

from .image import PLAIN, Image
from .netns import HarnessError


@dataclass(frozen=True)
class ClusterOptions:
    """How pods differ from a plain cluster; the defaults are what a Kubernetes pod gets.

    hosts: what each pod's /etc/hosts names besides localhost: "kubelet" only the pod itself (what kubelet
        writes), "pod-names" every pod, "none" nothing (the pod cannot resolve even its own name),
        "cluster-dns" the pod itself plus what cluster DNS resolves: every pod with a subdomain as
        `<hostname>.<subdomain>.<ns>.svc[.cluster.local]` and `<hostname>.<subdomain>`.
    image: what every container's image adds to the machine's files and env (`image.py`).
    unroutable_interface: give every pod a second interface `net1` on a subnet that reaches nowhere
        (as a second CNI network or a host interface would).
    shared_hostname: every pod gets the hostname "shared-node" (as if they shared a UTS namespace).
    shared_shm: every pod mounts one common /dev/shm (as if they shared the host's).
    absent: pods that are planned but never started (kubectl says NotFound).
    """

    hosts: Literal["none", "kubelet", "pod-names", "cluster-dns"] = "kubelet"
    image: Image = PLAIN
    unroutable_interface: bool = False
    shared_hostname: bool = False
    shared_shm: bool = False
    absent: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Run:
    """One finished command in a pod."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def describe(self) -> str:
        """Exit code, time and the tail of both streams, for assertion messages."""
        return (
            f"$ {shlex.join(self.argv)}\nexit {self.returncode} after {self.seconds:.1f}s\n"
            f"--- stdout (tail)\n{self.stdout[-3000:]}\n--- stderr (tail)\n{self.stderr[-3000:]}"
        )


class RunTimeout(HarnessError):
    """A command in a pod did not finish in time; it and everything it started were killed."""

    def __init__(self, run: Run, timeout: float) -> None:
        super().__init__(f"timed out after {timeout}s\n{run.describe()}")
        self.run = run
