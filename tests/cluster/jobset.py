"""The JobSet controller and Kueue, built from their pinned Go modules (gotools.py), on a control plane of
the suite's own with kube-controller-manager, kube-scheduler and kwok fake nodes.

Everything they need comes from the same pinned modules in the Go module cache (`gotools.module_dir`):
the CRDs (`config/components/crd/bases`) and the admission webhook configurations, built by the suite's
kustomize from each module's `config/components/webhook` (upstream's own patches, such as the pod webhooks'
object selector, included). The suite only points each webhook at 127.0.0.1 (the API server reaches the
controllers on localhost) with the control plane's CA, and prefixes the configurations' names as
upstream's `config/default` does (`jobset-`, `kueue-`).

- JobSet v0.12: internal certificate management off, so it serves its webhooks with a certificate the
  suite signs for 127.0.0.1; without its webhooks nothing fills the defaults (`spec.network`, ...) and
  the controller fails on them.
- Kueue v0.19: the batch/Job and JobSet integrations only, and only the webhooks of its core objects and
  of those integrations (the others answer 404 and, failurePolicy Fail, would block their objects). With
  internal certificate management off it reads a metrics certificate from the fixed path
  /etc/kueue/metrics/certs, metrics served or not: it runs in a mount namespace of its own (`unshare`)
  whose /etc is an overlay holding that certificate, so nothing is written to the host's /etc.

Logs: one file per process under the control plane's directory (`logs/`), shown by `Cluster.logs_tail`
in every timeout message.
"""

from __future__ import annotations

import base64
import concurrent.futures
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import controlplane
import gotools
import yaml
from controlplane import Cluster

KUEUE_FRAMEWORKS = ("batch/job", "jobset.x-k8s.io/jobset")
# Kueue's webhooks kept: its own objects, and the two integrations enabled above.
KUEUE_WEBHOOKS = frozenset(
    {
        "mclusterqueue.kb.io",
        "mresourceflavor.kb.io",
        "mworkload.kb.io",
        "mjob.kb.io",
        "mjobset.kb.io",
        "vclusterqueue.kb.io",
        "vcohort.kb.io",
        "vresourceflavor.kb.io",
        "vworkload.kb.io",
        "vjob.kb.io",
        "vjobset.kb.io",
    }
)
KUEUE_NAMESPACE = "kueue-system"
RESOURCE_FLAVOR = "default-flavor"

# Run Kueue with /etc/kueue/metrics/certs/tls.{crt,key} in a private overlay of /etc: $1 an empty
# directory for the overlay's writable layer, $2 the certificate's directory, then Kueue's argv.
KUEUE_MOUNT_SCRIPT = """\
set -e
layer=$1 certs=$2
shift 2
mount -t tmpfs tmpfs "$layer"
mkdir "$layer/upper" "$layer/work"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$layer/upper,workdir=$layer/work" /etc
mkdir -p /etc/kueue/metrics/certs
cp "$certs/tls.crt" "$certs/tls.key" /etc/kueue/metrics/certs/
exec "$@"
"""


@dataclass(frozen=True)
class Server:
    """A controller's webhook and health endpoints on 127.0.0.1, and its serving certificate."""

    webhook_port: int
    health_port: int
    cert_dir: Path


def serving_certificate(cluster: Cluster, name: str) -> Path:
    """A directory with tls.crt and tls.key for 127.0.0.1, signed by the control plane's CA (openssl, as
    the control plane's own certificates)."""
    assert cluster.ca is not None
    pki = cluster.ca.parent
    directory = cluster.workdir / f"{name}-certs"
    directory.mkdir()
    (directory / "ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    controlplane.openssl(
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        "tls.key",
        "-out",
        "tls.csr",
        "-subj",
        f"/CN={name}",
        cwd=directory,
    )
    controlplane.openssl(
        "x509",
        "-req",
        "-in",
        "tls.csr",
        "-CA",
        str(pki / "ca.crt"),
        "-CAkey",
        str(pki / "ca.key"),
        "-CAcreateserial",
        "-out",
        "tls.crt",
        "-days",
        "3",
        "-extfile",
        "ext",
        cwd=directory,
    )
    return directory


def _documents(path: Path) -> list[dict[str, Any]]:
    # libyaml's loader where PyYAML has it: the Kueue and JobSet CRDs are 1.5 MB of YAML
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return [doc for doc in yaml.load_all(path.read_text(), Loader=loader) if doc]


def crds(module: Path) -> list[dict[str, Any]]:
    """The CRDs a module's `config/components/crd/kustomization.yaml` lists, from their bases, without the
    conversion-webhook patches (each CRD here is served at one stored version; nothing converts)."""
    kustomization = yaml.safe_load((module / "config/components/crd/kustomization.yaml").read_text())
    found = []
    for resource in kustomization["resources"]:
        found += _documents(module / "config/components/crd" / resource)
    return found


def webhook_configurations(
    module: Path, kustomize: str, prefix: str, server: Server, ca: Path, keep: frozenset[str] | None = None
) -> list[dict[str, Any]]:
    """The module's mutating and validating webhook configurations as its kustomization builds them,
    each webhook sent to https://127.0.0.1:<port><its path> and trusted through `ca`; `keep`: the only
    webhooks to register (by name)."""
    built = subprocess.run(
        [kustomize, "build", str(module / "config/components/webhook")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if built.returncode != 0:
        raise AssertionError(f"kustomize build {module}/config/components/webhook failed:\n{built.stderr}")
    bundle = base64.b64encode(ca.read_bytes()).decode()
    configurations = []
    for doc in yaml.safe_load_all(built.stdout):
        if not doc or not doc["kind"].endswith("WebhookConfiguration"):
            continue  # the webhook Service: the API server calls 127.0.0.1 directly
        webhooks = [hook for hook in doc["webhooks"] if keep is None or hook["name"] in keep]
        for hook in webhooks:
            path = hook["clientConfig"]["service"]["path"]
            hook["clientConfig"] = {
                "url": f"https://127.0.0.1:{server.webhook_port}{path}",
                "caBundle": bundle,
            }
        doc["metadata"] = {"name": prefix + doc["metadata"]["name"]}
        doc["webhooks"] = webhooks
        configurations.append(doc)
    kinds = sorted(doc["kind"] for doc in configurations)
    if kinds != ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]:
        raise AssertionError(f"{module}: expected one mutating and one validating configuration, got {kinds}")
    if keep is not None:
        missing = keep - {hook["name"] for doc in configurations for hook in doc["webhooks"]}
        if missing:
            raise AssertionError(f"{module}: no webhooks named {sorted(missing)}")
    return configurations


def create_missing(cluster: Cluster, objects: list[dict[str, Any]]) -> None:
    """create_all of the cluster-scoped `objects` (CRDs) not there yet: two test modules of one session
    (one xdist worker) install the same PodGroup CRDs."""
    missing = [
        o
        for o in objects
        if not cluster.kubectl(
            "get", o["kind"].lower(), o["metadata"]["name"], "--ignore-not-found", "-o", "name"
        ).stdout.strip()
    ]
    if missing:
        create_all(cluster, missing)


def create_all(cluster: Cluster, objects: list[dict[str, Any]]) -> None:
    """`kubectl create` (the JobSet CRD's last-applied annotation would pass 256 KiB with a client-side
    apply), then wait for every CRD among them to be Established."""
    listed = {"apiVersion": "v1", "kind": "List", "items": objects}
    cluster.kubectl("create", "-f", "-", input=json.dumps(listed))
    names = {o["metadata"]["name"] for o in objects if o["kind"] == "CustomResourceDefinition"}
    if not names:
        return

    def established() -> bool:
        # not `kubectl wait`: it fails outright on a CRD that has no status.conditions yet
        listed = cluster.get("crd")["items"]
        return names <= {
            crd["metadata"]["name"]
            for crd in listed
            if any(
                c["type"] == "Established" and c["status"] == "True"
                for c in (crd.get("status") or {}).get("conditions") or []
            )
        }

    cluster.wait_for(f"CRDs {sorted(names)} Established", established, timeout=60, interval=0.2)


def _ready(port: int) -> bool:
    try:
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def wait_ready(
    cluster: Cluster, name: str, server: Server, timeout: float = controlplane.START_TIMEOUT
) -> None:
    deadline = time.monotonic() + timeout
    while not _ready(server.health_port):
        cluster.check_running()
        if time.monotonic() > deadline:
            raise RuntimeError(f"{name} not ready after {timeout:.0f}s\n{cluster.logs_tail(40)}")
        time.sleep(0.3)


def _server(cluster: Cluster, name: str) -> Server:
    return Server(controlplane.free_port(), controlplane.free_port(), serving_certificate(cluster, name))


def _controller_config(server: Server) -> dict[str, Any]:
    """The settings JobSet's and Kueue's Configuration kinds share: no leader election, no certificate
    management of their own, webhooks and health on 127.0.0.1, no metrics endpoint."""
    return {
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": False},
        "webhook": {"host": "127.0.0.1", "port": server.webhook_port, "certDir": str(server.cert_dir)},
        "metrics": {"bindAddress": "0"},
        "health": {"healthProbeBindAddress": f"127.0.0.1:{server.health_port}"},
    }


def start_jobset(cluster: Cluster, binary: str) -> Server:
    """Start the JobSet controller (its CRD installed); `register_webhooks` waits for it."""
    server = _server(cluster, "jobset")
    config = cluster.workdir / "jobset-config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "config.jobset.x-k8s.io/v1alpha1",
                "kind": "Configuration",
                **_controller_config(server),
            }
        )
    )
    cluster.start(
        "jobset",
        [binary, f"--config={config}", "--zap-log-level=2"],
        env={"KUBECONFIG": str(cluster.admin_kubeconfig)},
    )
    return server


def register_webhooks(
    cluster: Cluster,
    name: str,
    server: Server,
    module: Path,
    kustomize: str,
    keep: frozenset[str] | None = None,
) -> None:
    """Wait for the controller's webhook server, then register its webhooks."""
    assert cluster.ca is not None
    wait_ready(cluster, name, server)
    create_all(cluster, webhook_configurations(module, kustomize, f"{name}-", server, cluster.ca, keep))


def kueue_objects(module: Path) -> list[dict[str, Any]]:
    """What Kueue needs before it starts: its CRDs and its namespace."""
    return [*crds(module), {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": KUEUE_NAMESPACE}}]


def start_kueue(cluster: Cluster, binary: str) -> Server:
    """Start Kueue (its CRDs installed) with the batch/Job and JobSet integrations; `finish_kueue` waits
    for it."""
    if shutil.which("unshare") is None:
        import pytest

        pytest.skip(
            "Kueue v0.19 reads /etc/kueue/metrics/certs; the suite gives it one in a private mount "
            "namespace made with `unshare` (util-linux), which is not on PATH"
        )
    server = _server(cluster, "kueue")
    config = cluster.workdir / "kueue-config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "config.kueue.x-k8s.io/v1beta2",
                "kind": "Configuration",
                "namespace": KUEUE_NAMESPACE,
                **_controller_config(server),
                "integrations": {"frameworks": list(KUEUE_FRAMEWORKS)},
                # its on-demand visibility API server is an aggregated API server of its own: not wanted here
                "featureGates": {"VisibilityOnDemand": False},
            }
        )
    )
    layer = cluster.workdir / "kueue-etc"
    layer.mkdir()
    user_namespace = ["--user", "--map-root-user"] if os.geteuid() != 0 else []
    cluster.start(
        "kueue",
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            *user_namespace,
            "--",
            "sh",
            "-c",
            KUEUE_MOUNT_SCRIPT,
            "kueue-mounts",
            str(layer),
            str(server.cert_dir),
            binary,
            f"--config={config}",
            "--zap-log-level=2",
        ],
        env={"KUBECONFIG": str(cluster.admin_kubeconfig)},
    )
    return server


def finish_kueue(cluster: Cluster, server: Server, module: Path, kustomize: str) -> None:
    """Register Kueue's webhooks once it serves them, and make the ResourceFlavor the tests' queues use."""
    register_webhooks(cluster, "kueue", server, module, kustomize, KUEUE_WEBHOOKS)
    create_all(
        cluster,
        [
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ResourceFlavor",
                "metadata": {"name": RESOURCE_FLAVOR},
            }
        ],
    )


def add_kueue(cluster: Cluster) -> None:
    """Kueue on a running `start(kubectl)` cluster that was started without it."""
    binaries = {name: gotools.require(name) for name in ("kueue", "kustomize")}
    module = gotools.require_module("kueue")
    create_all(cluster, kueue_objects(module))
    finish_kueue(cluster, start_kueue(cluster, binaries["kueue"]), module, binaries["kustomize"])


def queue(cluster: Cluster, namespace: str, cpu: str, memory: str) -> str:
    """A ClusterQueue of its own with this cpu and memory quota (one flavor) and a LocalQueue for it in
    `namespace`; returns the LocalQueue's name (the value of `kueue.x-k8s.io/queue-name`)."""
    name = f"{namespace}-cq"
    cluster_queue = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory"],
                    "flavors": [
                        {
                            "name": RESOURCE_FLAVOR,
                            "resources": [
                                {"name": "cpu", "nominalQuota": cpu},
                                {"name": "memory", "nominalQuota": memory},
                            ],
                        }
                    ],
                }
            ],
        },
    }
    local_queue = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "queue", "namespace": namespace},
        "spec": {"clusterQueue": name},
    }
    create_all(cluster, [cluster_queue, local_queue])

    def active() -> bool:
        conditions = cluster.get("clusterqueue", name).get("status", {}).get("conditions", [])
        return any(c["type"] == "Active" and c["status"] == "True" for c in conditions)

    cluster.wait_for(f"clusterqueue/{name} Active", active, timeout=30)
    return "queue"


def start(kubectl: str, kueue: bool = False) -> Cluster:
    """A control plane with controllers, scheduler, kwok nodes and the JobSet controller with its webhooks,
    and with `kueue` Kueue too (built only then). The CRDs go in while kwok's nodes come up, the
    controllers start together."""
    names = [
        "etcd",
        "kube-apiserver",
        "kube-controller-manager",
        "kube-scheduler",
        "kwok",
        "jobset",
        "kustomize",
    ]
    binaries = {name: gotools.require(name) for name in names + (["kueue"] if kueue else [])}
    modules = {name: gotools.require_module(name) for name in ["jobset"] + (["kueue"] if kueue else [])}
    definitions = crds(modules["jobset"]) + (kueue_objects(modules["kueue"]) if kueue else [])
    started = controlplane.start_control_plane(binaries, kubectl)
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            installed = pool.submit(create_all, started, definitions)
            controlplane.start_workloads(started, binaries)
            installed.result()
        jobset_server = start_jobset(started, binaries["jobset"])
        kueue_server = start_kueue(started, binaries["kueue"]) if kueue else None
        register_webhooks(started, "jobset", jobset_server, modules["jobset"], binaries["kustomize"])
        if kueue_server is not None:
            finish_kueue(started, kueue_server, modules["kueue"], binaries["kustomize"])
        return started
    except BaseException:
        started.stop()
        raise
