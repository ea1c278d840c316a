"""v2beta1 jobs over SSH: objects of the shape mpi-operator v0.8.2 creates, and how the harness runs them.

`objects(...)` writes by hand what the operator creates for a v2beta1 MPIJob (and what mpigen's v2beta1
compiler renders): the headless Service `<job>`, ConfigMap `<job>-config` (`hostfile`,
`discover_hosts.sh`), Secret `<job>-ssh` (`ssh-privatekey`, `ssh-publickey`, empty until keys are
generated), worker Pods `<job>-worker-<i>` (hostname, subdomain, DNS search entry, `sshd -De`), and
the launcher Job `<job>-launcher` with the env of `mpi_job_controller.go` (`OPERATOR_ENV`) plus what
the e2e runs showed each launcher needs besides (`EXTRA_ENV`).

`start(...)`/`run_launcher(...)` take any such list of objects (hand-written or rendered): they fill
an empty ssh Secret as the operator would (a fresh key pair), check the Service makes the workers
resolvable, start the pods with cluster DNS and the implementation's image, wait until every worker's
sshd listens (as the upstream examples' readinessProbe does), and run the launcher.
"""

from __future__ import annotations

import base64
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .cluster import Cluster
from .image import SSH_PORT
from .mpi import Implementation
from .netns import HarnessError
from .pods import one, secret_data
from .values import ClusterOptions, Run

Obj = dict[str, Any]
CONFIG_MOUNT = "/etc/mpi"
HOSTFILE = f"{CONFIG_MOUNT}/hostfile"
ROOT_SSH = "/root/.ssh"
USER_SSH = "/home/mpiuser/.ssh"
MPIUSER = 1000

# mpi_job_controller.go (v0.8.2) ompiEnvVars / intelEnvVars / mpichEnvVars, plus the slots variable.
OPERATOR_ENV: dict[str, dict[str, str]] = {
    "OpenMPI": {
        "OMPI_MCA_orte_keep_fqdn_hostnames": "true",
        "OMPI_MCA_orte_default_hostfile": HOSTFILE,
        "OMPI_MCA_plm_rsh_args": "-o ConnectionAttempts=10",
        "OMPI_MCA_orte_set_default_slots": "{slots}",
    },
    "Intel": {
        "I_MPI_HYDRA_HOST_FILE": HOSTFILE,
        "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS": "-o ConnectionAttempts=10",
        "I_MPI_PERHOST": "{slots}",
    },
    "MPICH": {
        "HYDRA_HOST_FILE": HOSTFILE,
        "HYDRA_LAUNCH_EXTRA_ARGS": "-o ConnectionAttempts=10",
    },
}
# What the launcher needs besides, per implementation, as the e2e runs established (README).
EXTRA_ENV: dict[str, dict[str, str]] = {
    "openmpi4": {},
    "openmpi5": {
        "PRTE_MCA_prte_keep_fqdn_hostnames": "true",
        "PRTE_MCA_prte_default_hostfile": HOSTFILE,
        "PRTE_MCA_plm_ssh_args": "-o ConnectionAttempts=10",
        # PRRTE hands plm_ssh_args to its daemons cut at the first "=" ("-o ConnectionAttempts"),
        # so daemons that tree-spawn others (beyond 64 workers) fail; mpirun must ssh to every one.
        "PRTE_MCA_plm_ssh_no_tree_spawn": "1",
    },
    "mpich": {},
    "intel": {},
}


def launcher_env(impl: Implementation, slots: int) -> dict[str, str]:
    """The operator's env for the implementation, then what the runs showed it needs besides."""
    env = {k: v.format(slots=slots) for k, v in OPERATOR_ENV[impl.api_name].items()}
    return {"K_MPI_JOB_ROLE": "launcher", **env, **EXTRA_ENV[impl.name]}


def hostfile(impl: Implementation, name: str, workers: int, slots: int, namespace: str) -> str:
    """newConfigMap's hostfile: one `<job>-worker-<i>.<job>.<ns>.svc` line per worker."""
    lines = [
        impl.hostfile_format.format(host=f"{name}-worker-{i}.{name}.{namespace}.svc", slots=slots)
        for i in range(workers)
    ]
    return "".join(f"{line}\n" for line in lines)


def _labels(name: str, role: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    return {
        "training.kubeflow.org/operator-name": "mpi-operator",
        "training.kubeflow.org/job-name": name,
        "training.kubeflow.org/job-role": role,
        **(extra or {}),
    }


def _ssh_volume(name: str, mount: str) -> Obj:
    items = [
        {"key": "ssh-privatekey", "path": "id_rsa"},
        {"key": "ssh-publickey", "path": "id_rsa.pub"},
        {"key": "ssh-publickey", "path": "authorized_keys"},
    ]
    secret: Obj = {"secretName": f"{name}-ssh", "items": items}
    if mount == ROOT_SSH:  # setupSSHOnPod: 0600 only for /root/.ssh, else the default 0644
        secret["defaultMode"] = 0o600
    return {"name": "ssh-auth", "secret": secret}


def _container(role: str, image: str, argv: Sequence[str], env: Mapping[str, str], uid: int | None) -> Obj:
    out: Obj = {"name": f"mpi-{role}", "image": image, "command": list(argv)}
    out["env"] = [{"name": k, "value": v} for k, v in env.items()]
    if uid is not None:
        out["securityContext"] = {"runAsUser": uid}
    return out


def objects(
    impl: Implementation,
    name: str,
    launcher_argv: Sequence[str],
    workers: int = 2,
    slots: int = 1,
    ssh_mount: str = USER_SSH,
    namespace: str = "e2e",
    worker_search: bool = True,
) -> list[Obj]:
    """What the operator creates for a v2beta1 MPIJob (non-root mpiuser unless `ssh_mount` is /root/.ssh).

    `worker_search=False` leaves out the workers' DNS search entry `<job>.<ns>.svc.cluster.local`.
    """
    uid = None if ssh_mount == ROOT_SSH else MPIUSER
    sshd = ["/usr/sbin/sshd", "-De"] + ([] if uid is None else ["-f", "/home/mpiuser/.sshd_config"])
    meta = {"namespace": namespace, "labels": {"app": name}}
    image = f"example.com/mpi-{impl.name}:e2e"
    config_volume = {
        "name": "mpi-job-config",
        "configMap": {
            "name": f"{name}-config",
            "items": [
                {"key": "hostfile", "path": "hostfile", "mode": 0o444},
                {"key": "discover_hosts.sh", "path": "discover_hosts.sh", "mode": 0o555},
            ],
        },
    }
    out: list[Obj] = [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, **meta},
            "spec": {
                "clusterIP": "None",
                "selector": {
                    k: v for k, v in _labels(name, "").items() if k.endswith(("operator-name", "job-name"))
                },
                "publishNotReadyAddresses": False,
            },
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": f"{name}-config", **meta},
            "data": {
                "hostfile": hostfile(impl, name, workers, slots, namespace),
                "discover_hosts.sh": "#!/bin/sh\n"
                + "".join(f"echo {name}-worker-{i}.{name}.{namespace}.svc\n" for i in range(workers)),
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": f"{name}-ssh", **meta},
            "type": "kubernetes.io/ssh-auth",
            "data": {},
        },
    ]
    for i in range(workers):
        worker = _container("worker", image, sshd, {"K_MPI_JOB_ROLE": "worker"}, uid)
        worker["volumeMounts"] = [{"name": "ssh-auth", "mountPath": ssh_mount}]
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"{name}-worker-{i}",
                    "namespace": namespace,
                    "labels": _labels(name, "worker", {"training.kubeflow.org/replica-index": str(i)}),
                },
                "spec": {
                    "hostname": f"{name}-worker-{i}",
                    "subdomain": name,
                    "dnsConfig": {
                        "searches": [f"{name}.{namespace}.svc.cluster.local"] if worker_search else []
                    },
                    "restartPolicy": "Never",
                    "containers": [worker],
                    "volumes": [_ssh_volume(name, ssh_mount)],
                },
            }
        )
    launcher = _container("launcher", image, launcher_argv, launcher_env(impl, slots), uid)
    launcher["volumeMounts"] = [
        {"name": "ssh-auth", "mountPath": ssh_mount},
        {"name": "mpi-job-config", "mountPath": CONFIG_MOUNT},
    ]
    out.append(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": f"{name}-launcher",
                **meta,
                "labels": {"app": name, **_labels(name, "launcher")},
            },
            "spec": {
                "backoffLimit": 6,
                "template": {
                    "metadata": {"labels": _labels(name, "launcher")},
                    "spec": {
                        "hostname": f"{name}-launcher",
                        "subdomain": name,
                        "restartPolicy": "Never",
                        "containers": [launcher],
                        "volumes": [_ssh_volume(name, ssh_mount), config_volume],
                    },
                },
            },
        }
    )
    return out


# -- running any such objects -------------------------------------------------------------------------


def ssh_keys() -> dict[str, str]:
    """A fresh key pair as newSSHAuthSecret makes it: ECDSA P-521, PEM `EC PRIVATE KEY`, authorized_keys line."""
    with tempfile.TemporaryDirectory() as tmp:
        key = Path(tmp) / "id"
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ecdsa", "-b", "521", "-m", "PEM", "-N", "", "-C", "", "-f", str(key)],
            check=True,
            capture_output=True,
        )
        private, public = key.read_text(), key.with_suffix(".pub").read_text()
    if not private.startswith("-----BEGIN EC PRIVATE KEY-----"):
        raise HarnessError(f"ssh-keygen wrote no PEM EC key: {private.splitlines()[0]}")
    return {"ssh-privatekey": private, "ssh-publickey": public.strip() + "\n"}


def fill_ssh_secrets(objects: Sequence[Obj]) -> list[Obj]:
    """The objects, with every `kubernetes.io/ssh-auth` Secret lacking keys given a fresh pair (what
    the operator, or whatever mpigen's design puts in its place, does at run time)."""
    out = []
    for obj in objects:
        is_ssh = obj.get("kind") == "Secret" and obj.get("type") == "kubernetes.io/ssh-auth"
        if is_ssh and not {"ssh-privatekey", "ssh-publickey"} <= secret_data(obj).keys():
            data = {k: base64.b64encode(v.encode()).decode() for k, v in ssh_keys().items()}
            obj = {**obj, "data": data}
        out.append(obj)
    return out


def check_service(objects: Sequence[Obj], pods: Sequence[Any]) -> None:
    """Each pod with a subdomain is selected by a headless Service of that name (else DNS has no record)."""
    services = {o["metadata"]["name"]: o for o in objects if o.get("kind") == "Service"}
    for pod in pods:
        if not pod.subdomain:
            continue
        svc = services.get(pod.subdomain)
        if svc is None or svc["spec"].get("clusterIP") != "None":
            raise HarnessError(f"pod {pod.name}: subdomain {pod.subdomain!r} names no headless Service")
        selector = svc["spec"].get("selector") or {}
        if not selector or any(pod.labels.get(k) != v for k, v in selector.items()):
            raise HarnessError(f"pod {pod.name}: Service {pod.subdomain} does not select it ({selector})")


def start(
    start_cluster: Callable[..., Cluster],
    objects: Sequence[Obj],
    impl: Implementation,
    port: int = SSH_PORT,
    **options: Any,
) -> Cluster:
    """Run the job's pods: Secret keys filled, cluster DNS, the implementation's image, sshd listening."""
    from .pods import plan_pods

    objects = fill_ssh_secrets(objects)
    check_service(objects, plan_pods(objects))
    cluster = start_cluster(objects, **{"hosts": "cluster-dns", "image": impl.image(), **options})
    cluster.wait_listening(port)
    return cluster


def hostfile_of(objects: Sequence[Obj]) -> str:
    """The `hostfile` key of the job's ConfigMap."""
    return str(one([o for o in objects if o.get("kind") == "ConfigMap"], "ConfigMap")["data"]["hostfile"])


def options(**kw: Any) -> ClusterOptions:
    """ClusterOptions for SSH pods (cluster DNS) plus `kw`."""
    return ClusterOptions(**{"hosts": "cluster-dns", **kw})


__all__ = [
    "EXTRA_ENV",
    "OPERATOR_ENV",
    "Run",
    "check_service",
    "fill_ssh_secrets",
    "hostfile",
    "hostfile_of",
    "launcher_env",
    "objects",
    "options",
    "ssh_keys",
    "start",
]
