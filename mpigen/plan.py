"""The job plan: one normalised description of an MPI job, whatever input version it came from.

Each input front (`mpigen.inputs.*`) turns its apiVersion into a `JobPlan`: it resolves defaults, sizing
and version-specific edits to the pod templates (v1alpha1 strips the launcher's resources, sets the
workers' processing limit, ...) and states, as plan fields, how the job's processes reach each other
(kubectl exec or SSH), how hosts are named, which labels the pods carry and what the run policy asks.
The builders (`mpigen.targets.shared.meta.*`) switch on those fields, never on the apiVersion. A new input version
is a new front; a new object is a new builder.
"""

from __future__ import annotations

from typing import Any, Literal

from mpigen import names
from mpigen.errors import Issue, Path
from mpigen.options import DEFAULT_KUBECTL_DELIVERY_IMAGE
from mpigen.records import Record

CleanPodPolicy = Literal["None", "Running", "All"]
Implementation = Literal["OpenMPI", "Intel", "MPICH"]
LauncherCreation = Literal["AtStartup", "WaitForWorkersReady"]


class Ssh(Record):
    """The SSH transport (kubeflow.org/v2beta1): workers run sshd, the launcher ssh's into them with
    the key pair of Secret `secret`, mounted at `mount_path` in both. `generate_keys`: mpigen renders
    the Secret empty plus a key-generation Job that fills it; else the user provides the Secret."""

    mount_path: str
    secret: str
    generate_keys: bool


class Hostnames(Record):
    """How the hostfile names hosts. `fqdn`: `<pod>.<service>[.<ns>.svc[.<cluster_domain>]]` (v2beta1);
    else the bare pod name (the kubexec transport needs pod names). `launcher_first`: the launcher
    is listed first, as a host of its own (v2beta1 runLauncherAsWorker, a v1 launcher that asks for a
    GPU); its pod then gets that name as its hostname."""

    fqdn: bool = False
    cluster_domain: str | None = None
    slot_syntax: Literal["slots=", ":"] = "slots="
    launcher_first: bool = False


class Labels(Record):
    """The operator's labels: on the launcher and worker pods (the worker ones also select them), on
    the launcher Job and worker StatefulSet themselves, and on the other objects (`app: <job>`)."""

    launcher_pod: dict[str, str]
    worker_pod: dict[str, str]
    launcher_job: dict[str, str]
    worker_set: dict[str, str]
    other: dict[str, str]


class JobService(Record):
    """The headless Service that gives the pods DNS names."""

    name: str
    labels: dict[str, str]
    selector: dict[str, str]
    publish_not_ready: bool


class Scheduling(Record):
    """`runPolicy.schedulingPolicy` (v2beta1, v1): what the PodGroup asks of the gang scheduler, and
    whether a template's schedulerName is overwritten (v2beta1) or kept (v0.2.0)."""

    min_available: int | None = None
    queue: str | None = None
    min_resources: dict[str, int | str] | None = None
    priority_class: str | None = None
    schedule_timeout_seconds: int | None = None
    overwrite_scheduler_name: bool = False
    # The PodGroup carries the operator's queue, priority class, timeout and minResources (v0.8.2,
    # training-operator); else only minMember (v0.2.0). A timeout of None is left out.
    operator_fields: bool = False
    # Volcano pods also carry `volcano.sh/task-spec: launcher|worker` (training-operator).
    task_spec_annotation: bool = False
    # Summed minResources take a container's requests, or its limits when it requests nothing
    # (training-operator `AddResourceList`); else requests plus the limits of names not requested (v0.8.2).
    requests_else_limits: bool = False
    # Where the job wrote its schedulingPolicy (None: it wrote none), to say it is ignored without a gang.
    written_at: tuple[str, ...] | None = None


class KubectlDelivery(Record):
    """What the launcher's `kubectl-delivery` init container carries beyond v0.2.0's (image,
    `TARGET_DIR`, the kubectl mount): the training-operator adds env, the ConfigMap mount, a pull
    policy and fixed resources."""

    # The image when no option names one: the operator's default.
    default_image: str = DEFAULT_KUBECTL_DELIVERY_IMAGE
    env: tuple[dict[str, Any], ...] = ()
    mount_config: bool = False
    pull_policy: str | None = None
    resources: dict[str, dict[str, str]] | None = None


class JobPlan(Record):
    """Everything the builders need, already defaulted and checked."""

    api_version: str
    name: str
    # Namespace for metadata.namespace and the RoleBindings' ServiceAccount subjects; None leaves it
    # out of both (`kubectl apply -n` decides, and a subject without one is the binding's namespace).
    namespace: str | None
    workers: int
    slots_per_worker: int
    # Pod templates after the front's version-specific edits, before the MPI machinery is added.
    launcher_template: dict[str, Any]
    worker_template: dict[str, Any]
    # None: the Job's own default (6), omitted from the output.
    backoff_limit: int | None
    active_deadline_seconds: int | None
    clean_pod_policy: CleanPodPolicy
    labels: Labels
    service: JobService
    warnings: tuple[Issue, ...] = ()
    # Where each template sits in the input document ("launcher", "worker"), for messages.
    template_paths: dict[str, Path] = {}  # noqa: RUF012 - read only; every front sets its own
    # Where the worker count comes from in the input document, for messages about it.
    workers_path: Path = ("spec",)
    implementation: Implementation = "OpenMPI"
    # None: the kubectl-exec transport (kubexec.sh, kubectl delivered to the launcher).
    ssh: Ssh | None = None
    hostnames: Hostnames = Hostnames()
    launcher_creation: LauncherCreation = "WaitForWorkersReady"
    # The launcher's NVIDIA_VISIBLE_DEVICES and NVIDIA_DRIVER_CAPABILITIES are set empty, so that a
    # launcher that is not a host of the hostfile does not grab the node's GPUs (v0.8.2, training-operator).
    blank_launcher_gpus: bool = False
    # The ServiceAccount the launcher runs as when it needs API access: mpigen's `<job>-launcher`
    # (None) or the template's own, which the launcher Role is then bound to.
    launcher_service_account: str | None = None
    ttl_seconds_after_finished: int | None = None
    # runPolicy.managedBy (v1, v2beta1): the operator's own value or Kueue's MultiKueue; None: unset.
    managed_by: str | None = None
    # Where the job wrote its cleanPodPolicy; None: the version's default.
    clean_pod_policy_at: Path | None = None
    suspend: bool = False
    # Job.spec.podReplacementPolicy: Failed (Kubernetes 1.29 and newer).
    pod_replacement_failed: bool = False
    scheduling: Scheduling = Scheduling()
    # discover_hosts.sh (Horovod elastic) in the ConfigMap: None; one host per line (v0.8.2); or
    # `host:slots` per line (training-operator).
    discover_hosts: Literal["hosts", "slots"] | None = None
    # kubectl-exec transport, training-operator: kubexec.sh execs into this container of the worker
    # pods (`--container`); the launcher also points Intel MPI's Hydra at kubexec.sh (unless its
    # template sets those variables); the workers keep a command the template gives.
    exec_container: str | None = None
    hydra_bootstrap: bool = False
    worker_keeps_command: bool = False
    # kubexec.sh skips the leading `-` arguments before the pod name (v1alpha2: mpi-operator v0.3.0).
    kubexec_skips_options: bool = False
    kubectl_delivery: KubectlDelivery = KubectlDelivery()

    @property
    def worker_pod_names(self) -> list[str]:
        return names.worker_pods(self.name, self.workers)

    @property
    def kubexec(self) -> bool:
        return self.ssh is None

    @property
    def waits_for_workers(self) -> bool:
        """The launcher holds mpirun back until every worker pod is Ready (none to wait for: no wait)."""
        return self.launcher_creation == "WaitForWorkersReady" and self.workers > 0

    @property
    def launcher_needs_api(self) -> bool:
        """The launcher talks to the API server: kubectl exec, or waiting for the workers."""
        return self.kubexec or self.waits_for_workers

    def host_names(self) -> list[str]:
        """The hosts of the hostfile, in order: the launcher first if it is a worker, then the workers."""
        pods = ([names.launcher(self.name)] if self.hostnames.launcher_first else []) + self.worker_pod_names
        if not self.hostnames.fqdn:
            return pods
        domain = self.hostnames.cluster_domain
        return [names.host(pod, self.service.name, self.namespace, domain) for pod in pods]


class TrainPlan(Record):
    """A Kubeflow Trainer TrainJob with its runtime resolved (mpigen.inputs.trainjob): everything Trainer's
    controller reads, already defaulted (the CRDs' defaults) and checked (its webhooks' rules). The
    runtime's JobSet template is carried as the controller copies it: after the TrainJob's
    runtimePatches and resourcesPerNode, before the MPI, trainer and scheduling changes, which the jobset
    target makes."""

    name: str
    namespace: str | None
    # "ClusterTrainingRuntime" or "TrainingRuntime", and its name.
    runtime: tuple[str, str]
    # metadata of the JobSet: the runtime template's labels and annotations, the runtime patches' over them.
    labels: dict[str, str]
    annotations: dict[str, str]
    # The runtime's template.spec (a JobSetSpec) after runtimePatches and resourcesPerNode.
    jobset_spec: dict[str, Any]
    # spec.trainer.numNodes of the TrainJob (None: unset) and mlPolicy.numNodes of the runtime (default 1).
    num_nodes: int | None
    runtime_num_nodes: int
    # numProcPerNode: the TrainJob's, else the runtime's (default 1): the hostfile's slots.
    slots: int
    implementation: Implementation
    ssh_mount_path: str
    run_launcher_as_node: bool
    # spec.trainer of the TrainJob (image, command, args, env, resourcesPerNode), as written.
    trainer: dict[str, Any]
    suspend: bool
    managed_by: str
    # podGroupPolicy.coscheduling.scheduleTimeoutSeconds; None: no podGroupPolicy.
    schedule_timeout_seconds: int | None
    warnings: tuple[Issue, ...] = ()
    # spec.activeDeadlineSeconds (Trainer v2.2+); None: unset.
    active_deadline_seconds: int | None = None
    # podGroupPolicy.volcano of the runtime (its networkTopology, if any); None: no Volcano gang.
    volcano: dict[str, Any] | None = None
