"""Names: every derived name, label, selector, path and constant that the manifests share.

One place, so that a builder, the validator and the scripts can never disagree on what the launcher
Job or the third worker pod is called. Values mirror mpi-operator v0.2.0
(`pkg/controllers/v1alpha{1,2}/mpi_job_controller.go`, the `const` blocks and `getLabelsMap`), then
v0.8.2 and the training-operator 1.9 in their own sections below.
"""

from __future__ import annotations

import re

GROUP = "kubeflow.org"
KIND = "MPIJob"

CONFIG_SUFFIX = "-config"
LAUNCHER_SUFFIX = "-launcher"
WORKER_SUFFIX = "-worker"

CONFIG_VOLUME = "mpi-job-config"
CONFIG_MOUNT_PATH = "/etc/mpi"
KUBEXEC_SCRIPT = "kubexec.sh"
HOSTFILE = "hostfile"
KUBECTL_DELIVERY = "kubectl-delivery"
KUBECTL_TARGET_DIR_ENV = "TARGET_DIR"
KUBECTL_VOLUME = "mpi-job-kubectl"
KUBECTL_MOUNT_PATH = "/opt/kube"
KUBECTL_PATH = f"{KUBECTL_MOUNT_PATH}/kubectl"
# Where every mpioperator/kubectl-delivery image keeps kubectl (cmd/kubectl-delivery/Dockerfile, v0.2.0 on).
IMAGE_KUBECTL_PATH = "/bin/kubectl"
# The launcher's variables that point Open MPI at kubexec.sh and the hostfile (mpigen/targets/shared/mpi_env.py).
RSH_AGENT_ENV = "OMPI_MCA_plm_rsh_agent"
HOSTFILE_ENV = "OMPI_MCA_orte_default_hostfile"
NO_TREE_SPAWN_ENV = "OMPI_MCA_plm_rsh_no_tree_spawn"
# Reserved: the operators set these two (mpi-operator v0.2.0 newLauncher, training-operator 1.9). mpigen's own
# NO_TREE_SPAWN_ENV is not: a template that sets it keeps its value (mpi_env.MPIGEN_ONLY).
LAUNCHER_ENV = (RSH_AGENT_ENV, HOSTFILE_ENV)

SCRIPT_MODE = 0o555
HOSTFILE_MODE = 0o444

LABEL_GROUP_NAME = "group_name"
LABEL_JOB_NAME = "mpi_job_name"
LABEL_ROLE = "mpi_role_type"
ROLE_LAUNCHER = "launcher"
ROLE_WORKER = "worker"

MASTER_ROLE_LABEL = "node-role.kubernetes.io/master"
# Control-plane nodes carry this label since Kubernetes 1.20 and no longer the master one since 1.24;
# the API server warns on node affinity to the master label.
CONTROL_PLANE_ROLE_LABEL = "node-role.kubernetes.io/control-plane"

CLEANUP_SUFFIX = "-cleanup"
PDB_SUFFIX = "-pdb"
WAIT_FOR_WORKERS = "wait-for-workers"
WAIT_SCRIPT = "wait-for-workers.sh"
CLEANUP_SCRIPT = "cleanup.sh"
CLEANUP_CONTAINER = "cleanup"

# Standard labels (kubernetes.io/docs/concepts/overview/working-with-objects/common-labels) on every
# emitted object and pod: one handle per job for `kubectl delete -l` and `kubectl apply --prune -l`.
APP_NAME = "mpijob"
MANAGED_BY = "mpigen"
COMPONENT_RBAC = "rbac"
COMPONENT_CONFIG = "config"
COMPONENT_WORKER = "worker"
COMPONENT_LAUNCHER = "launcher"
COMPONENT_SCHEDULING = "scheduling"
COMPONENT_CLEANUP = "cleanup"
COMPONENT_JOB = "job"

VOLCANO_GROUP_ANNOTATION = "scheduling.k8s.io/group-name"
SCHEDULER_PLUGINS_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?\Z")
DNS1123_LABEL_MAX = 63
# The StatefulSet controller labels each worker pod `controller-revision-hash: <set>-<10 characters>`.
REVISION_HASH_LENGTH = 10
# The longest job name whose every derived name fits (the worker StatefulSet's is the tightest, with
# fewer than 10**10 workers); mpigen.targets.operator.limits checks the exact ones, pod names included.
MAX_JOB_NAME = DNS1123_LABEL_MAX - 1 - REVISION_HASH_LENGTH - len(WORKER_SUFFIX)


def is_dns1123_label(value: str) -> bool:
    return len(value) <= DNS1123_LABEL_MAX and has_dns1123_characters(value)


def has_dns1123_characters(value: str) -> bool:
    """A DNS-1123 label but for its length: lower-case letters, digits and '-', alphanumeric at both ends."""
    return bool(_DNS1123_LABEL.match(value))


# apimachinery IsDNS1123Subdomain: labels joined by dots, at most 253 characters in all.
_DNS1123_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z"
DNS1123_SUBDOMAIN_MAX = 253


def is_dns1123_subdomain(value: str) -> bool:
    return len(value) <= DNS1123_SUBDOMAIN_MAX and bool(re.match(_DNS1123_SUBDOMAIN, value))


def is_dns1035_label(value: str) -> bool:
    """A DNS-1123 label that starts with a letter (Service names, v2beta1 worker hostnames)."""
    return len(value) <= DNS1123_LABEL_MAX and bool(_DNS1035_LABEL.match(value))


def config_map(job: str) -> str:
    return job + CONFIG_SUFFIX


def launcher(job: str) -> str:
    """The launcher Job, its ServiceAccount, Role and RoleBinding all share this name."""
    return job + LAUNCHER_SUFFIX


def worker_set(job: str) -> str:
    """The worker StatefulSet (and the headless Service its `serviceName` names)."""
    return job + WORKER_SUFFIX


def worker_pod(job: str, index: int) -> str:
    return f"{worker_set(job)}-{index}"


def worker_pods(job: str, workers: int) -> list[str]:
    return [worker_pod(job, i) for i in range(workers)]


def cleanup(job: str) -> str:
    """The clean-up Job and its own ServiceAccount, Role and RoleBinding."""
    return job + CLEANUP_SUFFIX


def pdb(job: str) -> str:
    return job + PDB_SUFFIX


def pod_group(job: str) -> str:
    return job


def standard_labels(job: str, component: str) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": APP_NAME,
        "app.kubernetes.io/instance": job,
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/managed-by": MANAGED_BY,
    }


def app_labels(job: str) -> dict[str, str]:
    """Labels of the ConfigMap and the launcher's RBAC objects (v0.2.0 `getLabelsMap`)."""
    return {"app": job}


def role_labels(job: str, role: str) -> dict[str, str]:
    """Labels (and selector) of the launcher and worker pods and their controllers."""
    return {LABEL_GROUP_NAME: GROUP, LABEL_JOB_NAME: job, LABEL_ROLE: role}


# --- kubeflow.org/v2beta1 (mpi-operator v0.8.2 pkg/apis/kubeflow/v2beta1/constants.go, mpi_job_controller.go)

TRAINING_PREFIX = "training.kubeflow.org/"
OPERATOR_NAME_LABEL = TRAINING_PREFIX + "operator-name"
JOB_NAME_LABEL = TRAINING_PREFIX + "job-name"
JOB_ROLE_LABEL = TRAINING_PREFIX + "job-role"
REPLICA_INDEX_LABEL = TRAINING_PREFIX + "replica-index"
REPLICA_TYPE_LABEL = TRAINING_PREFIX + "replica-type"
MPI_OPERATOR = "mpi-operator"
JOB_ROLE_ENV = "K_MPI_JOB_ROLE"
DISCOVER_HOSTS_SCRIPT = "discover_hosts.sh"
SSH_VOLUME = "ssh-auth"
SSH_SUFFIX = "-ssh"
SSH_KEYGEN_SUFFIX = "-ssh-keygen"
SSH_PRIVATE_KEY = "ssh-privatekey"
SSH_PUBLIC_KEY = "ssh-publickey"
ROOT_SSH_PATH = "/root/.ssh"
SSHD_COMMAND = ("/usr/sbin/sshd", "-De")
# The launcher's own GPU visibility is blanked unless it is a worker too.
NVIDIA_ENV = ("NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES")
DEFAULT_CLUSTER_DOMAIN = "cluster.local"
VOLCANO_QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"
KEYGEN_SCRIPT = "ssh-keygen.sh"


def job_service(job: str) -> str:
    """v2beta1's one headless Service over launcher and workers (the pods' subdomain)."""
    return job


def ssh_secret(job: str) -> str:
    return job + SSH_SUFFIX


def ssh_keygen(job: str) -> str:
    """The key-generation Job and its ServiceAccount, Role and RoleBinding."""
    return job + SSH_KEYGEN_SUFFIX


def training_labels(job: str, role: str | None = None) -> dict[str, str]:
    """v2beta1 pod labels (and, without a role, the Service's selector over all of the job's pods)."""
    labels = {OPERATOR_NAME_LABEL: MPI_OPERATOR, JOB_NAME_LABEL: job}
    if role is not None:
        labels[JOB_ROLE_LABEL] = role
    return labels


def host(pod: str, service: str, namespace: str | None, cluster_domain: str | None) -> str:
    """A pod's DNS name under the headless Service: `<pod>.<service>.<ns>.svc[.<domain>]`, or
    `<pod>.<service>` when the namespace is not known (the pod's own search path completes it)."""
    if namespace is None:
        return f"{pod}.{service}"
    name = f"{pod}.{service}.{namespace}.svc"
    return f"{name}.{cluster_domain}" if cluster_domain else name


def dns_search(service: str, namespace: str, cluster_domain: str | None) -> str:
    return f"{service}.{namespace}.svc.{cluster_domain or DEFAULT_CLUSTER_DOMAIN}"


# --- kubeflow.org/v1 (training-operator release-1.9 pkg/controller.v1/mpi/, pkg/apis/kubeflow.org/v1)

TRAINING_OPERATOR = "mpijob-controller"
JOB_ROLE_MASTER = "master"
VOLCANO_TASK_SPEC_ANNOTATION = "volcano.sh/task-spec"
NAMESPACE_ENV = "NAMESPACE"
# Intel MPI's Hydra bootstrap through kubexec.sh, set on the launcher unless its template sets them.
HYDRA_BOOTSTRAP_ENV = "I_MPI_HYDRA_BOOTSTRAP"
HYDRA_BOOTSTRAP_EXEC_ENV = "I_MPI_HYDRA_BOOTSTRAP_EXEC"


def training_operator_labels(job: str, replica_type: str) -> dict[str, str]:
    """v1 pod labels (`GenLabels` plus the replica type); the workers' also select them. The
    launcher is the job's master role (`IsMasterRole`)."""
    labels = {OPERATOR_NAME_LABEL: TRAINING_OPERATOR, JOB_NAME_LABEL: job, REPLICA_TYPE_LABEL: replica_type}
    if replica_type == ROLE_LAUNCHER:
        labels[JOB_ROLE_LABEL] = JOB_ROLE_MASTER
    return labels


# --- Kueue (pkg/controller/constants/constants.go): the labels a job is queued and prioritised by

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
