"""Cluster: run planned pods as Linux namespaces on this machine, with kubectl the only stand-in.

Each pod is a named network namespace (eth0 on the harness's bridge, a 10.244.0.0/16 address) plus a
holder process (the pause container) that owns the pod's own UTS (hostname = pod name), IPC and mount
namespaces. In its private mount namespace the holder mounts a tmpfs on /dev/shm and /tmp, a
kubelet-style /etc/hosts, a resolv.conf without a nameserver, and every volume at its mountPath
(ConfigMap items with their modes, read-only; emptyDirs writable); mount points missing on the machine
are made in an overlay of their nearest existing parent, so the machine itself never changes. The
ConfigMap/emptyDir contents live in a work dir under /var/tmp (pods get their own /tmp).

`Cluster.run` enters a pod (`nsenter -t PID -n -u -m -i`) with a clean environment, like kubelet starts a
container, and guards every run with a timeout that kills whatever the run left behind. `stop` (also
via `with`, and atexit as a backstop) kills every process in the pods' namespaces, deletes the
namespaces and the work dir, whatever happened before. If Python itself is killed, everything it
started directly dies with it (parent-death signal), and `netns.remove_stale` deletes the namespaces
and work dirs of harnesses whose process is gone.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from . import netns, podfs, published
from .netns import HarnessError
from .pods import Container, Pod
from .values import ClusterOptions, Run, RunTimeout

KUBECTL_SH = Path(__file__).with_name("kubectl.sh")
POD_CIDR_PREFIX = "10.244."
# Kept across exec: whatever the harness starts directly dies with the Python that started it.
DIE_WITH_PYTEST = ("setpriv", "--pdeathsig", "KILL")
PREFIX = "mpge2e-"  # every namespace and work dir name starts with PREFIX + the creating Python's PID
WORKDIR_BASE = "/var/tmp"  # not /tmp: each pod mounts its own /tmp
_counter = itertools.count()
_live: set[Cluster] = set()


@dataclass(eq=False)
class Cluster:
    """Pods running as namespaces; use `with Cluster(pods) as cluster:` or start()/stop()."""

    pods: Sequence[Pod]
    options: ClusterOptions = field(default_factory=ClusterOptions)
    prefix: str = field(default_factory=lambda: f"{PREFIX}{os.getpid()}-{next(_counter)}")
    pids: dict[str, int] = field(default_factory=dict, init=False)
    workdir: Path = field(default=Path(), init=False)
    init_runs: list[Run] = field(default_factory=list, init=False)
    _procs: list[subprocess.Popen[bytes]] = field(default_factory=list, init=False)
    _holders: list[subprocess.Popen[bytes]] = field(default_factory=list, init=False)
    _created: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        self.netns = {pod.name: f"{self.prefix}-{i}" for i, pod in enumerate(self.pods)}
        self.address = {
            pod.name: f"{POD_CIDR_PREFIX}{(i + 2) // 256}.{(i + 2) % 256}" for i, pod in enumerate(self.pods)
        }
        self.bridge_ns = f"{self.prefix}-net"
        self.running = [pod for pod in self.pods if pod.name not in self.options.absent]
        self.by_name = {pod.name: pod for pod in self.pods}

    # -- life cycle -------------------------------------------------------------------------------

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Create the network, start every pod not `absent`; stop() on any failure."""
        netns.create_network(
            self.bridge_ns,
            [self.netns[p.name] for p in self.running],
            unroutable=self.options.unroutable_interface,
        )
        self._created = True
        _live.add(self)
        try:
            self.workdir = Path(tempfile.mkdtemp(prefix=f"{self.prefix}-", dir=WORKDIR_BASE))
            os.chmod(self.workdir, 0o755)
            mounts = {pod.name: self._prepare(pod) for pod in self.running}
            self._start_holders(mounts)
            for pod in self.running:
                self._write_enter(pod)
            for pod in self.running:
                if pod.role == "worker":  # the worker's own container (`sleep 365d`) runs as in a pod
                    self._procs.append(self._spawn(pod, pod.containers[0]))
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Kill every process in the pods, delete the namespaces and the work dir. Idempotent.

        Every step is tried even when an earlier one failed; the first failure is raised at the end.
        """
        _live.discard(self)
        if not self._created:
            return  # never made anything: the names may belong to someone else
        names = [*self.netns.values(), self.bridge_ns]
        errors: list[BaseException] = []
        steps: list[Callable[[], None]] = [
            lambda: netns.kill_all(netns.netns_inodes(names)),
            self._wait_procs,
            lambda: netns.delete_netns(names),
            self._remove_workdir,
        ]
        for step in steps:
            try:
                step()
            except Exception as exc:  # noqa: BLE001 - clean up as much as possible, report the first
                errors.append(exc)
        self._created = False
        if errors:
            raise errors[0]

    def _wait_procs(self) -> None:
        for proc in self._procs:
            proc.kill()
            proc.wait(timeout=10)
            for pipe in (proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()
        self._procs.clear()
        self._holders.clear()

    def _remove_workdir(self) -> None:
        if self.workdir != Path() and self.workdir.exists():
            shutil.rmtree(self.workdir)

    def leftovers(self) -> list[str]:
        """What of this cluster still exists on the machine (empty after stop())."""
        names = [*self.netns.values(), self.bridge_ns]
        out = sorted(netns.existing_netns().intersection(names))
        out += [f"pid {pid}" for pid in netns.pids_in(netns.netns_inodes(names))]
        if self.workdir != Path() and self.workdir.exists():
            out.append(str(self.workdir))
        return out

    # -- running things ---------------------------------------------------------------------------

    def command(
        self,
        pod: str,
        argv: Sequence[str],
        env: Mapping[str, str],
        cwd: str = "/",
        user: tuple[int, int] | None = None,
    ) -> list[str]:
        """The argv that runs `argv` inside `pod` with exactly `env` (as `user` (uid, gid), else root)."""
        if pod not in self.pids:
            raise HarnessError(f"pod {pod} is not running")
        podfs.check_env(env)
        pairs = [f"{k}={v}" for k, v in env.items()]
        as_user = (
            [] if user is None else ["setpriv", f"--reuid={user[0]}", f"--regid={user[1]}", "--clear-groups"]
        )
        return [
            "nsenter",
            "-t",
            str(self.pids[pod]),
            "-n",
            "-u",
            "-m",
            "-i",
            f"--wdns={cwd}",
            "--",
            *as_user,
            "env",
            "-i",
            *pairs,
            *argv,
        ]

    def container_env(self, pod: str, container: Container) -> dict[str, str]:
        """The env a container process gets: the image's env, HOSTNAME, HOME, then the spec's env."""
        image = self.options.image
        image_env = {**image.env, "HOSTNAME": self._hostname(pod), "HOME": image.home(container.run_as_user)}
        return {**image_env, **container.env_dict()}

    @staticmethod
    def user_of(container: Container) -> tuple[int, int] | None:
        """(uid, gid) a container runs as, None for the image's user (root here)."""
        if container.run_as_user is None and container.run_as_group is None:
            return None
        uid = container.run_as_user or 0
        return uid, container.run_as_group if container.run_as_group is not None else uid

    def run(
        self,
        pod: str,
        argv: Sequence[str],
        env: Mapping[str, str],
        timeout: float,
        cwd: str = "/",
        user: tuple[int, int] | None = None,
    ) -> Run:
        """Run `argv` in `pod`; on timeout kill it and all it started in every pod, raise RunTimeout."""
        start = time.monotonic()
        proc = subprocess.Popen(
            [*DIE_WITH_PYTEST, *self.command(pod, argv, env, cwd, user)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.reap(extra_group=proc.pid)
            out, err = proc.communicate(timeout=30)  # every writer was just killed
            raise RunTimeout(self._result(argv, proc.returncode, out, err, start), timeout) from None
        return self._result(argv, proc.returncode, out, err, start)

    def run_container(
        self, pod: str, container: Container, timeout: float, extra_env: Mapping[str, str] | None = None
    ) -> Run:
        """Run a container's command in its pod the way kubelet would, plus `extra_env` (harness-only)."""
        env = {**self.container_env(pod, container), **(extra_env or {})}
        argv = published.argv(container)
        return self.run(pod, argv, env, timeout, container.working_dir, self.user_of(container))

    def launcher(self) -> Pod:
        """The launcher pod (the one a Job made)."""
        found = [pod for pod in self.pods if pod.role == "launcher"]
        if len(found) != 1:
            raise HarnessError(f"expected one launcher pod, found {len(found)}")
        return found[0]

    def run_launcher(self, timeout: float, extra_env: Mapping[str, str] | None = None) -> Run:
        """Run the launcher pod's containers as kubelet would: init containers in order, then the main one.

        Each init container (kubectl-delivery, wait-for-workers) runs what it really runs (its command,
        else its image's published entrypoint: published.py) with its own env and must exit 0, else its
        Run is returned; `init_runs` keeps them all. `extra_env` goes to the main container only;
        `timeout` bounds each container.
        """
        pod = self.launcher()
        self.init_runs.clear()
        for init in pod.init_containers:
            done = self.run_container(pod.name, init, timeout)
            self.init_runs.append(done)
            if done.returncode != 0:
                return done
        return self.run_container(pod.name, pod.containers[0], timeout, extra_env)

    def reap(self, extra_group: int | None = None) -> None:
        """Kill whatever runs in the pods besides the holders and worker containers (and a group)."""
        if extra_group is not None:
            try:
                os.killpg(extra_group, signal.SIGKILL)
            except ProcessLookupError:
                pass
        keep = {proc.pid for proc in self._procs} | set(self.pids.values())
        netns.kill_all(netns.netns_inodes(self.netns.values()), keep=keep | self._holder_parents())

    def script_ready(self, pod: str, values: Sequence[str]) -> None:
        """What `kubectl get pod POD ...Ready...` prints on successive calls (the last value repeats).

        Values: "True", "False", "" (no Ready condition yet) or "NotFound". Call after start(); a pod
        that is `absent` can be scripted too (kubectl exec still finds no such pod).
        """
        if not self._created:
            raise HarnessError("script_ready needs a started cluster")
        path = self.workdir / "pods" / pod
        path.mkdir(parents=True, exist_ok=True)
        (path / "ready").write_text("".join(f"{v}\n" for v in values))
        # kubectl.sh pops the values as the container that calls it: mpigen's wait-for-workers runs as
        # nobody (65534), not as the harness's user, and replaces the file beside it.
        path.chmod(0o777)
        (path / "ready").chmod(0o666)

    # -- internals --------------------------------------------------------------------------------

    def _hostname(self, pod: str) -> str:
        return podfs.SHARED_HOSTNAME if self.options.shared_hostname else self.by_name[pod].host

    def _result(self, argv: Sequence[str], rc: int, out: bytes, err: bytes, start: float) -> Run:
        return Run(
            tuple(argv),
            rc,
            out.decode(errors="replace"),
            err.decode(errors="replace"),
            time.monotonic() - start,
        )

    def _holder_parents(self) -> set[int]:
        return {proc.pid for proc in self._holders}

    def _spawn(self, pod: Pod, container: Container) -> subprocess.Popen[bytes]:
        cmd = self.command(
            pod.name,
            published.argv(container),
            self.container_env(pod.name, container),
            container.working_dir,
            self.user_of(container),
        )
        with (self.workdir / "pods" / pod.name / "container.log").open("wb") as log:
            return subprocess.Popen(
                [*DIE_WITH_PYTEST, *cmd],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def container_log(self, pod: str) -> str:
        """What a worker pod's container printed so far (stdout and stderr)."""
        path = self.workdir / "pods" / pod / "container.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def wait_listening(self, port: int, pods: Sequence[str] | None = None, timeout: float = 20) -> None:
        """Wait until a TCP socket listens on `port` in each pod (workers by default): a readiness probe."""
        names = [p.name for p in self.running if p.role == "worker"] if pods is None else list(pods)
        deadline = time.monotonic() + timeout
        while names:
            names = [name for name in names if not netns.listening(self.pids[name], port)]
            if names and time.monotonic() > deadline:
                logs = "\n".join(f"--- {n}: {self.container_log(n)[-500:]}" for n in names[:3])
                raise HarnessError(f"nothing listens on port {port} after {timeout}s in {names}\n{logs}")
            if names:
                time.sleep(0.05)

    def _hosts(self, pod: Pod) -> str:
        if self.options.hosts == "cluster-dns":
            own = podfs.hosts_entry(pod, self.address[pod.name])
            searches = pod.search_list()
            dns = [podfs.dns_entry(p, self.address[p.name], searches) for p in self.running if p is not pod]
            return podfs.KUBELET_HOSTS + own + "".join(dns)
        shown = {"none": [], "kubelet": [pod], "pod-names": self.running}[self.options.hosts]
        return podfs.KUBELET_HOSTS + "".join(podfs.hosts_entry(p, self.address[p.name]) for p in shown)

    def _prepare(self, pod: Pod) -> list[str]:
        kubectl = podfs.kubectl_text(KUBECTL_SH.read_text(), self.workdir)
        root = self.workdir / "pods" / pod.name
        image = self.options.image.with_files(
            published.image_files([*pod.init_containers, *pod.containers], kubectl)
        )
        return podfs.prepare_pod_files(root, pod, self._hosts(pod), image)

    def _start_holders(self, mounts: dict[str, list[str]]) -> None:
        shm = None
        if self.options.shared_shm:
            shm = self.workdir / "shared-shm"
            shm.mkdir(mode=0o1777)
        for i, pod in enumerate(self.running):
            script = podfs.holder_script(
                hostname=self._hostname(pod.name),
                address=self.address[pod.name],
                index=i,
                mounts=mounts[pod.name],
                shm=shm,
                unroutable=self.options.unroutable_interface,
                run_dirs=self.options.image.run_dirs,
            )
            proc = podfs.start_holder(f"{netns.NETNS_DIR}/{self.netns[pod.name]}", script)
            self._holders.append(proc)
            self._procs.append(proc)
        deadline = time.monotonic() + podfs.HOLDER_START_TIMEOUT
        for pod, proc in zip(self.running, self._holders, strict=True):
            self.pids[pod.name] = podfs.read_holder_pid(pod.name, proc, deadline)

    def _write_enter(self, pod: Pod) -> None:
        """`pods/POD/enter CMD...`: what the fake kubectl execs (the pod's first container, clean env);
        `pods/POD/labels`: the pod's labels, one `key=value` a line, for `kubectl get -l`."""
        main = pod.containers[0]
        cmd = self.command(
            pod.name, [], self.container_env(pod.name, main), main.working_dir, self.user_of(main)
        )
        enter = self.workdir / "pods" / pod.name / "enter"
        enter.write_text(podfs.enter_script(cmd))
        enter.chmod(0o755)
        labels = "".join(f"{k}={v}\n" for k, v in sorted(pod.labels.items()))
        (self.workdir / "pods" / pod.name / "labels").write_text(labels)


StartCluster = Callable[..., Cluster]
"""The `start_cluster(objects, **ClusterOptions fields)` fixture's type."""


@atexit.register
def _stop_all() -> None:
    """Backstop: a cluster a crashed test never stopped is stopped when Python exits."""
    for cluster in list(_live):
        cluster.stop()
