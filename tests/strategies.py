"""Hypothesis strategies: valid MPIJobs of every supported apiVersion, and the options to compile them.

`cases()` draws a `Case`: an MPIJob the compiler must accept (kubeflow.org/v1alpha1 sized by gpus,
processingUnits or replicas, or kubeflow.org/v1alpha2 with a Launcher and Workers), the `Options` it is
compiled with, and what its output must show (workers, slots per worker, namespace, gang scheduler,
clean-up). Those expectations are worked out here from the way the job was drawn, following the
sizing rules of docs/index.md, not from mpigen's own code.

Everything drawn is valid for the API server too: DNS-1123 names short enough for every derived name,
well-formed label keys and values, volume mounts that name a volume of the pod, unique container, volume
and variable names that never collide with what mpigen adds (`mpi-job-*` volumes, `kubectl-delivery`,
`/etc/mpi`), and only fields that every supported Kubernetes version (1.25 on) knows. Free text
(commands, variables, annotation values) includes strings a YAML 1.1 reader would take for something
else, multi-line strings and arbitrary Unicode.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from mpigen import names
from mpigen.checks.kube.versions import SUPPORTED_KUBE_VERSIONS
from mpigen.inputs.annotations import PREFIX
from mpigen.options import CPU_RESOURCE, GANG_SCHEDULERS, GPU_RESOURCE, PROCESSING_RESOURCE_TYPES, Options
from mpigen.targets.operator import limits

Obj = dict[str, Any]
Draw = Any  # hypothesis' draw function

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
MAX_WORKERS = 64
MAX_PER_NODE = 16

# The longest job name every derived name allows: `<job>-worker` plus "-" and the 10-character
# controller-revision-hash stays a 63-character label value (mpigen/targets/operator/limits.py); the other derived
# names (`<job>-launcher`, `<job>-cleanup`, `<job>-worker-63`) are shorter.
JOB_NAME_MAX = names.DNS1123_LABEL_MAX - 1 - limits.REVISION_HASH_LENGTH - len(names.WORKER_SUFFIX)


# Strings a YAML 1.1 or 1.2 reader would take for a boolean, number, null, timestamp, merge key or
# something else than the string, plus strings only some scalar styles can carry.
def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


YAML_TRAPS = (
    *_words(
        "yes No ON off y n true False null Null ~ 0123 012 1e3 1E-3 0x1F 0o17 0b101 1_000 +1 -.5 .inf .NaN"
    ),
    *_words("1:20 2001-12-14 2001-12-14t21:59:43.10-05:00 = << #comment 'quoted' \"double\" @at `tick %pc"),
    *_words("!tag &anchor *alias | > caf\u00e9 \U0001f600"),
    *("", "- item", "key: value", "trailing space ", " leading space", "tab\there", "\u2028", "\x85next"),
    *("a\nb", "a\n", "\n", "line one\nline two\n\n", "a  b\n  c\n"),
)
TEXT = st.one_of(st.sampled_from(YAML_TRAPS), st.text(max_size=40))

IMAGES = (
    "busybox",
    "example.com/train:1.0",
    "registry.example.com:5000/team/horovod:0.16.0-tf1.12.0-torch1.0.0-py3.5",
    "mpioperator/tensorflow-benchmarks:latest",
    "ghcr.io/example/trainer@sha256:" + "0123456789abcdef" * 4,
)
images = st.sampled_from(IMAGES)

LOWER = "abcdefghijklmnopqrstuvwxyz"
ALNUM = LOWER + "0123456789"


def _names(first: str, middle: str, last: str, max_size: int) -> st.SearchStrategy[str]:
    """`first`, then up to max_size - 1 characters of `middle` of which the last is one of `last`."""
    return st.builds(
        lambda head, body, tail: head + (body + tail if tail else ""),
        st.sampled_from(first),
        st.text(middle, max_size=max_size - 2),
        st.one_of(st.just(""), st.sampled_from(last)),
    )


# Names with no "-" can never collide with the names mpigen adds (`mpi-job-config`, `kubectl-delivery`).
plain_names = _names(LOWER, ALNUM, ALNUM, 10)
dns_labels = _names(LOWER, ALNUM + "-", ALNUM, 16)
job_names = st.one_of(
    _names(LOWER, ALNUM + "-", ALNUM, JOB_NAME_MAX), st.just("j" + "-" * (JOB_NAME_MAX - 2) + "9")
)
namespaces = st.one_of(st.sampled_from(["default", "ml", "team-a"]), dns_labels)

_MIXED = ALNUM + LOWER.upper()
qualified_names = _names(_MIXED, _MIXED + "-_.", _MIXED, 22)
label_keys = st.one_of(
    st.sampled_from(["app", "team", "yes", "on", "null", "1", "0123", "example.com/role", "a.b/c_d"]),
    st.builds(str.__add__, st.sampled_from(["", "example.com/", "team.example.org/", "x/"]), qualified_names),
)
label_values = st.one_of(
    st.sampled_from(["", "yes", "off", "true", "null", "0123", "1e3", "0x1F", "1_000"]),
    qualified_names,
)
# A few of the labels mpigen sets on the pods itself: the template's value must lose.
overridden_labels = st.fixed_dictionaries(
    {}, optional={names.LABEL_ROLE: st.just("other"), "app.kubernetes.io/name": st.just("mine")}
)


def _small_dict(keys: st.SearchStrategy[str], values: st.SearchStrategy[Any]) -> st.SearchStrategy[Obj]:
    return st.dictionaries(keys, values, max_size=3)


@dataclass(frozen=True)
class Case:
    """One valid MPIJob, the options to compile it with, and what its output must show."""

    job: Obj
    options: Options
    workers: int
    slots: int
    namespace: str | None
    gang_scheduler: str | None
    cleanup: bool


# ---- pod templates --------------------------------------------------------------------------------

VOLUME_SOURCES: tuple[Obj, ...] = (
    {"emptyDir": {}},
    {"emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}},
    {"configMap": {"name": "settings"}},
    {"secret": {"secretName": "credentials", "defaultMode": 0o400}},
    {"hostPath": {"path": "/data", "type": "Directory"}},
    {"persistentVolumeClaim": {"claimName": "datasets", "readOnly": True}},
)
volume_lists = st.lists(
    st.builds(lambda name, source: {"name": name, **source}, plain_names, st.sampled_from(VOLUME_SOURCES)),
    max_size=3,
    unique_by=lambda volume: str(volume["name"]),
)

# Upper-case names: mpigen's own OMPI_MCA_* variables have lower-case parts, so never collide.
env_names = _names("ABCDEFGHIJKLMNOPQRSTUVWXYZ_", "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", "ABCXYZ019_", 12)
env_lists = st.lists(
    st.one_of(
        st.fixed_dictionaries({"name": env_names, "value": TEXT}),
        st.fixed_dictionaries(
            {"name": env_names, "valueFrom": st.just({"fieldRef": {"fieldPath": "metadata.name"}})}
        ),
    ),
    max_size=4,
    unique_by=lambda var: str(var["name"]),
)

MEMORY_LIMITS = ("1Gi", "2Gi", "4096Mi", 8589934592)
MEMORY_REQUESTS = ("64Mi", "128M", "512Mi")  # each below every limit: requests never exceed limits
# Resources without the processing resource: memory only, requests below limits.
plain_resources = st.fixed_dictionaries(
    {},
    optional={
        "limits": st.fixed_dictionaries({"memory": st.sampled_from(MEMORY_LIMITS)}),
        "requests": st.fixed_dictionaries(
            {"memory": st.sampled_from(MEMORY_REQUESTS)}, optional={"ephemeral-storage": st.just("1Gi")}
        ),
    },
)

container_fields = st.fixed_dictionaries(
    {},
    optional={
        "command": st.lists(TEXT, min_size=1, max_size=3),
        "args": st.lists(TEXT, max_size=3),
        "env": env_lists,
        "workingDir": st.sampled_from(["/work", "/home/mpiuser"]),
        "imagePullPolicy": st.sampled_from(["Always", "IfNotPresent", "Never"]),
        "securityContext": st.fixed_dictionaries({"privileged": st.booleans()}),
        "stdin": st.booleans(),
    },
)


@st.composite
def _container(
    draw: Draw, name: str, volume_names: list[str], ports: list[int], resources: Obj | None
) -> Obj:
    container: Obj = {"name": name, "image": draw(images), **draw(container_fields)}
    mounted = draw(st.lists(st.sampled_from(volume_names), unique=True)) if volume_names else []
    if mounted:
        container["volumeMounts"] = [
            {
                "name": volume,
                "mountPath": f"/mnt/{volume}",
                **({"readOnly": True} if draw(st.booleans()) else {}),
            }
            for volume in mounted
        ]
    if ports:
        container["ports"] = [{"containerPort": port, "protocol": "TCP"} for port in ports]
    resources = draw(plain_resources) if resources is None else resources
    if resources:
        container["resources"] = resources
    return container


tolerations = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {"key": label_keys, "operator": st.just("Exists")},
            optional={"effect": st.sampled_from(["NoSchedule", "PreferNoSchedule"])},
        ),
        st.fixed_dictionaries(
            {
                "key": label_keys,
                "operator": st.just("Equal"),
                "value": label_values,
                "effect": st.just("NoExecute"),
            },
            optional={"tolerationSeconds": st.integers(0, 3600)},
        ),
    ),
    min_size=1,
    max_size=3,
)
node_affinities = st.builds(
    lambda expressions: {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": expressions}]
            }
        }
    },
    st.lists(
        st.fixed_dictionaries(
            {
                "key": label_keys,
                "operator": st.just("In"),
                "values": st.lists(label_values, min_size=1, max_size=3),
            }
        ),
        min_size=1,
        max_size=2,
    ),
)

# Pod-level fields a user may set; mpigen keeps them (or says in a warning why not).
pod_fields = st.fixed_dictionaries(
    {},
    optional={
        "nodeSelector": _small_dict(label_keys, label_values),
        "tolerations": tolerations,
        "affinity": node_affinities,
        "restartPolicy": st.sampled_from(["Always", "OnFailure", "Never"]),
        "terminationGracePeriodSeconds": st.integers(0, 3600),
        "priorityClassName": dns_labels,
        "dnsPolicy": st.sampled_from(["ClusterFirst", "Default"]),
        "securityContext": st.fixed_dictionaries(
            {}, optional={"runAsUser": st.integers(0, 65535), "fsGroup": st.integers(0, 65535)}
        ),
        "imagePullSecrets": st.lists(st.fixed_dictionaries({"name": dns_labels}), min_size=1, max_size=2),
        "schedulerName": st.sampled_from(["default-scheduler", "my-scheduler", "volcano"]),
        "serviceAccountName": dns_labels,
        "automountServiceAccountToken": st.booleans(),
        "enableServiceLinks": st.booleans(),
        "shareProcessNamespace": st.booleans(),
    },
)

template_metadata = st.fixed_dictionaries(
    {},
    optional={
        "labels": st.builds(
            lambda own, forced: {**own, **forced}, _small_dict(label_keys, label_values), overridden_labels
        ),
        "annotations": _small_dict(label_keys, TEXT),
    },
)


@st.composite
def pod_templates(draw: Draw, first_resources: Obj | None = None) -> Obj:
    """A pod template: 1-3 containers and 0-2 init containers with unique names, volumes, mounts of
    those volumes, and optional pod fields. `first_resources`, if given, are containers[0]'s resources."""
    volumes = draw(volume_lists)
    volume_names = [volume["name"] for volume in volumes]
    count, inits = draw(st.integers(1, 3)), draw(st.integers(0, 2))
    container_names = draw(st.lists(plain_names, min_size=count + inits, max_size=count + inits, unique=True))
    ports = draw(st.lists(st.integers(1, 65535), max_size=2 * count, unique=True))
    spec: Obj = {
        "containers": [
            draw(
                _container(
                    name,
                    volume_names,
                    ports[2 * index : 2 * index + 2],
                    first_resources if index == 0 else None,
                )
            )
            for index, name in enumerate(container_names[:count])
        ]
    }
    if inits:
        spec["initContainers"] = [
            draw(_container(name, volume_names, [], None)) for name in container_names[count:]
        ]
    if volumes:
        spec["volumes"] = volumes
    spec.update(draw(pod_fields))
    template: Obj = {"spec": spec}
    if draw(st.booleans()):
        template["metadata"] = draw(template_metadata)
    return template


# ---- options and per-job annotations ---------------------------------------------------------------


kube_version_texts = st.sampled_from(SUPPORTED_KUBE_VERSIONS).flatmap(
    lambda version: st.sampled_from([version, f"v{version}", f"{version}.3"])
)


@st.composite
def options(draw: Draw) -> Options:
    """Any valid Options: gang scheduling off or on, a namespace or none, a wait timeout, an image, ..."""
    gang = draw(st.sampled_from([None, *GANG_SCHEDULERS]))
    return Options(
        gpus_per_node=draw(st.integers(1, MAX_PER_NODE)),
        processing_units_per_node=draw(st.integers(1, MAX_PER_NODE)),
        processing_resource_type=draw(st.sampled_from(PROCESSING_RESOURCE_TYPES)),
        kubectl_delivery_image=draw(images),
        namespace=draw(st.one_of(st.none(), namespaces)),
        wait_timeout_seconds=draw(st.integers(1, 86400)),
        gang_scheduler=gang,
        scheduler_name=draw(st.one_of(st.none(), dns_labels)) if gang else None,
        validate=draw(st.booleans()),
        kube_version=draw(st.one_of(st.none(), st.sampled_from(_kube_versions(gang)))),
    )


def _kube_versions(gang: str | None) -> list[str]:
    """The versions a gang scheduler works with: Kubernetes' own from 1.37 (Workload and PodGroup v1beta1)."""
    if gang != "kubernetes":
        return list(SUPPORTED_KUBE_VERSIONS)
    return [v for v in SUPPORTED_KUBE_VERSIONS if tuple(map(int, v.split("."))) >= (1, 37)]


@dataclass(frozen=True)
class Effective:
    """The option values that decide the expected output, after the job's annotations."""

    gpus_per_node: int
    processing_units_per_node: int
    processing_resource_type: str
    namespace: str | None
    gang_scheduler: str | None


# Every per-job option (mpigen/inputs/annotations.py), by its key after `mpigen.dev/`; half the jobs set none.
annotation_choices: st.SearchStrategy[dict[str, str]] = st.just({}) | st.fixed_dictionaries(
    {},
    optional={
        "gpus-per-node": st.integers(1, MAX_PER_NODE).map(str),
        "processing-units-per-node": st.integers(1, MAX_PER_NODE).map(str),
        "processing-resource-type": st.sampled_from(PROCESSING_RESOURCE_TYPES),
        "kubectl-delivery-image": images,
        "namespace": namespaces,
        "wait-timeout": st.one_of(st.integers(1, 86400).map(str), st.just("0600")),
        "gang-scheduler": st.sampled_from(GANG_SCHEDULERS),
        "scheduler-name": dns_labels,
        "kube-version": kube_version_texts,
        "validate": st.sampled_from(["true", "false"]),
    },
)


@st.composite
def job_annotations(draw: Draw, base: Options) -> tuple[dict[str, str], Effective]:
    """`mpigen.dev/*` annotations and the option values in force once they override `base`."""
    chosen: dict[str, str] = draw(annotation_choices)
    gang = chosen.get("gang-scheduler", base.gang_scheduler)
    if gang is None:
        chosen.pop("scheduler-name", None)  # a scheduler name needs a gang scheduler
    version = chosen.get("kube-version", base.kube_version)
    if gang == "kubernetes" and version is not None and version.lstrip("v")[:4] not in _kube_versions(gang):
        chosen["kube-version"] = _kube_versions(gang)[0]  # --gang-scheduler kubernetes needs 1.37 or newer
    effective = Effective(
        gpus_per_node=int(chosen.get("gpus-per-node", base.gpus_per_node)),
        processing_units_per_node=int(
            chosen.get("processing-units-per-node", base.processing_units_per_node)
        ),
        processing_resource_type=chosen.get("processing-resource-type", base.processing_resource_type),
        namespace=chosen.get("namespace", base.namespace),
        gang_scheduler=gang,
    )
    return {PREFIX + key: value for key, value in chosen.items()}, effective


job_labels = _small_dict(label_keys, label_values)
job_notes = _small_dict(st.sampled_from(["description", "example.com/owner", "yes"]), TEXT)


@st.composite
def job_metadata(draw: Draw, base: Options) -> tuple[Obj, Effective, str | None]:
    """The MPIJob's metadata, the option values in force, and the namespace its objects must carry.

    The job's own namespace, if any, agrees with the options' (a mismatch is an error)."""
    annotations, effective = draw(job_annotations(base))
    meta: Obj = {"name": draw(job_names)}
    own = draw(st.one_of(st.none(), st.just(effective.namespace) if effective.namespace else namespaces))
    if own is not None:
        meta["namespace"] = own
    if draw(st.booleans()):
        meta["labels"] = draw(job_labels)
    notes = draw(job_notes)
    if annotations or notes:
        meta["annotations"] = {**notes, **annotations}
    return meta, effective, own or effective.namespace


# ---- kubeflow.org/v1alpha1 -------------------------------------------------------------------------


@functools.cache
def valid_totals(per_node: int) -> tuple[int, ...]:
    """Totals of gpus/processingUnits the CRD allows (1, 2, 4 or a multiple of 8) that split into at
    most MAX_WORKERS workers of `per_node` units (or fewer than `per_node` units on one worker)."""
    return tuple(
        total
        for total in range(1, MAX_WORKERS * per_node + 1)
        if (total in (1, 2, 4) or total % 8 == 0) and (total < per_node or total % per_node == 0)
    )


# Processing-resource limits for `replicas` sizing: (value, whole units, 0 when fractional).
REPLICA_LIMITS = {
    GPU_RESOURCE: (("1", 1), (2, 2), ("4", 4), ("8", 8), ("0", 0)),
    CPU_RESOURCE: (
        ("1", 1),
        (2, 2),
        ("4", 4),
        ("500m", 0),
        ("1500m", 0),
        ("2000m", 2),
        ("0.5", 0),
        ("1e1", 10),
    ),
}


def _with_limit(resources: Obj, resource: str, value: Any) -> Obj:
    return {**resources, "limits": {**resources.get("limits", {}), resource: value}}


SIZINGS = ("gpus", "processingUnits", "replicas")


@st.composite
def _v1alpha1_sizing(draw: Draw, effective: Effective, style: str) -> tuple[Obj, Obj, int, int]:
    """(spec sizing fields, containers[0] resources, workers, units per worker) for one sizing style."""
    spec: Obj = {}
    if draw(st.booleans()):
        spec["processingResourceType"] = draw(st.sampled_from(PROCESSING_RESOURCE_TYPES))
    resource = spec.get("processingResourceType", effective.processing_resource_type)
    resources = draw(plain_resources)
    if style == "replicas":
        workers = spec["replicas"] = draw(st.integers(1, MAX_WORKERS))
        limit = draw(st.one_of(st.none(), st.sampled_from(REPLICA_LIMITS[resource])))
        if limit is None:
            return spec, resources, workers, 0
        return spec, _with_limit(resources, resource, limit[0]), workers, limit[1]
    per_node_field = "gpusPerNode" if style == "gpus" else "processingUnitsPerNode"
    default = effective.gpus_per_node if style == "gpus" else effective.processing_units_per_node
    if draw(st.booleans()):
        spec[per_node_field] = draw(st.integers(1, MAX_PER_NODE))
    per_node = spec.get(per_node_field, default)
    total = spec[style] = draw(st.sampled_from(valid_totals(per_node)))
    if draw(st.booleans()):  # a limit already written is replaced (with a warning)
        resources = _with_limit(resources, resource, draw(st.sampled_from(["1", 2, "8"])))
    return spec, resources, (1 if total < per_node else total // per_node), min(total, per_node)


v1alpha1_fields = st.fixed_dictionaries(
    {},
    optional={
        "slotsPerWorker": st.integers(1, INT32_MAX),
        "backoffLimit": st.integers(0, INT32_MAX),
        "activeDeadlineSeconds": st.integers(1, INT64_MAX),
        "launcherOnMaster": st.booleans(),
    },
)


@st.composite
def v1alpha1_cases(draw: Draw, sizing: str | None = None) -> Case:
    """A kubeflow.org/v1alpha1 job sized by `sizing` (gpus, processingUnits or replicas; None: any)."""
    base = draw(options())
    meta, effective, namespace = draw(job_metadata(base))
    style = sizing or draw(st.sampled_from(SIZINGS))
    spec, resources, workers, units = draw(_v1alpha1_sizing(effective, style))
    spec.update(draw(v1alpha1_fields))
    spec["template"] = draw(pod_templates(first_resources=resources))
    slots = spec.get("slotsPerWorker") or (units if units > 0 else 1)
    job = {"apiVersion": "kubeflow.org/v1alpha1", "kind": "MPIJob", "metadata": meta, "spec": spec}
    return Case(job, base, workers, slots, namespace, effective.gang_scheduler, cleanup=True)


# ---- kubeflow.org/v1alpha2 -------------------------------------------------------------------------

RESTART_POLICIES = ("Always", "OnFailure", "Never", "ExitCode")

launcher_specs = st.fixed_dictionaries(
    {"template": pod_templates()},
    optional={"replicas": st.just(1), "restartPolicy": st.sampled_from(RESTART_POLICIES)},
)
worker_specs = st.fixed_dictionaries(
    {"replicas": st.integers(1, MAX_WORKERS), "template": pod_templates()},
    optional={"restartPolicy": st.sampled_from(RESTART_POLICIES)},
)
v1alpha2_fields = st.fixed_dictionaries(
    {},
    optional={
        "slotsPerWorker": st.integers(1, INT32_MAX),
        "backoffLimit": st.integers(0, INT32_MAX),
        "activeDeadlineSeconds": st.integers(1, INT64_MAX),
        "cleanPodPolicy": st.sampled_from(["None", "Running", "All"]),
    },
)


@st.composite
def v1alpha2_cases(draw: Draw) -> Case:
    base = draw(options())
    meta, effective, namespace = draw(job_metadata(base))
    worker = draw(worker_specs)
    spec: Obj = {
        **draw(v1alpha2_fields),
        "mpiReplicaSpecs": {"Launcher": draw(launcher_specs), "Worker": worker},
    }
    job = {"apiVersion": "kubeflow.org/v1alpha2", "kind": "MPIJob", "metadata": meta, "spec": spec}
    cleanup = spec.get("cleanPodPolicy") in ("Running", "All")
    slots = spec.get("slotsPerWorker", 1)
    return Case(job, base, worker["replicas"], slots, namespace, effective.gang_scheduler, cleanup)


v1_launcher_specs = st.fixed_dictionaries(
    {"template": pod_templates()},
    # A launcher that always restarts is refused (mpigen.inputs.v1).
    optional={"replicas": st.just(1), "restartPolicy": st.sampled_from(("OnFailure", "Never", "ExitCode"))},
)
v1_run_policies = st.fixed_dictionaries(
    {},
    optional={
        "cleanPodPolicy": st.sampled_from(["None", "Running", "All"]),
        "ttlSecondsAfterFinished": st.integers(0, INT32_MAX),
        "activeDeadlineSeconds": st.integers(1, INT64_MAX),
        "backoffLimit": st.integers(0, INT32_MAX),
        # suspend (no running workers) is golden/v1-suspend: the properties count running workers.
        "suspend": st.just(False),
    },
)


@st.composite
def v1_cases(draw: Draw) -> Case:
    """kubeflow.org/v1: as v1alpha2, with a runPolicy (and the deprecated spec.cleanPodPolicy). The
    launcher keeps mpigen's ServiceAccount (a template's own is golden/v1-launcher-service-account)."""
    base = draw(options())
    meta, effective, namespace = draw(job_metadata(base))
    launcher, worker = draw(v1_launcher_specs), draw(worker_specs)
    launcher["template"]["spec"].pop("serviceAccountName", None)
    spec: Obj = {"mpiReplicaSpecs": {"Launcher": launcher, "Worker": worker}}
    if draw(st.booleans()):
        spec["slotsPerWorker"] = draw(st.integers(1, INT32_MAX))
    if draw(st.booleans()):
        spec["runPolicy"] = draw(v1_run_policies)
    if draw(st.booleans()):
        spec["cleanPodPolicy"] = draw(st.sampled_from(["None", "Running", "All"]))
    job = {"apiVersion": "kubeflow.org/v1", "kind": "MPIJob", "metadata": meta, "spec": spec}
    policy = spec.get("runPolicy", {}).get("cleanPodPolicy") or spec.get("cleanPodPolicy")
    slots = spec.get("slotsPerWorker", 1)
    return Case(
        job,
        base,
        worker["replicas"],
        slots,
        namespace,
        effective.gang_scheduler,
        policy in ("Running", "All"),
    )


# Each kind of job the properties are checked on: every v1alpha1 sizing style, v1alpha2 and v1.
VARIANTS = tuple(f"v1alpha1-{sizing}" for sizing in SIZINGS) + ("v1alpha2", "v1")


def cases(variant: str | None = None) -> st.SearchStrategy[Case]:
    """A valid MPIJob of one of VARIANTS (None: any), with its options and expected output facts."""
    if variant is None:
        return st.one_of(v1alpha1_cases(), v1alpha2_cases(), v1_cases())
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; known: {', '.join(VARIANTS)}")
    if variant == "v1alpha2":
        return v1alpha2_cases()
    if variant == "v1":
        return v1_cases()
    return v1alpha1_cases(variant.removeprefix("v1alpha1-"))
