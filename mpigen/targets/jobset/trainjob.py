"""A TrainJob (Kubeflow Trainer v2.0.0, MPI runtime) on the jobset target: the objects Trainer's controller
would create, minus what a static compile cannot hold, plus what runs it without the controller.

Trainer's `NewObjects` (pkg/runtime/core/trainingruntime.go and the plugins, in their order): one pod set
per runtime replicated job, counted by its `parallelism` (the `trainer` ancestor job: the runtime's
`mlPolicy.numNodes`); the MPI plugin (`EnforceMLPolicy`) sets the `node` job's count from the TrainJob's
`numNodes` (minus the launcher when it runs as a node), adds the SSH key volume to `launcher` and `node`
and the hostfile volume to `launcher`, the mounts to their containers named `node` and the MPI variables
to the launcher's; the pod sets' counts become each job's `parallelism` and `completions`; the JobSet
plugin's builder gives the trainer job one replica, the TrainJob's image, command, args, resourcesPerNode
and env (upserted after the MPI ones) in its `node` container, the coscheduling pod label to every pod
template and the TrainJob's `suspend`; the coscheduling plugin builds the PodGroup (every pod of every
job, the runtime's requests before resourcesPerNode) and the MPI plugin the hostfile ConfigMap.

Departures (docs/departures.md, "TrainJob"): no ownerReferences (there is no TrainJob object); the SSH
Secret is made in the cluster by the v2beta1 key Job (shared/ssh.py), so it is rendered empty, `Opaque`
and mutable; the JobSet webhook's defaults are written out (as the jobset target does for MPIJobs);
mpigen's `app.kubernetes.io/*` labels on the objects it makes; Intel MPI and MPICH.
"""

from __future__ import annotations

from typing import Any

from mpigen import names, tree
from mpigen.errors import Issue
from mpigen.inputs import trainer_names
from mpigen.options import Options
from mpigen.plan import JobPlan, JobService, Labels, Ssh, TrainPlan
from mpigen.quantity import QuantitySum
from mpigen.targets.canonical import canonical
from mpigen.targets.jobset import names as jobset_names
from mpigen.targets.shared import mpi_env
from mpigen.targets.shared.ssh import build_keygen_job, build_keygen_rbac, render_keygen

# Trainer v2.0.0 pkg/constants: the Open MPI variables, in the order the MPI plugin upserts them.
OPENMPI_ENV = (
    ("OMPI_MCA_orte_default_hostfile", f"{trainer_names.MPI_HOSTFILE_DIR}/{names.HOSTFILE}"),
    ("OMPI_MCA_orte_keep_fqdn_hostnames", "true"),
    ("OMPI_MCA_orte_set_default_slots", "{slots}"),
    ("OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10"),
)
SLOT_SEPARATOR = {"OpenMPI": " slots=", "Intel": ":", "MPICH": ":"}
DNS1035_MAX = 63


def _upsert(items: list[dict[str, Any]], new: dict[str, Any], key: str) -> None:
    """Trainer's apply.Upsert*: replace the entry with the same key in place, else append."""
    for index, item in enumerate(items):
        if item.get(key) == new[key]:
            items[index] = new
            return
    items.append(new)


def _pod(job: dict[str, Any]) -> dict[str, Any]:
    template = job["template"]["spec"].setdefault("template", {})
    spec: dict[str, Any] = template.setdefault("spec", {})
    return spec


def _ancestor(job: dict[str, Any]) -> str | None:
    labels = (job["template"].get("metadata") or {}).get("labels") or {}
    found = labels.get(trainer_names.ANCESTOR_LABEL)
    return found if isinstance(found, str) else None


def pod_counts(plan: TrainPlan) -> list[int]:
    """Each replicated job's pod count, in template order (newRuntimeInfo, then the MPI plugin)."""
    counts = []
    for job in plan.jobset_spec.get("replicatedJobs") or []:
        count = job["template"]["spec"].get("parallelism", 1)
        if _ancestor(job) == trainer_names.ANCESTOR_TRAINER:
            count = plan.runtime_num_nodes
        if job["name"] == trainer_names.NODE_RJOB and plan.num_nodes is not None:
            count = max(plan.num_nodes - 1, 1) if plan.run_launcher_as_node else plan.num_nodes
        counts.append(max(count, 1))
    return counts


def launcher_env(plan: TrainPlan) -> list[dict[str, str]]:
    if plan.implementation == "OpenMPI":
        return [{"name": n, "value": v.format(slots=plan.slots)} for n, v in OPENMPI_ENV]
    # Beyond Trainer: mpigen's Intel MPI and MPICH variables (the SSH transport's, mpi_env.py).
    return mpi_env.launcher_env(False, plan.implementation, plan.slots)


def _ssh_volume(plan: TrainPlan) -> dict[str, Any]:
    items = [{"key": key, "path": path} for key, path in trainer_names.MPI_SSH_ITEMS]
    return {
        "name": trainer_names.MPI_SSH_VOLUME,
        "secret": {"secretName": trainer_names.trainjob_ssh_secret(plan.name), "items": items},
    }


def _hostfile_volume(plan: TrainPlan) -> dict[str, Any]:
    item = {"key": names.HOSTFILE, "path": names.HOSTFILE, "mode": names.HOSTFILE_MODE}
    return {
        "name": trainer_names.MPI_HOSTFILE_VOLUME,
        "configMap": {"name": trainer_names.trainjob_hostfile(plan.name), "items": [item]},
    }


def _enforce_mpi(plan: TrainPlan, job: dict[str, Any]) -> None:
    """The MPI plugin's EnforceMLPolicy on one replicated job."""
    if job["name"] not in (trainer_names.LAUNCHER_RJOB, trainer_names.NODE_RJOB):
        return
    launcher, pod = job["name"] == trainer_names.LAUNCHER_RJOB, _pod(job)
    volumes = pod.setdefault("volumes", [])
    _upsert(volumes, _ssh_volume(plan), "name")
    if launcher:
        _upsert(volumes, _hostfile_volume(plan), "name")
    for container in pod.get("containers") or []:
        if container.get("name") != trainer_names.TRAINER_CONTAINER:
            continue
        mounts = container.setdefault("volumeMounts", [])
        _upsert(mounts, {"name": trainer_names.MPI_SSH_VOLUME, "mountPath": plan.ssh_mount_path}, "mountPath")
        if launcher:
            _upsert(
                mounts,
                {"name": trainer_names.MPI_HOSTFILE_VOLUME, "mountPath": trainer_names.MPI_HOSTFILE_DIR},
                "mountPath",
            )
            env = container.setdefault("env", [])
            for var in launcher_env(plan):
                _upsert(env, var, "name")


def _enforce_trainer(plan: TrainPlan, job: dict[str, Any]) -> None:
    """The JobSet builder's Trainer(): the TrainJob's trainer fields in the trainer job's `node` container."""
    job["replicas"] = 1
    trainer = plan.trainer
    for container in _pod(job).get("containers") or []:
        if container.get("name") != trainer_names.TRAINER_CONTAINER:
            continue
        for key in ("image", "command", "args"):
            if key in trainer:
                container[key] = tree.copy(trainer[key])
        wanted = trainer.get("resourcesPerNode") or {}
        if "limits" in wanted or "requests" in wanted:
            container["resources"] = {
                k: _quantities(wanted[k]) for k in ("limits", "requests") if k in wanted
            }
        env = container.setdefault("env", [])
        for var in trainer.get("env") or []:
            _upsert(env, trainer_env_var(var), "name")
        if not env:
            del container["env"]


def trainer_env_var(var: dict[str, Any]) -> dict[str, Any]:
    """Trainer's apply.EnvVar: a TrainJob env entry as the controller copies it: `value` always written
    (empty when unset) unless `valueFrom` is given, of which it copies only fieldRef's fieldPath,
    resourceFieldRef (containerName, resource, divisor), configMapKeyRef and secretKeyRef (key, name,
    optional)."""
    source = var.get("valueFrom")
    if source is None:
        return {"name": var["name"], "value": var.get("value", "")}
    copied: dict[str, Any] = {}
    if "fieldRef" in source:
        copied["fieldRef"] = {"fieldPath": source["fieldRef"]["fieldPath"]}
    if "resourceFieldRef" in source:
        ref = source["resourceFieldRef"]
        copied["resourceFieldRef"] = {
            "containerName": ref.get("containerName", ""),
            "resource": ref["resource"],
            "divisor": _quantity(ref.get("divisor", 0)),
        }
    for kind in ("configMapKeyRef", "secretKeyRef"):
        if kind in source:
            ref = source[kind]
            copied[kind] = {key: ref[key] for key in ("key", "name", "optional") if key in ref}
    return {"name": var["name"], "valueFrom": copied}


def _quantity(value: Any) -> Any:
    """A quantity as Go's resource.Quantity writes it back (Trainer's objects are typed: `1` is `"1"`)."""
    # deferred: spares importing mpigen.quantity until this runs
    from mpigen.quantity import canonical_quantity

    try:
        return canonical_quantity(value)
    except ValueError:
        return value  # not a quantity: the output check names it


def _quantities(mapping: dict[str, Any]) -> dict[str, Any]:
    return {name: _quantity(value) for name, value in mapping.items()}


def _typed_pod(pod: dict[str, Any]) -> None:
    """The quantities of a runtime pod spec as Trainer's typed copy writes them: containers' resources,
    emptyDir size limits and the pod overhead."""
    for container in (pod.get("initContainers") or []) + (pod.get("containers") or []):
        resources = container.get("resources") or {}
        for key in ("limits", "requests"):
            if isinstance(resources.get(key), dict):
                resources[key] = _quantities(resources[key])
    for volume in pod.get("volumes") or []:
        empty = volume.get("emptyDir")
        if isinstance(empty, dict) and "sizeLimit" in empty:
            empty["sizeLimit"] = _quantity(empty["sizeLimit"])
    if isinstance(pod.get("overhead"), dict):
        pod["overhead"] = _quantities(pod["overhead"])


def _jobset_webhook_defaults(spec: dict[str, Any]) -> None:
    """What JobSet v0.12's defaulting webhook fills (pkg/webhooks/jobset_webhook.go Default), written out
    as the jobset target writes it for MPIJobs: the output does not depend on the webhook."""
    spec.setdefault("successPolicy", {"operator": "All"})
    spec.setdefault("startupPolicy", {"startupPolicyOrder": "AnyOrder"})
    network = spec.setdefault("network", {})
    network.setdefault("enableDNSHostnames", True)
    network.setdefault("publishNotReadyAddresses", True)
    for job in spec.get("replicatedJobs") or []:
        job["template"]["spec"].setdefault("completionMode", "Indexed")
        _pod(job).setdefault("restartPolicy", "OnFailure")


def build_jobset_spec(plan: TrainPlan) -> dict[str, Any]:
    spec = tree.copy(plan.jobset_spec)
    for job, count in zip(spec.get("replicatedJobs") or [], pod_counts(plan), strict=True):
        _typed_pod(_pod(job))
        _enforce_mpi(plan, job)
        job["template"]["spec"]["parallelism"] = count
        job["template"]["spec"]["completions"] = count
        if _ancestor(job) == trainer_names.ANCESTOR_TRAINER:
            _enforce_trainer(plan, job)
        if plan.schedule_timeout_seconds is not None:
            meta = job["template"]["spec"]["template"].setdefault("metadata", {})
            meta["labels"] = {**(meta.get("labels") or {}), names.SCHEDULER_PLUGINS_GROUP_LABEL: plan.name}
    spec["suspend"] = plan.suspend
    _jobset_webhook_defaults(spec)
    return spec


def _meta(plan: TrainPlan, name: str, component: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if plan.namespace is not None:
        meta["namespace"] = plan.namespace
    own = {
        **names.standard_labels(plan.name, component),
        "app.kubernetes.io/name": trainer_names.TRAINJOB_APP_NAME,
    }
    meta["labels"] = {**(labels or {}), **own}
    return meta


def build_jobset(plan: TrainPlan, options: Options) -> dict[str, Any]:
    """The JobSet; with `--queue` Kueue's labels and `suspend: true` (Kueue starts it on admission), as
    for an MPIJob on this target."""
    labels = dict(plan.labels)
    if options.queue is not None:
        labels[names.QUEUE_LABEL] = options.queue
    if options.priority_class is not None:
        labels[names.PRIORITY_CLASS_LABEL] = options.priority_class
    meta = _meta(plan, plan.name, names.COMPONENT_JOB, labels)
    if plan.annotations:
        meta["annotations"] = dict(plan.annotations)
    spec = build_jobset_spec(plan)
    if options.queue is not None:
        spec["suspend"] = True
    return {"apiVersion": jobset_names.JOBSET_API, "kind": "JobSet", "metadata": meta, "spec": spec}


def hosts(plan: TrainPlan) -> list[str]:
    """The MPI plugin's hostfile hosts: every pod of `node`, the launcher first when it runs as a node."""
    subdomain = (plan.jobset_spec.get("network") or {}).get("subdomain") or plan.name
    found = []
    for job, count in zip(plan.jobset_spec.get("replicatedJobs") or [], pod_counts(plan), strict=True):
        if job["name"] == trainer_names.NODE_RJOB or (
            job["name"] == trainer_names.LAUNCHER_RJOB and plan.run_launcher_as_node
        ):
            found += [
                f"{jobset_names.jobset_pod_host(plan.name, job['name'], i)}.{subdomain}" for i in range(count)
            ]
    return found


def build_hostfile(plan: TrainPlan) -> dict[str, Any]:
    separator = SLOT_SEPARATOR[plan.implementation]
    text = "".join(f"{host}{separator}{plan.slots}\n" for host in hosts(plan))
    meta = _meta(plan, trainer_names.trainjob_hostfile(plan.name), names.COMPONENT_CONFIG)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {names.HOSTFILE: text}}


def _pod_requests(pod: dict[str, Any]) -> QuantitySum:
    """Kubernetes resourcehelpers.PodRequests: the containers' requests summed, each init container's
    (a restartable one, a sidecar, is added) at least."""
    total = QuantitySum()
    for container in pod.get("containers") or []:
        for name, value in ((container.get("resources") or {}).get("requests") or {}).items():
            total.add(name, value, 1)
    for container in pod.get("initContainers") or []:
        requests = (container.get("resources") or {}).get("requests") or {}
        for name, value in requests.items():
            if container.get("restartPolicy") == "Always":
                total.add(name, value, 1)
                continue
            single = QuantitySum()
            single.add(name, value, 1)
            if name not in total.totals or single.totals[name][0] > total.totals[name][0]:
                total.totals[name] = single.totals[name]
    return total


def build_pod_group(plan: TrainPlan) -> list[dict[str, Any]]:
    if plan.schedule_timeout_seconds is None:
        return []
    counts, total = pod_counts(plan), QuantitySum()
    for job, count in zip(plan.jobset_spec.get("replicatedJobs") or [], counts, strict=True):
        pod = job["template"]["spec"].get("template", {}).get("spec") or {}
        for name, (value, fmt) in _pod_requests(pod).totals.items():
            total.add(name, _as_quantity(value, fmt), count)
    spec: dict[str, Any] = {"minMember": sum(counts), "scheduleTimeoutSeconds": plan.schedule_timeout_seconds}
    if total.totals:
        spec["minResources"] = total.result()
    meta = _meta(plan, plan.name, names.COMPONENT_SCHEDULING)
    return [
        {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": meta, "spec": spec}
    ]


def _as_quantity(value: Any, fmt: str) -> str:
    from mpigen.quantity import format_quantity  # deferred: spares importing mpigen.quantity until this runs

    return format_quantity(value, fmt)


def key_plan(plan: TrainPlan) -> JobPlan:
    """The TrainJob as the SSH key builders (shared/ssh.py) read a job: its name and namespace, the Secret,
    and the pod templates whose image has ssh-keygen (the `node` job's, else the launcher's)."""
    jobs = {job["name"]: job for job in plan.jobset_spec.get("replicatedJobs") or []}
    source = (
        jobs.get(trainer_names.NODE_RJOB)
        or jobs.get(trainer_names.LAUNCHER_RJOB)
        or next(iter(jobs.values()))
    )
    template = source["template"]["spec"].get("template") or {}
    return JobPlan(
        api_version=trainer_names.TRAINER_API,
        name=plan.name,
        namespace=plan.namespace,
        workers=1,
        slots_per_worker=plan.slots,
        launcher_template=template,
        worker_template=template,
        backoff_limit=None,
        active_deadline_seconds=None,
        clean_pod_policy="None",
        labels=Labels({}, {}, {}, {}, {}),
        service=JobService(plan.name, {}, {}, True),
        ssh=Ssh(plan.ssh_mount_path, trainer_names.trainjob_ssh_secret(plan.name), True),
    )


def _relabel(obj: dict[str, Any]) -> dict[str, Any]:
    """The key Job's objects carry `app.kubernetes.io/name: trainjob`, as the TrainJob's others."""
    for meta in (obj["metadata"], ((obj.get("spec") or {}).get("template") or {}).get("metadata") or {}):
        if "app.kubernetes.io/name" in (meta.get("labels") or {}):
            meta["labels"]["app.kubernetes.io/name"] = trainer_names.TRAINJOB_APP_NAME
    return obj


def build_key_config(plan: TrainPlan) -> dict[str, Any]:
    meta = _meta(plan, names.config_map(plan.name), names.COMPONENT_CONFIG)
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta,
        "data": {names.KEYGEN_SCRIPT: render_keygen(key_plan(plan))},
    }


def build_ssh_secret(plan: TrainPlan) -> dict[str, Any]:
    meta = _meta(plan, trainer_names.trainjob_ssh_secret(plan.name), "ssh")
    return {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": "Opaque"}


def build(plan: TrainPlan, options: Options) -> list[dict[str, Any]]:
    """Every object, in order: the key Job's RBAC, its script, the hostfile, the empty SSH Secret, the
    PodGroup, the key Job, the JobSet."""
    keys = key_plan(plan)
    objects = [
        *[_relabel(obj) for obj in build_keygen_rbac(keys)],
        build_key_config(plan),
        build_hostfile(plan),
        build_ssh_secret(plan),
        *build_pod_group(plan),
        *[_relabel(obj) for obj in build_keygen_job(keys, options)],
        build_jobset(plan, options),
    ]
    return [canonical(obj) for obj in objects]


CONFIG_MAP_MAX_BYTES = 1024 * 1024


def hostfile_size(plan: TrainPlan) -> int:
    """The hostfile's length in bytes, computed without writing it (an absurd numNodes is refused at once)."""
    subdomain = (plan.jobset_spec.get("network") or {}).get("subdomain") or plan.name
    tail = len(f".{subdomain}{SLOT_SEPARATOR[plan.implementation]}{plan.slots}\n")
    size = 0
    for job, count in zip(plan.jobset_spec.get("replicatedJobs") or [], pod_counts(plan), strict=True):
        if job["name"] == trainer_names.NODE_RJOB or (
            job["name"] == trainer_names.LAUNCHER_RJOB and plan.run_launcher_as_node
        ):
            size += count * (len(f"{plan.name}-{job['name']}-0-") + tail) + _index_digits(count)
    return size


def _index_digits(count: int) -> int:
    """The digits of the indices 0 .. count - 1 written out."""
    found = min(count, 10)
    for digits in range(2, len(str(count)) + 1):
        found += digits * max(0, min(count, 10**digits) - 10 ** (digits - 1))
    return found


def check(plan: TrainPlan) -> list[Issue]:
    """JobSet's ValidateCreate on the names it derives: every child Job `<jobset>-<rjob>-<index>` and pod
    `<jobset>-<rjob>-<index>-<pod index>-<5 random>` a DNS-1035 label; the hostfile fits a ConfigMap."""
    size = hostfile_size(plan)
    if size > CONFIG_MAP_MAX_BYTES:
        message = f"{sum(pod_counts(plan)):,} pods make a hostfile of {size:,} bytes, more than the 1 MiB a ConfigMap holds"
        return [Issue(("spec", "trainer", "numNodes"), message)]
    issues = []
    for index, (job, count) in enumerate(
        zip(plan.jobset_spec.get("replicatedJobs") or [], pod_counts(plan), strict=True)
    ):
        pod = f"{plan.name}-{job['name']}-{job.get('replicas', 1) - 1}-{count - 1}"
        if len(pod) + jobset_names.POD_NAME_RANDOM_SUFFIX > DNS1035_MAX:
            message = f'pod names such as "{pod}-abcde" would be longer than {DNS1035_MAX} characters (JobSet refuses the JobSet); shorten the TrainJob\'s name'
            issues.append(Issue(("metadata", "name"), message + f" (replicated job {index}: {job['name']})"))
    return issues
