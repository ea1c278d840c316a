"""A throwaway Kubernetes control plane for the tests: etcd and kube-apiserver on 127.0.0.1, then on demand
kube-controller-manager, kube-scheduler and kwok (fake nodes whose pods become Running and Ready with no
kubelet).

Everything lives in one temporary directory: a CA, the API server's serving certificate, an admin client
certificate (group system:masters), the service-account signing key, a kubeconfig, etcd's data and one log
per process. Ports are free ports picked at start. Each process runs in its own process group and is
killed with its parent (PR_SET_PDEATHSIG), so neither a failing test session nor a killed pytest leaves a
process or a port behind; `stop()` (also registered with atexit) ends them and removes the directory.
"""

from __future__ import annotations

import atexit
import ctypes
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import restget
import yaml

SERVICE_CIDR = "10.96.0.0/16"
START_TIMEOUT = 120.0

# kube-controller-manager's controllers the tests rely on, and nothing else.
CONTROLLERS = (
    "serviceaccount-token-controller",
    "serviceaccount-controller",
    "root-ca-certificate-publisher-controller",
    "job-controller",
    "ttl-after-finished-controller",
    "garbage-collector-controller",
    "statefulset-controller",
    "namespace-controller",
)

FAKE_NODE_ANNOTATION = "kwok.x-k8s.io/node"
# A pod with this annotation stays Pending on its fake node until a test removes the annotation.
HOLD_ANNOTATION = "mpigen-test-hold"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _die_with_parent() -> None:
    """In the child before exec: get SIGKILL when the test process dies, however it dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def openssl(*argv: str, cwd: Path) -> None:
    subprocess.run(["openssl", *argv], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_pki(pki: Path) -> None:
    """CA, API server certificate for 127.0.0.1, admin client certificate, service-account key pair."""
    pki.mkdir(parents=True)
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    openssl(
        "req",
        "-x509",
        *ec,
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "3",
        "-subj",
        "/CN=mpigen-test-ca",
        cwd=pki,
    )
    leaves = {
        "apiserver": (
            "/CN=kube-apiserver",
            (
                "subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,"
                "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth"
            ),
        ),
        "admin": ("/O=system:masters/CN=mpigen-test-admin", "extendedKeyUsage=clientAuth"),
    }
    for name, (subject, extensions) in leaves.items():
        (pki / f"{name}.ext").write_text(extensions + "\n")
        openssl("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", subject, cwd=pki)
        openssl(
            "x509",
            "-req",
            "-in",
            f"{name}.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            f"{name}.crt",
            "-days",
            "3",
            "-extfile",
            f"{name}.ext",
            cwd=pki,
        )
    openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "sa.key", cwd=pki)
    openssl("pkey", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=pki)


def kubeconfig(server: str, ca: Path, user: dict[str, str], namespace: str | None = None) -> str:
    context: dict[str, str] = {"cluster": "test", "user": "user"}
    if namespace:
        context["namespace"] = namespace
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "test", "cluster": {"server": server, "certificate-authority": str(ca)}}],
        "users": [{"name": "user", "user": user}],
        "contexts": [{"name": "test", "context": context}],
        "current-context": "test",
    }
    return yaml.safe_dump(config)


@dataclass
class Cluster:
    """A running control plane (or an existing cluster reached through `admin_kubeconfig`)."""

    kubectl_path: str
    admin_kubeconfig: Path
    workdir: Path
    server: str = ""
    ca: Path | None = None
    owned: bool = True  # started by the suite (so it may have fake nodes and be torn down)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    log_files: dict[str, Path] = field(default_factory=dict)
    reader: restget.Reader | None = field(default=None, repr=False)

    # ---- kubectl ----------------------------------------------------------------------------------

    def kubectl(
        self,
        *argv: str,
        input: str | None = None,
        kubeconfig: Path | None = None,
        check: bool = True,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "KUBECONFIG": str(kubeconfig or self.admin_kubeconfig)}
        done = subprocess.run(
            [self.kubectl_path, *argv],
            input=input,
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(argv)} failed ({done.returncode}):\n{done.stderr}{done.stdout}"
            )
        return done

    def get(self, *argv: str, kubeconfig: Path | None = None) -> Any:
        """`kubectl get <argv> -o json`, parsed; on the suite's own control plane, as admin, read over
        HTTPS where tests/cluster/restget.py can (the same JSON without a kubectl process)."""
        reader = self.own_reader() if kubeconfig is None else None
        found = reader.get(argv) if reader else None
        if found is not None:
            return found
        return json.loads(self.kubectl("get", *argv, "-o", "json", kubeconfig=kubeconfig).stdout)

    def find(self, resource: str, name: str, *argv: str) -> Any | None:
        """The object `kubectl get <resource> <name> <argv> -o json` prints, or None where there is
        none (`--ignore-not-found`)."""
        reader = self.own_reader()
        try:
            found = reader.get((resource, name, *argv)) if reader else None
        except restget.Refused as refused:
            if refused.reason == "NotFound":
                return None
            raise
        if found is not None:
            return found
        found = self.kubectl("get", resource, name, *argv, "--ignore-not-found", "-o", "json").stdout
        return json.loads(found) if found.strip() else None

    def own_reader(self) -> restget.Reader | None:
        """The HTTPS reader of the suite's own control plane (None for an existing cluster)."""
        if self.reader is None and self.owned and self.ca is not None:
            self.reader = restget.Reader(self.server, self.ca.parent)
        return self.reader

    def create_namespace(self, prefix: str) -> str:
        """A fresh namespace (`prefix-<n>`), deleted with the cluster (or by `delete_namespaces`)."""
        prefix = re.sub(r"[^a-z0-9]+", "-", prefix.lower()).strip("-")[:50].strip("-") or "t"
        done = self.kubectl(
            "create",
            "-f",
            "-",
            "-o",
            "name",
            input=yaml.safe_dump(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": f"{prefix}-"}}
            ),
        )
        return done.stdout.strip().split("/", 1)[1]

    def token_kubeconfig(
        self, namespace: str, service_account: str, directory: Path, bound_pod: str | None = None
    ) -> Path:
        """A kubeconfig that acts as `service_account` with a token from TokenRequest (bound to the pod
        `bound_pod`, as the kubelet's projected token is: the API server then adds the pod's name to the
        user's extra)."""
        bound = ["--bound-object-kind=Pod", f"--bound-object-name={bound_pod}"] if bound_pod else []
        token = self.kubectl(
            "create", "token", service_account, "-n", namespace, "--duration=1h", *bound
        ).stdout.strip()
        admin = yaml.safe_load(self.admin_kubeconfig.read_text())
        context = next(c for c in admin["contexts"] if c["name"] == admin["current-context"])["context"]
        cluster = next(c for c in admin["clusters"] if c["name"] == context["cluster"])
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "c", "cluster": cluster["cluster"]}],
            "users": [{"name": "u", "user": {"token": token}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u", "namespace": namespace}}],
            "current-context": "c",
        }
        path = directory / f"{namespace}-{service_account}{'-' + bound_pod if bound_pod else ''}.kubeconfig"
        path.write_text(yaml.safe_dump(config))
        path.chmod(0o600)
        return path

    def wait_for(self, what: str, predicate: Any, timeout: float = 60, interval: float = 0.5) -> Any:
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            last = predicate()
            if last:
                return last
            time.sleep(interval)
        raise AssertionError(
            f"timed out after {timeout:.0f}s waiting for {what} (last: {last!r})\n{self.logs_tail()}"
        )

    def logs_tail(self, lines: int = 15) -> str:
        parts = []
        for name, path in self.log_files.items():
            if path.exists():
                tail = path.read_text(errors="replace").splitlines()[-lines:]
                parts.append(f"--- {name} ({path}):\n" + "\n".join(tail))
        return "\n".join(parts)

    # ---- processes --------------------------------------------------------------------------------

    def start(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        log = self.workdir / "logs" / f"{name}.log"
        log.parent.mkdir(exist_ok=True)
        with log.open("wb") as out:
            self.processes[name] = subprocess.Popen(
                argv,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.workdir,
                # The suite starts no threads; the child only calls prctl before exec.
                start_new_session=True,
                preexec_fn=_die_with_parent,  # noqa: PLW1509
                env={**os.environ, **(env or {})},
            )
        self.log_files[name] = log

    def check_running(self) -> None:
        for name, process in self.processes.items():
            if process.poll() is not None:
                raise RuntimeError(f"{name} exited with {process.returncode}\n{self.logs_tail(40)}")

    def stop(self) -> None:
        """End every process group this cluster started (TERM, then KILL), then remove its directory."""
        for process in reversed(list(self.processes.values())):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in reversed(list(self.processes.values())):
            try:
                process.wait(timeout=5)  # a thrown-away control plane: no need to wait long for a clean exit
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=15)
            try:
                os.killpg(process.pid, signal.SIGKILL)  # anything the process left in its group
            except ProcessLookupError:
                pass
        self.processes.clear()
        if self.owned and os.environ.get("MPIGEN_CLUSTER_KEEP") != "1":
            shutil.rmtree(self.workdir, ignore_errors=True)


def _https_ok(url: str, pki: Path) -> bool:
    context = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    context.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
    try:
        with urllib.request.urlopen(url, context=context, timeout=5) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def _wait_ready(cluster: Cluster, what: str, ready: Any) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while not ready():
        cluster.check_running()
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} not ready after {START_TIMEOUT:.0f}s\n{cluster.logs_tail(40)}")
        time.sleep(0.3)


# Kubernetes 1.37's own gang scheduling (scheduling.k8s.io/v1beta1 Workload and PodGroup, the pod's
# schedulingGroup, kube-scheduler's gangscheduling plugin): a beta gate, off by default, on every component,
# and the API group's version, off by default, on the API server.
GANG_GATES = ("--feature-gates=GenericWorkload=true",)
GANG_RUNTIME_CONFIG = "--runtime-config=scheduling.k8s.io/v1beta1=true"
# Removes the finalizer every PodGroup gets; only with the gate.
GANG_CONTROLLERS = (*CONTROLLERS, "podgroup-protection-controller")


def start_control_plane(binaries: dict[str, str], kubectl: str, extra_args: tuple[str, ...] = ()) -> Cluster:
    """etcd and kube-apiserver; RBAC and Node authorisation, TokenRequest, an admin kubeconfig;
    `extra_args` added to kube-apiserver's (feature gates, runtime config)."""
    workdir = Path(tempfile.mkdtemp(prefix="mpigen-cluster-"))
    admin_kubeconfig = workdir / "admin.kubeconfig"
    cluster = Cluster(kubectl_path=kubectl, admin_kubeconfig=admin_kubeconfig, workdir=workdir)
    atexit.register(cluster.stop)
    try:
        pki = workdir / "pki"
        make_pki(pki)
        cluster.ca = pki / "ca.crt"
        client, peer, secure = free_port(), free_port(), free_port()
        etcd_url = f"http://127.0.0.1:{client}"
        cluster.start(
            "etcd",
            [
                binaries["etcd"],
                "--name=test",
                f"--data-dir={workdir / 'etcd'}",
                f"--listen-client-urls={etcd_url}",
                f"--advertise-client-urls={etcd_url}",
                f"--listen-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-cluster=test=http://127.0.0.1:{peer}",
                "--unsafe-no-fsync",
                "--log-level=warn",
            ],
        )
        cluster.server = f"https://127.0.0.1:{secure}"
        cluster.start(
            "kube-apiserver",
            [
                binaries["kube-apiserver"],
                f"--etcd-servers={etcd_url}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={secure}",
                "--endpoint-reconciler-type=none",  # 127.0.0.1 may not be a Service endpoint
                f"--cert-dir={workdir / 'apiserver-certs'}",
                f"--tls-cert-file={pki / 'apiserver.crt'}",
                f"--tls-private-key-file={pki / 'apiserver.key'}",
                f"--client-ca-file={pki / 'ca.crt'}",
                "--authorization-mode=Node,RBAC",
                f"--service-account-issuer={cluster.server}",
                f"--service-account-key-file={pki / 'sa.pub'}",
                f"--service-account-signing-key-file={pki / 'sa.key'}",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                "--allow-privileged=true",
                "--enable-admission-plugins=NodeRestriction",
                "--v=1",
                *extra_args,
            ],
        )
        admin_kubeconfig.write_text(
            kubeconfig(
                cluster.server,
                pki / "ca.crt",
                {"client-certificate": str(pki / "admin.crt"), "client-key": str(pki / "admin.key")},
            )
        )
        _wait_ready(cluster, "kube-apiserver", lambda: _https_ok(f"{cluster.server}/readyz", pki))
        return cluster
    except BaseException:
        cluster.stop()
        raise


# A pod being deleted that the API server marked disrupted (the Eviction API, a drain): a kubelet kills
# its containers (exit 137) and reports it Failed, conditions kept (pod-disrupted), then deletes it,
# leaving its finalizers to their owners (pod-disrupted-delete): the Job controller reads the failure
# for its podFailurePolicy and removes its job-tracking finalizer itself. kwok's plain pod-delete
# would drop the pod unfailed, its finalizers stripped, and the Job would never count it.
_DISRUPTED = (
    '[.status.conditions[]? | select(.type == "DisruptionTarget" and .status == "True")] | length > 0'
)
KWOK_STAGES = """\
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: node-ready}
spec:
  resourceRef: {apiGroup: v1, kind: Node}
  selector:
    matchExpressions:
    - {key: '.status.conditions.[] | select( .type == "Ready" ) | .status', operator: NotIn, values: ['True']}
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - {type: Ready, status: "True", reason: KubeletReady, message: kwok, lastHeartbeatTime: {{ $now | Quote }}, lastTransitionTime: {{ $now | Quote }}}
      capacity: {cpu: "1000", memory: 1Ti, ephemeral-storage: 1Ti, pods: "1000", nvidia.com/gpu: "1000"}
      allocatable: {cpu: "1000", memory: 1Ti, ephemeral-storage: 1Ti, pods: "1000", nvidia.com/gpu: "1000"}
      phase: Running
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: pod-running}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: .metadata.deletionTimestamp, operator: DoesNotExist}
    - {key: .status.phase, operator: In, values: [Pending]}
    - {key: '.metadata.annotations["mpigen-test-hold"]', operator: DoesNotExist}
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - {type: Initialized, status: "True", lastTransitionTime: {{ $now | Quote }}}
      - {type: ContainersReady, status: "True", lastTransitionTime: {{ $now | Quote }}}
      - {type: Ready, status: "True", lastTransitionTime: {{ $now | Quote }}}
      containerStatuses:
      {{ range .spec.containers }}
      - {name: {{ .name | Quote }}, image: {{ .image | Quote }}, ready: true, restartCount: 0, started: true, state: {running: {startedAt: {{ $now | Quote }}}}}
      {{ end }}
      phase: Running
      startTime: {{ $now | Quote }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: pod-disrupted}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: .metadata.deletionTimestamp, operator: Exists}
    - {key: '@DISRUPTED@', operator: In, values: ['true']}
    - {key: .status.phase, operator: NotIn, values: [Failed, Succeeded]}
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      {{ range .status.conditions }}
      {{ if or (eq .type "Ready") (eq .type "ContainersReady") }}
      - {type: {{ .type | Quote }}, status: "False", reason: PodFailed, lastTransitionTime: {{ $now | Quote }}}
      {{ else }}
      - {type: {{ .type | Quote }}, status: {{ .status | Quote }}{{ if .reason }}, reason: {{ .reason | Quote }}{{ end }}{{ if .message }}, message: {{ .message | Quote }}{{ end }}{{ if .lastTransitionTime }}, lastTransitionTime: {{ .lastTransitionTime | Quote }}{{ end }}}
      {{ end }}
      {{ end }}
      containerStatuses:
      {{ range .spec.containers }}
      - {name: {{ .name | Quote }}, image: {{ .image | Quote }}, ready: false, restartCount: 0, started: false, state: {terminated: {exitCode: 137, reason: Error, startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }}}}}
      {{ end }}
      phase: Failed
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: pod-delete}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: .metadata.deletionTimestamp, operator: Exists}
    - {key: '@DISRUPTED@', operator: NotIn, values: ['true']}
  next:
    finalizers: {empty: true}
    delete: true
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: pod-disrupted-delete}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: .metadata.deletionTimestamp, operator: Exists}
    - {key: '@DISRUPTED@', operator: In, values: ['true']}
    - {key: .status.phase, operator: In, values: [Failed, Succeeded]}
  next:
    delete: true
""".replace("@DISRUPTED@", _DISRUPTED)


def start_workloads(
    cluster: Cluster,
    binaries: dict[str, str],
    nodes: int = 3,
    controllers: tuple[str, ...] = CONTROLLERS,
    extra_args: tuple[str, ...] = (),
) -> None:
    """kube-controller-manager (running `controllers`), kube-scheduler when `binaries` has it, and kwok with
    `nodes` fake nodes (no pod ever completes by itself: the tests decide how each launcher pod ends);
    `extra_args` added to kube-controller-manager's and kube-scheduler's (feature gates)."""
    assert cluster.ca is not None
    pki = cluster.ca.parent
    kubeconfig_flag = f"--kubeconfig={cluster.admin_kubeconfig}"
    cluster.start(
        "kube-controller-manager",
        [
            binaries["kube-controller-manager"],
            kubeconfig_flag,
            "--leader-elect=false",
            "--bind-address=127.0.0.1",
            f"--secure-port={free_port()}",
            f"--authentication-kubeconfig={cluster.admin_kubeconfig}",
            f"--authorization-kubeconfig={cluster.admin_kubeconfig}",
            f"--controllers={','.join(controllers)}",
            f"--root-ca-file={pki / 'ca.crt'}",
            f"--service-account-private-key-file={pki / 'sa.key'}",
            "--use-service-account-credentials=false",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            "--v=1",
            *extra_args,
        ],
    )
    if "kube-scheduler" in binaries:
        cluster.start(
            "kube-scheduler",
            [
                binaries["kube-scheduler"],
                kubeconfig_flag,
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={free_port()}",
                f"--authentication-kubeconfig={cluster.admin_kubeconfig}",
                f"--authorization-kubeconfig={cluster.admin_kubeconfig}",
                "--v=1",
                *extra_args,
            ],
        )
    stages = cluster.workdir / "kwok-stages.yaml"
    stages.write_text(KWOK_STAGES)
    cluster.start(
        "kwok",
        [
            binaries["kwok"],
            kubeconfig_flag,
            f"--config={stages}",
            "--manage-all-nodes=false",
            f"--manage-nodes-with-annotation-selector={FAKE_NODE_ANNOTATION}=fake",
            "--node-ip=10.244.0.1",
            "--cidr=10.244.0.0/16",
            "--server-address=127.0.0.1:" + str(free_port()),
        ],
        env={"HOME": str(cluster.workdir)},
    )  # no ~/.kwok/kwok.yaml of the user's
    for index in range(nodes):
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": f"fake-{index}",
                "annotations": {FAKE_NODE_ANNOTATION: "fake"},
                "labels": {"kubernetes.io/hostname": f"fake-{index}", "type": "kwok"},
            },
        }
        cluster.kubectl("apply", "-f", "-", input=json.dumps(node))
        # Admission taints a new node not-ready; without the node lifecycle controller (not run here: it
        # would judge kwok's nodes by heartbeats) nobody lifts it.
        cluster.kubectl(
            "taint", "node", f"fake-{index}", "node.kubernetes.io/not-ready:NoSchedule-", check=False
        )

    def nodes_ready() -> bool:
        cluster.check_running()
        listed = cluster.get("nodes")["items"]
        return len(listed) >= nodes and all(
            any(
                c["type"] == "Ready" and c["status"] == "True"
                for c in n.get("status", {}).get("conditions", [])
            )
            for n in listed
        )

    _wait_ready(cluster, "kwok nodes", nodes_ready)


def add_node(cluster: Cluster, name: str, labels: dict[str, str] | None = None) -> None:
    """A kwok fake node `name` (kwok makes it Ready), schedulable at once."""
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {FAKE_NODE_ANNOTATION: "fake"},
            "labels": {"kubernetes.io/hostname": name, "type": "kwok", **(labels or {})},
        },
    }
    cluster.kubectl("apply", "-f", "-", input=json.dumps(node))
    # Admission taints a new node not-ready; without the node lifecycle controller (not run here: it
    # would judge kwok's nodes by heartbeats) nobody lifts it.
    cluster.kubectl("taint", "node", name, "node.kubernetes.io/not-ready:NoSchedule-", check=False)


def end_pod(cluster: Cluster, namespace: str, pod: str, phase: str) -> None:
    """What the kubelet reports when the pod's only container exits (0 for Succeeded, 1 for Failed)."""
    current = cluster.get("pod", pod, "-n", namespace)
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    code = 0 if phase == "Succeeded" else 1
    reason = "Completed" if code == 0 else "Error"
    statuses = [
        {
            "name": container["name"],
            "image": container["image"],
            "imageID": "",
            "ready": False,
            "restartCount": 0,
            "started": False,
            "state": {
                "terminated": {"exitCode": code, "reason": reason, "startedAt": now, "finishedAt": now}
            },
        }
        for container in current["spec"]["containers"]
    ]
    conditions = [
        {
            "type": kind,
            "status": "False",
            "reason": "PodCompleted" if code == 0 else "PodFailed",
            "lastTransitionTime": now,
        }
        for kind in ("Ready", "ContainersReady")
    ]
    patch = {"status": {"phase": phase, "containerStatuses": statuses, "conditions": conditions}}
    cluster.kubectl(
        "patch",
        "pod",
        pod,
        "-n",
        namespace,
        "--subresource=status",
        "--type=strategic",
        "-p",
        json.dumps(patch),
    )
