"""Options: every knob of a compile, as one frozen value (the counterpart of black's `Mode`), and the
one table of them (`OPTION_TABLE`) from which the command-line flags (mpigen.shells.common), the
`mpigen.dev/*` annotations (mpigen.inputs.annotations) and the input schemas' list of those annotations
(tools/schemagen.py) are all derived.

Defaults are those of the mpi-operator v0.2.0 as shipped (`deploy/3-mpi-operator.yaml` passes
`--gpus-per-node 8` and `--kubectl-delivery-image mpioperator/kubectl-delivery:latest`;
`cmd/mpi-operator.v1alpha1/main.go` defaults the rest), but for the kubectl-delivery image of
kubeflow.org/v1 jobs, which is the training-operator's.
"""

# No `from __future__ import annotations` here: NamedTuple would compile every field's annotation as a
# ForwardRef (as in mpigen.plan).
from typing import Any, Literal, NamedTuple

from mpigen.records import Record
from mpigen.targets import DEFAULT_TARGET, TARGETS

GPU_RESOURCE = "nvidia.com/gpu"
CPU_RESOURCE = "cpu"
PROCESSING_RESOURCE_TYPES = (GPU_RESOURCE, CPU_RESOURCE)

DEFAULT_KUBECTL_DELIVERY_IMAGE = "mpioperator/kubectl-delivery:latest"
# kubeflow.org/v1: the training-operator's `--mpi-kubectl-delivery-image` default (pkg/config). Its
# entrypoint only copies kubectl; mpi-operator's later kubectl-delivery images (v0.2.3 on) also watch
# the hostfile's pods, which needs `list`/`watch` on every pod of the namespace.
TRAINING_OPERATOR_KUBECTL_DELIVERY_IMAGE = "kubeflow/kubectl-delivery:latest"
DEFAULT_WAIT_TIMEOUT_SECONDS = 600
# The largest count an option takes (GPUs or units per node, the wait timeout in seconds): nine digits,
# so that a schema pattern can state it, and well inside the 32 bits a POSIX shell's arithmetic may
# hold (the wait-for-workers script compares seconds with `[ "$elapsed" -ge "$timeout" ]`).
MAX_COUNT = 999_999_999

VOLCANO = "volcano"
SCHEDULER_PLUGINS = "scheduler-plugins"
# Kubernetes' own gang scheduling (1.37: scheduling.k8s.io/v1beta1 Workload and PodGroup, kube-scheduler's
# gangscheduling plugin), no add-on: mpigen.targets.shared.workload.
KUBERNETES = "kubernetes"
GANG_SCHEDULERS = (VOLCANO, SCHEDULER_PLUGINS, KUBERNETES)
# The scheduler a gang scheduler's pods name: Volcano's own, and the profile name of the
# scheduler-plugins scheduler when it runs beside the default scheduler (its Helm chart's default).
NETWORK_POLICIES = ("same-job",)
DEFAULT_SCHEDULER_NAMES = {VOLCANO: "volcano", SCHEDULER_PLUGINS: "scheduler-plugins-scheduler"}


class Options(NamedTuple):
    """How to compile. Fields set on a job's spec take precedence over the per-node defaults here.
    A NamedTuple (its fields in `Options._fields`), so immutable, hashable and compared by value."""

    gpus_per_node: int = 8
    processing_units_per_node: int = 1
    processing_resource_type: str = GPU_RESOURCE
    # None: the default of the job's operator (DEFAULT_KUBECTL_DELIVERY_IMAGE, or
    # TRAINING_OPERATOR_KUBECTL_DELIVERY_IMAGE for kubeflow.org/v1).
    kubectl_delivery_image: str | None = None
    # Namespace for objects whose job names none. None: leave metadata.namespace out, so that
    # `kubectl apply -n NS` decides.
    namespace: str | None = None
    # How long the launcher's wait-for-workers init container waits for every worker pod to be Ready.
    wait_timeout_seconds: int = DEFAULT_WAIT_TIMEOUT_SECONDS
    # Gang scheduling: None (off), "volcano", "scheduler-plugins" or "kubernetes".
    gang_scheduler: str | None = None
    # schedulerName for the job's pods under gang scheduling; None: the gang scheduler's default.
    scheduler_name: str | None = None
    # Check pod templates and every emitted object against Kubernetes' strict schemas of this version
    # ("1.25" .. "1.37"; None: the newest shipped).
    validate: bool = True
    kube_version: str | None = None
    # v2beta1: the cluster's DNS domain appended to the hostfile's names (the operator's
    # --cluster-domain); None: `<pod>.<job>.<ns>.svc`.
    cluster_domain: str | None = None
    # v2beta1: the Secret holding the SSH key pair (keys ssh-privatekey, ssh-publickey), provided by
    # the user; None: mpigen renders `<job>-ssh` and a Job that generates the keys into it.
    ssh_secret: str | None = None
    # "same-job": a NetworkPolicy admitting traffic into the job's pods only from the same job's pods;
    # None: none.
    network_policy: str | None = None
    # The run target: what the job becomes in the cluster (a key of mpigen.targets.TARGETS).
    target: str = DEFAULT_TARGET
    # Kueue (jobset target): the LocalQueue (`kueue.x-k8s.io/queue-name`) and WorkloadPriorityClass
    # (`kueue.x-k8s.io/priority-class`) labels of the JobSet; None: no label.
    queue: str | None = None
    priority_class: str | None = None
    # Where the job's pods run (mpigen.placement): "required:<node-label-key>",
    # "preferred:<node-label-key>" or "slice:<node-label-key>:<size>"; None: wherever the scheduler finds room.
    topology: str | None = None
    # A disruption of a pod (eviction, preemption, node drain: the pod's DisruptionTarget condition)
    # restarts the job without counting against its retry budget, where the target's engine can tell it
    # from a failure (docs/departures.md, "Disruptions"); False: every restart counts, as before.
    free_disruptions: bool = True

    @property
    def effective_scheduler_name(self) -> str | None:
        if self.gang_scheduler is None:
            return None
        # kubernetes: the pods keep their own scheduler (kube-scheduler) unless --scheduler-name is given.
        return self.scheduler_name or DEFAULT_SCHEDULER_NAMES.get(self.gang_scheduler)

    def replace(self, **changes: Any) -> "Options":
        """The same options with the fields named in `changes` set (`options.replace(namespace="ml")`).
        A field name that is not one of Options' is a TypeError, as a keyword the constructor does not
        take is."""
        unknown = changes.keys() - self._fields
        if unknown:
            raise TypeError(f"Options has no field {', '.join(sorted(unknown))}")
        return self._replace(**changes)


# How an option's value is written and checked: on the command line (click type), in an annotation
# (parser in mpigen.inputs.annotations) and in the input schema (tools/schemagen.py).
ValueKind = Literal[
    "count",
    "choice",
    "image",
    "namespace",
    "dns-label",
    "dns-subdomain",
    "kube-version",
    "switch",
    "topology",
]


class OptionSpec(Record):
    """One option: its flag (`--<flag>`; `mpigen.dev/<flag>` as an annotation), the `Options` field it
    sets, its kind of value, the flag's help and the annotation's description in the input schema.
    A "switch" is on by default: the flag is `--no-<flag>`, the annotation "true" or "false"."""

    flag: str
    field: str
    kind: ValueKind
    help: str
    summary: str
    choices: tuple[str, ...] = ()
    metavar: str | None = None
    short: str | None = None
    needs: str | None = None  # the flag of another option this one means nothing without
    # The targets on which what `needs` names is implied, so this option is met without it.
    implied_on: tuple[str, ...] = ()
    # The targets (keys of mpigen.targets.TARGETS) this option means something on (empty: all), and why
    # it is refused on the others.
    targets: tuple[str, ...] = ()
    off_target: str = ""


# Why Kueue's options are refused on the operator target.
_TWO_WORKLOADS = (
    "the operator target renders the launcher Job and the worker StatefulSet, which Kueue would admit as two"
    " workloads (the launcher may be admitted while the workers wait, or the reverse); use --target jobset,"
    " one JobSet that Kueue admits whole"
)

# In the order `--help` lists the flags.
OPTION_TABLE: tuple[OptionSpec, ...] = (
    OptionSpec(
        "namespace",
        "namespace",
        "namespace",
        "Namespace for jobs that name none (default: none, so `kubectl apply -n` decides).",
        "Namespace of the generated objects when metadata.namespace is unset.",
        metavar="NS",
        short="-n",
    ),
    OptionSpec(
        "gpus-per-node",
        "gpus_per_node",
        "count",
        "v1alpha1: GPUs per node when the job's spec.gpusPerNode is unset.",
        "v1alpha1: GPUs per node when spec.gpusPerNode is unset (default 8).",
    ),
    OptionSpec(
        "processing-units-per-node",
        "processing_units_per_node",
        "count",
        "v1alpha1: processing units per node when spec.processingUnitsPerNode is unset.",
        "v1alpha1: units per node when spec.processingUnitsPerNode is unset.",
    ),
    OptionSpec(
        "processing-resource-type",
        "processing_resource_type",
        "choice",
        "v1alpha1: resource when spec.processingResourceType is unset.",
        "v1alpha1: the resource when spec.processingResourceType is unset.",
        choices=PROCESSING_RESOURCE_TYPES,
    ),
    OptionSpec(
        "kubectl-delivery-image",
        "kubectl_delivery_image",
        "image",
        "Image that delivers kubectl to the launcher (alpine with kubectl); also runs the wait-for-workers and clean-up scripts [default: mpioperator/kubectl-delivery:latest; for kubeflow.org/v1 kubeflow/kubectl-delivery:latest, the training-operator's].",
        "Image that delivers kubectl and runs the launcher's helper scripts.",
        metavar="IMAGE",
    ),
    OptionSpec(
        "wait-timeout",
        "wait_timeout_seconds",
        "count",
        "How long the launcher waits for every worker pod to be Ready before it fails (and the Job retries); at most 999999999.",
        "Seconds the launcher waits for every worker pod to be Ready (default 600, at most 999999999).",
        metavar="SECONDS",
    ),
    OptionSpec(
        "gang-scheduler",
        "gang_scheduler",
        "choice",
        "Gang-schedule the job's pods: volcano or scheduler-plugins, a PodGroup of that add-on (minMember = workers + 1) and a workers' PodDisruptionBudget; kubernetes, Kubernetes 1.37's own Workload and PodGroup (scheduling.k8s.io/v1beta1, the GenericWorkload gate) and the pods' spec.schedulingGroup. Default: off.",
        "Gang-schedule the job: an add-on's PodGroup and a workers' PDB, or Kubernetes' own Workload and PodGroup.",
        choices=GANG_SCHEDULERS,
    ),
    OptionSpec(
        "kube-version",
        "kube_version",
        "kube-version",
        "Kubernetes version whose strict schemas and API-server pod rules check pod templates and output (1.25 to 1.37) [default: newest].",
        'Kubernetes version of the schema checks, like "1.30" (default: newest).',
        metavar="VERSION",
    ),
    OptionSpec(
        "validate",
        "validate",
        "switch",
        "Skip the schema checks and API-server pod rules of pod templates and output.",
        '"false" skips the schema checks of pod templates and output.',
    ),
    OptionSpec(
        "scheduler-name",
        "scheduler_name",
        "dns-subdomain",
        "schedulerName of the job's pods under gang scheduling, a DNS subdomain [default: volcano, or scheduler-plugins-scheduler; kubernetes: the pods' own]; with --target volcano the Volcano Job's schedulerName (gang scheduling implied).",
        "schedulerName of the job's pods under gang scheduling (a DNS subdomain).",
        metavar="NAME",
        needs="gang-scheduler",
        # A Volcano Job is always one gang: spec.schedulerName names the Volcano scheduler that runs it.
        implied_on=("volcano",),
    ),
    OptionSpec(
        "cluster-domain",
        "cluster_domain",
        "dns-subdomain",
        "v2beta1: the cluster's DNS domain, appended to the hostfile's host names (<pod>.<job>.<ns>.svc.DOMAIN) and the workers' DNS search entry [default: none; search cluster.local].",
        "v2beta1: the cluster's DNS domain for the hostfile's names (default: none).",
        metavar="DOMAIN",
    ),
    OptionSpec(
        "ssh-secret",
        "ssh_secret",
        "dns-subdomain",
        "v2beta1: use this existing Secret (keys ssh-privatekey, ssh-publickey) for SSH instead of rendering <job>-ssh and a key-generation Job.",
        "v2beta1: an existing Secret with the SSH key pair; no key-generation Job.",
        metavar="SECRET",
    ),
    OptionSpec(
        "network-policy",
        "network_policy",
        "choice",
        "Emit a NetworkPolicy <job> that admits traffic into the job's launcher and worker pods only from the same job's pods (same-job), on every target. Default: none.",
        "A NetworkPolicy: traffic into the job's pods only from its own pods.",
        choices=NETWORK_POLICIES,
    ),
    OptionSpec(
        "target",
        "target",
        "choice",
        "What the job becomes in the cluster: operator, the objects the mpi-operator would create plus what runs them without it; volcano, one Volcano batch.volcano.sh/v1alpha1 Job (Volcano v1.14); jobset, one JobSet (jobset.x-k8s.io/v1alpha2: the JobSet controller v0.12 or newer, installed with Kubeflow Trainer v2).",
        "What the job becomes in the cluster (default: operator).",
        choices=tuple(TARGETS),
    ),
    OptionSpec(
        "queue",
        "queue",
        "dns-label",
        "jobset target: the Kueue LocalQueue that admits the job (label kueue.x-k8s.io/queue-name on the JobSet, rendered suspended for Kueue to start whole). A v2beta1 job's SSH key Job gets no queue: with manageJobsWithoutQueueName it would wait for admission forever, so pass --ssh-secret there.",
        "jobset target: the Kueue LocalQueue (label kueue.x-k8s.io/queue-name).",
        metavar="NAME",
        targets=("jobset",),
        off_target=_TWO_WORKLOADS,
    ),
    OptionSpec(
        "priority-class",
        "priority_class",
        "dns-label",
        "jobset target, with --queue: the Kueue WorkloadPriorityClass of the job (label kueue.x-k8s.io/priority-class).",
        "jobset target: the Kueue WorkloadPriorityClass (label kueue.x-k8s.io/priority-class).",
        metavar="NAME",
        needs="queue",
        targets=("jobset",),
        off_target=_TWO_WORKLOADS,
    ),
    OptionSpec(
        "topology",
        "topology",
        "topology",
        "Keep the job's pods together by a node label, in the scheduler's own words (docs/placement.md): required:KEY, every pod (launcher and workers) in one domain of the label or none starts; preferred:KEY, as few domains as possible; slice:KEY:SIZE, groups of SIZE consecutive worker ranks per domain (jobset target only). Operator target: pod affinity (kube-scheduler); jobset target, with --queue: Kueue topology-aware scheduling; volcano target: the Job's networkTopology over HyperNodes whose tier name is KEY.",
        "Placement by a node label: required:KEY, preferred:KEY or slice:KEY:SIZE.",
        metavar="MODE:KEY",
    ),
    OptionSpec(
        "free-disruptions",
        "free_disruptions",
        "switch",
        "Count every restart against the retry budget, disruptions too. By default a pod evicted, preempted or drained (condition DisruptionTarget) restarts the job without counting: jobset target and TrainJobs, each Job's podFailurePolicy (its pods restartPolicy Never, the launcher's too) and the JobSet's failurePolicy.rules, none beside a runtime's own; operator target, the launcher Job's podFailurePolicy when its restartPolicy is Never; volcano target, no change (Volcano counts every restart). Before Kubernetes 1.26 (--kube-version) nothing is rendered, with a warning.",
        '"false" counts disruptions (evictions, preemptions, drains) against the retry budget.',
    ),
)

_FIELDS = {spec.flag: spec.field for spec in OPTION_TABLE}


def unmet_needs(values: dict[str, Any]) -> list[tuple[str, str]]:
    """(flag, the flag it needs) for each option set in `values` (by field) without the option it needs:
    the one rule the flags, the plain call and the annotations each say in their own words."""
    target = values.get("target") or DEFAULT_TARGET
    return [
        (spec.flag, spec.needs)
        for spec in OPTION_TABLE
        if spec.needs is not None
        and values.get(spec.field)
        and not values.get(_FIELDS[spec.needs])
        and target not in spec.implied_on
    ]


def off_target(values: dict[str, Any]) -> list[OptionSpec]:
    """The options set in `values` (by field) that mean nothing on the target `values` names."""
    target = values.get("target") or DEFAULT_TARGET
    return [
        spec
        for spec in OPTION_TABLE
        if spec.targets and values.get(spec.field) and target not in spec.targets
    ]
