"""What the run targets' controllers make at run time, that the job's pods depend on.

mpigen renders no object a run target's controller makes itself; the harness plays those controllers
(as it plays kubelet) from the facts the cluster tests measured on the real ones (tests/cluster):

- JobSet v0.12 (`network.enableDNSHostnames`): the headless Service `<subdomain>` selecting every pod
  of the JobSet by `jobset.sigs.k8s.io/jobset-name`, `publishNotReadyAddresses` as the spec says.
- mpigen's `<job>-ssh-keygen` Job (JobSet and default targets): a fresh ECDSA P-521 pair stored in the
  job's Secret as `ssh-privatekey` / `ssh-publickey`.
- Volcano v1.14's `svc` plugin: the headless Service `<job>` (selector `volcano.sh/job-name` and
  `volcano.sh/job-namespace`), ConfigMap `<job>-svc` (`<task>.host`, `VC_<TASK>_HOSTS`, `VC_<TASK>_NUM`)
  mounted at /etc/volcano in every container, and the `VC_*` env; its `ssh` plugin: an RSA 2048 PEM pair
  in Secret `<job>-ssh` (`id_rsa`, `id_rsa.pub`, `authorized_keys`, `config`) mounted in every container
  at `--ssh-key-file-path` (default /root/.ssh), mode 0600 there and 0644 elsewhere.
"""

from __future__ import annotations

import base64
import copy
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .netns import HarnessError
from .pods import JOBSET, VOLCANO_JOB

Obj = dict[str, Any]
VOLCANO_SSH_DEFAULT = "/root/.ssh"
VOLCANO_SVC_MOUNT = "/etc/volcano"


def _meta(name: str, namespace: str) -> Obj:
    return {"name": name, "namespace": namespace}


def jobset_service(jobset: Obj) -> Obj:
    """The headless Service the JobSet controller creates for DNS host names."""
    spec = jobset["spec"]
    network = spec.get("network") or {}
    if not network.get("enableDNSHostnames"):
        raise HarnessError(f"JobSet/{jobset['metadata']['name']}: network.enableDNSHostnames is not on")
    name = str(network.get("subdomain") or jobset["metadata"]["name"])
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(name, jobset["metadata"].get("namespace") or "default"),
        "spec": {
            "clusterIP": "None",
            "selector": {"jobset.sigs.k8s.io/jobset-name": jobset["metadata"]["name"]},
            "publishNotReadyAddresses": network.get("publishNotReadyAddresses", True),
        },
    }


def _keygen(kind: str, bits: int) -> tuple[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        key = Path(tmp) / "id"
        subprocess.run(
            [
                "ssh-keygen",
                "-q",
                "-t",
                kind,
                "-b",
                str(bits),
                "-m",
                "PEM",
                "-N",
                "",
                "-C",
                "",
                "-f",
                str(key),
            ],
            check=True,
            capture_output=True,
        )
        return key.read_text(), key.with_suffix(".pub").read_text().strip() + "\n"


def _b64(data: dict[str, str]) -> dict[str, str]:
    return {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}


def run_jobset(objects: Sequence[Obj]) -> list[Obj]:
    """The objects as the cluster holds them once the JobSet runs: the key Job has filled the job's
    Secret (when mpigen renders one), and the JobSet controller has made its headless Service."""
    jobsets = [o for o in objects if o.get("apiVersion") == JOBSET and o.get("kind") == "JobSet"]
    if len(jobsets) != 1:
        raise HarnessError(f"expected one JobSet, found {len(jobsets)}")
    name = jobsets[0]["metadata"]["name"]
    out = []
    for obj in objects:
        if obj.get("kind") == "Secret" and obj["metadata"]["name"] == f"{name}-ssh" and not obj.get("data"):
            private, public = _keygen("ecdsa", 521)
            obj = {**obj, "data": _b64({"ssh-privatekey": private, "ssh-publickey": public})}
        out.append(obj)
    return [*out, jobset_service(jobsets[0])]


def _plugin_args(args: Sequence[str], flag: str) -> str | None:
    for arg in args:
        if arg.startswith(f"--{flag}="):
            return arg.split("=", 1)[1]
        if arg == f"--{flag}":
            return "true"
    return None


def run_volcano(objects: Sequence[Obj]) -> list[Obj]:
    """The objects as the cluster holds them once Volcano runs the Job: its svc (and ssh) plugins'
    objects added, and each task's pod template as the plugins change it on pod creation."""
    out: list[Obj] = []
    made: list[Obj] = []
    for obj in objects:
        if obj.get("apiVersion") != VOLCANO_JOB or obj.get("kind") != "Job":
            out.append(obj)
            continue
        job = copy.deepcopy(obj)
        name, namespace = job["metadata"]["name"], job["metadata"].get("namespace") or "default"
        plugins = job["spec"].get("plugins") or {}
        tasks = job["spec"]["tasks"]
        hosts = {
            t["name"]: [f"{name}-{t['name']}-{i}" for i in range(int(t.get("replicas", 1)))] for t in tasks
        }
        env: list[Obj] = []
        svc_data: dict[str, str] = {}
        if "svc" in plugins:
            for task, pods in hosts.items():
                key = task.upper().replace("-", "_")
                svc_data[f"{task}.host"] = "".join(f"{p}.{name}\n" for p in pods)
                svc_data[f"VC_{key}_HOSTS"] = ",".join(f"{p}.{name}" for p in pods)
                svc_data[f"VC_{key}_NUM"] = str(len(pods))
                env += [
                    {"name": f"VC_{key}_HOSTS", "value": svc_data[f"VC_{key}_HOSTS"]},
                    {"name": f"VC_{key}_NUM", "value": svc_data[f"VC_{key}_NUM"]},
                ]
            publish = _plugin_args(plugins["svc"], "publish-not-ready-addresses") == "true"
            made += [
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": _meta(f"{name}-svc", namespace),
                    "data": svc_data,
                },
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "metadata": _meta(name, namespace),
                    "spec": {
                        "clusterIP": "None",
                        "selector": {"volcano.sh/job-name": name, "volcano.sh/job-namespace": namespace},
                        "publishNotReadyAddresses": publish,
                    },
                },
            ]
        ssh_path = None
        if "ssh" in plugins:
            ssh_path = _plugin_args(plugins["ssh"], "ssh-key-file-path") or VOLCANO_SSH_DEFAULT
            private, public = _keygen("rsa", 2048)
            if not private.startswith("-----BEGIN RSA PRIVATE KEY-----"):
                raise HarnessError(f"ssh-keygen wrote no PEM RSA key: {private.splitlines()[0]}")
            config = "StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n" + "".join(
                f"Host {p}\n  HostName {p}.{name}\n" for pods in hosts.values() for p in pods
            )
            data = {"id_rsa": private, "id_rsa.pub": public, "authorized_keys": public, "config": config}
            made.append(
                {
                    "apiVersion": "v1",
                    "kind": "Secret",
                    "metadata": _meta(f"{name}-ssh", namespace),
                    "data": _b64(data),
                }
            )
        for task in tasks:
            spec = task["template"]["spec"]
            volumes, mounts = spec.setdefault("volumes", []), []
            if "svc" in plugins:
                volumes.append({"name": f"{name}-svc", "configMap": {"name": f"{name}-svc"}})
                mounts.append({"name": f"{name}-svc", "mountPath": VOLCANO_SVC_MOUNT})
            if ssh_path is not None:
                mode = 0o600 if ssh_path == VOLCANO_SSH_DEFAULT else 0o644
                items = [{"key": k, "path": k} for k in ("id_rsa", "id_rsa.pub", "authorized_keys", "config")]
                volumes.append(
                    {
                        "name": f"{name}-ssh",
                        "secret": {"secretName": f"{name}-ssh", "items": items, "defaultMode": mode},
                    }
                )
                mounts.append({"name": f"{name}-ssh", "mountPath": ssh_path})
            for container in [*spec["containers"], *(spec.get("initContainers") or [])]:
                container["volumeMounts"] = [*(container.get("volumeMounts") or []), *mounts]
                container["env"] = [*(container.get("env") or []), *env]
        out.append(job)
    return [*out, *made]
