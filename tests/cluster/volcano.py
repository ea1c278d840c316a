"""Volcano (volcano.sh/volcano v1.14.1, built from the Go module proxy: gotools.py says why not v1.15.1) on a
control plane of the suite: its CRDs, the job controller (vc-controller-manager) and the gang scheduler (vc-scheduler), with
kwok fake nodes and no kube-scheduler, so every pod that gets a node was bound by Volcano.

Everything comes from the one pinned module: gotools.py builds the two binaries (tool `volcano`) and the
CRDs are read from the same module's copy in the Go module cache (`config/crd/volcano/bases`), never from a
copy in this repository.

The admission webhooks (vc-webhook-manager, tool `volcano-webhook`) are not part of `start`. The mutating
one only fills defaults on create: `queue: default`, `schedulerName`, `maxRetry: 3` when 0, `minAvailable`
(the sum of the tasks'), each task's `name`, `minAvailable` (its replicas) and `maxRetry: 3`, and the
`svc`/`ssh` plugins under the `mpi` plugin. A Job that spells all of these out is run the same with or
without it; the tests' Jobs do. The validating one only refuses. `start_webhooks` runs the two Job webhooks
on a started cluster (test_volcano_webhooks.py judges mpigen's output and refusals with them).

kube-controller-manager runs what Volcano's objects rely on: the garbage collector (the Job's pods, and
its plugins' Service, ConfigMap, Secret and NetworkPolicy, are owned by the Job; its TTL deletes it in the
foreground), the service-account controllers (pods need the namespace's `default` ServiceAccount) and the
namespace controller.
"""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import time
from typing import Any

import controlplane
import gotools
import yaml

TOOL = "volcano"
VERSION = gotools.TOOLS[TOOL].version
BINARIES = ("vc-controller-manager", "vc-scheduler")
SCHEDULER_NAME = "volcano"

# The CRDs of the objects a Volcano Job involves, from the module (bases/ holds the apiextensions v1 ones).
# numatopologies and hypernodes: vc-scheduler watches them (v1.14.1 pkg/scheduler/cache/cache.go: newSchedulerCache
# always makes a HyperNode informer, for network-topology-aware scheduling).
CRD_FILES = (
    "batch.volcano.sh_jobs.yaml",
    "bus.volcano.sh_commands.yaml",
    "scheduling.volcano.sh_podgroups.yaml",
    "scheduling.volcano.sh_queues.yaml",
    "nodeinfo.volcano.sh_numatopologies.yaml",
    "topology.volcano.sh_hypernodes.yaml",
)

# vc-controller-manager's controllers: Jobs, their PodGroups, Queues (they open them) and the TTL collector.
# jobflow and jobtemplate would need the flow.volcano.sh CRDs, which Jobs do not use.
VC_CONTROLLERS = ("job-controller", "pg-controller", "queue-controller", "gc-controller")

KUBE_CONTROLLERS = (
    "serviceaccount-token-controller",
    "serviceaccount-controller",
    "root-ca-certificate-publisher-controller",
    "garbage-collector-controller",
    "namespace-controller",
)

# Volcano's default scheduler configuration (pkg/scheduler/util.go) with gang in the first tier: a PodGroup
# is enqueued when its minResources fit (overcommit, proportion), and its pods are bound only when
# minMember of them fit at once (gang). network-topology-aware gives the allocate action the HyperNodes a Job
# with `networkTopology` may use (v1.14.1 pkg/scheduler/plugins/network-topology-aware:
# AddHyperNodeGradientForJobFn); without it every Job is placed in the whole cluster (test_topology_volcano.py).
SCHEDULER_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: network-topology-aware
"""


def crds() -> list[dict[str, Any]]:
    """Volcano's own CRDs for Job, Command, PodGroup, Queue, Numatopology and HyperNode."""
    bases = gotools.module_dir(TOOL) / "config" / "crd" / "volcano" / "bases"
    loaded = []
    for name in CRD_FILES:
        (crd,) = [doc for doc in yaml.safe_load_all((bases / name).read_text()) if doc]
        loaded.append(crd)
    return loaded


def install_crds(cluster: controlplane.Cluster) -> None:
    # Server-side: the Job CRD (210 kB) with its last-applied annotation would pass kubectl's 256 KiB limit.
    documents = crds()
    cluster.kubectl(
        "apply",
        "--server-side",
        "--field-manager=mpigen-tests",
        "-f",
        "-",
        input="\n---\n".join(json.dumps(crd) for crd in documents),
    )
    names = {crd["metadata"]["name"] for crd in documents}

    # `kubectl wait` fails on a CRD whose status has no conditions yet (just after the apply).
    def established() -> bool:
        found = 0
        for crd in cluster.get("crd")["items"]:
            conditions = crd.get("status", {}).get("conditions") or []
            if crd["metadata"]["name"] in names:
                found += any(c["type"] == "Established" and c["status"] == "True" for c in conditions)
        return found == len(names)

    cluster.wait_for(f"Volcano's CRDs {sorted(names)} Established", established, timeout=60)


def queue(name: str, weight: int = 1, capability: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"weight": weight, "reclaimable": True}
    if capability:
        spec["capability"] = capability
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": spec,
    }


def queue_open(cluster: controlplane.Cluster, name: str) -> bool:
    done = cluster.find("queue", name)
    return done is not None and done.get("status", {}).get("state") == "Open"


def start(
    cluster: controlplane.Cluster,
    binaries: dict[str, str],
    nodes: int = 3,
    queues: tuple[str, ...] = ("default", "test"),
) -> None:
    """On a fresh control plane: Volcano's CRDs, kube-controller-manager and kwok (`nodes` fake nodes, no
    kube-scheduler), vc-controller-manager, vc-scheduler, and the `queues` (Open before this returns)."""
    install_crds(cluster)
    controlplane.start_workloads(
        cluster,
        {name: binaries[name] for name in ("kube-controller-manager", "kwok")},
        nodes=nodes,
        controllers=KUBE_CONTROLLERS,
    )
    kubeconfig = f"--kubeconfig={cluster.admin_kubeconfig}"
    conf = cluster.workdir / "volcano-scheduler.conf"
    conf.write_text(SCHEDULER_CONF)
    cluster.start(
        "vc-controller-manager",
        [
            binaries["vc-controller-manager"],
            kubeconfig,
            "--leader-elect=false",
            f"--controllers={','.join(VC_CONTROLLERS)}",
            f"--scheduler-name={SCHEDULER_NAME}",
            f"--healthz-address=127.0.0.1:{controlplane.free_port()}",
            "--logtostderr",
            "-v=3",
        ],
    )
    cluster.start(
        "vc-scheduler",
        [
            binaries["vc-scheduler"],
            kubeconfig,
            "--leader-elect=false",
            f"--scheduler-conf={conf}",
            f"--scheduler-name={SCHEDULER_NAME}",
            "--default-queue=default",
            "--schedule-period=500ms",
            f"--listen-address=127.0.0.1:{controlplane.free_port()}",
            f"--healthz-address=127.0.0.1:{controlplane.free_port()}",
            "--logtostderr",
            "-v=3",
        ],
    )
    # vc-scheduler creates the default queue; the queue controller opens every queue.
    for name in queues:
        if name != "default":
            cluster.kubectl("apply", "-f", "-", input=json.dumps(queue(name)))
    for name in queues:
        cluster.wait_for(  # part of the start: as long as the control plane's own (other workers start theirs)
            f"queue {name} Open",
            lambda name=name: cluster.check_running() or queue_open(cluster, name),
            timeout=controlplane.START_TIMEOUT,
        )


def diagnostics(cluster: controlplane.Cluster) -> str:
    """What a failing test shows: Volcano's objects and pods in every namespace, recent events, log tails."""
    parts = []
    kinds = "queues,jobs.batch.volcano.sh,podgroups,pods,services,configmaps,secrets,networkpolicies"
    for argv in (("get", kinds, "-A", "-o", "wide"), ("get", "events", "-A", "--sort-by=.lastTimestamp")):
        try:
            done = cluster.kubectl(*argv, check=False, timeout=20)
        except subprocess.TimeoutExpired:
            continue
        lines = (done.stdout + done.stderr).splitlines()
        parts.append(f"$ kubectl {' '.join(argv)}\n" + "\n".join(lines[-60:]))
    parts.append(cluster.logs_tail(40))
    return "\n".join(parts)


WEBHOOK_BINARY = "vc-webhook-manager"
# The chart's configuration names (vc-webhook-manager patches their caBundle: volcano-admission-service +
# the path with "/" as "-"), the webhooks' names and rules as pkg/webhooks/admission/jobs registers them.
JOB_WEBHOOKS = (
    ("MutatingWebhookConfiguration", "/jobs/mutate", "mutatejob.volcano.sh", ("CREATE",)),
    ("ValidatingWebhookConfiguration", "/jobs/validate", "validatejob.volcano.sh", ("CREATE", "UPDATE")),
)


def webhook_configurations(port: int, ca: bytes) -> list[dict[str, Any]]:
    """Volcano's Job webhooks, sent to https://127.0.0.1:<port> and trusted through `ca`. Side effects
    None, so a server-side dry run calls them too."""
    out = []
    for kind, path, name, operations in JOB_WEBHOOKS:
        hook = {
            "name": name,
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "failurePolicy": "Fail",
            "clientConfig": {
                "url": f"https://127.0.0.1:{port}{path}",
                "caBundle": base64.b64encode(ca).decode(),
            },
            "rules": [
                {
                    "apiGroups": ["batch.volcano.sh"],
                    "apiVersions": ["v1alpha1"],
                    "operations": list(operations),
                    "resources": ["jobs"],
                }
            ],
        }
        out.append(
            {
                "apiVersion": "admissionregistration.k8s.io/v1",
                "kind": kind,
                "metadata": {"name": "volcano-admission-service" + path.replace("/", "-")},
                "webhooks": [hook],
            }
        )
    return out


def start_webhooks(cluster: controlplane.Cluster, binary: str) -> list[dict[str, Any]]:
    """Run vc-webhook-manager's Job webhooks (mutate, validate) on a cluster `start` made: a serving
    certificate for 127.0.0.1 signed by the control plane's CA, the two configurations; returns them (a
    caller that deletes them turns the webhooks off again)."""
    from jobset import serving_certificate

    assert cluster.ca is not None
    certs = serving_certificate(cluster, "volcano-admission")
    port = controlplane.free_port()
    configurations = webhook_configurations(port, cluster.ca.read_bytes())
    listed = {"apiVersion": "v1", "kind": "List", "items": configurations}
    cluster.kubectl("apply", "--server-side", "-f", "-", input=json.dumps(listed))
    cluster.start(
        WEBHOOK_BINARY,
        [
            binary,
            f"--kubeconfig={cluster.admin_kubeconfig}",
            f"--tls-cert-file={certs / 'tls.crt'}",
            f"--tls-private-key-file={certs / 'tls.key'}",
            f"--ca-cert-file={cluster.ca}",
            "--listen-address=127.0.0.1",
            f"--port={port}",
            f"--webhook-url=https://127.0.0.1:{port}",
            "--enabled-admission=" + ",".join(path for _, path, _, _ in JOB_WEBHOOKS),
            f"--scheduler-name={SCHEDULER_NAME}",
            "--logtostderr",
            "-v=3",
        ],
    )
    deadline = time.monotonic() + controlplane.START_TIMEOUT
    while True:
        cluster.check_running()
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{WEBHOOK_BINARY} not listening\n{cluster.logs_tail(40)}") from None
            time.sleep(0.3)
    return configurations
