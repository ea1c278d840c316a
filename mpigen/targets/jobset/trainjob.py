"""A TrainJob (Kubeflow Trainer v2.3.0, MPI runtime) on the jobset target: the objects Trainer's controller
would create, minus what a static compile cannot hold, plus what runs it without the controller.

Trainer's `NewObjects` (pkg/runtime/core/trainingruntime.go and the plugins, in their order): one pod set
per runtime replicated job, counted by its `parallelism` (the `trainer` ancestor job: the runtime's
`mlPolicy.numNodes`); the MPI plugin (`EnforceMLPolicy`) sets the `node` job's count from the TrainJob's
`numNodes` (minus the launcher when it runs as a node), adds the SSH key volume to `launcher` and `node`
(its file modes: 0400 by default, the private key 0640, the public key and authorized_keys 0644) and the
hostfile volume to `launcher`, the mounts to their containers named `node` and the MPI variables to the
launcher's `node` container; the pod sets' counts become each job's `parallelism` and `completions`; the
JobSet plugin's builder gives the trainer job one replica, the TrainJob's image, command and args in its
`node` container and its env (upserted after the MPI ones) there and, when the launcher runs as a node,
in the `node` job's `node` container too, the coscheduling pod label to every pod template and the
TrainJob's `suspend`; the coscheduling or volcano plugin builds the PodGroup (trainjob_podgroup.py) and the
MPI plugin the hostfile ConfigMap. (runtimePatches and resourcesPerNode
are merged into the template before: mpigen.inputs.trainjob.)

Departures (docs/departures.md, "TrainJob"): no ownerReferences (there is no TrainJob object); the SSH
Secret is made in the cluster by the v2beta1 key Job (shared/ssh.py), so it is rendered empty, `Opaque`
and mutable (or not at all with `--ssh-secret`); the JobSet webhook's defaults are written out (as the
jobset target does for MPIJobs); no `<job>-runtime-snapshot` ConfigMap (only Trainer's controller reads
it); `activeDeadlineSeconds` (enforced by Trainer's controller) on every child Job; mpigen's
`app.kubernetes.io/*` labels on the objects it makes; Intel MPI and MPICH; free disruptions
(trainjob_disruption.py).
"""

from __future__ import annotations

from typing import Any

from mpigen import names, tree
from mpigen.errors import Issue
from mpigen.inputs import trainer_names
from mpigen.inputs.runpolicy import MULTIKUEUE
from mpigen.options import Options
from mpigen.plan import TrainPlan
from mpigen.quantity import canonical_quantity
from mpigen.targets.canonical import canonical
from mpigen.targets.jobset import names as jobset_names
from mpigen.targets.jobset import trainjob_disruption, trainjob_gang
from mpigen.targets.jobset.placement import check_trainjob, place_trainjob
from mpigen.targets.jobset.trainjob_podgroup import build_pod_group
from mpigen.targets.shared import mpi_env
from mpigen.targets.shared.network import COMPONENT as NETWORK_COMPONENT
from mpigen.targets.shared.network import SAME_JOB
from mpigen.targets.shared.ssh import KeyJob, keygen_job, keygen_rbac, keygen_script

# Trainer v2.3.0 pkg/constants: the Open MPI variables, in the order the MPI plugin upserts them.
OPENMPI_ENV = (
    ("OMPI_MCA_orte_default_hostfile", f"{trainer_names.MPI_HOSTFILE_DIR}/{names.HOSTFILE}"),
    ("OMPI_MCA_orte_keep_fqdn_hostnames", "true"),
    ("OMPI_MCA_orte_set_default_slots", "{slots}"),
    ("OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10"),
)
SLOT_SEPARATOR = {"OpenMPI": " slots=", "Intel": ":", "MPICH": ":"}
# Trainer v2.3.0 pkg/constants: MPISSHAuthDefaultMode, MPISSHPrivateKeyFileMode, MPISSHPublicKeyFileMode.
SSH_DEFAULT_MODE, SSH_PRIVATE_MODE, SSH_PUBLIC_MODE = 0o400, 0o640, 0o644
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


def ssh_secret_name(plan: TrainPlan, options: Options) -> str:
    """The SSH Secret the pods mount: `--ssh-secret`'s, else `<job>-mpi-ssh-auth` (the key Job fills it)."""
    return options.ssh_secret or trainer_names.trainjob_ssh_secret(plan.name)


def _ssh_volume(plan: TrainPlan, options: Options) -> dict[str, Any]:
    items = [
        {
            "key": key,
            "path": path,
            "mode": SSH_PRIVATE_MODE if key == names.SSH_PRIVATE_KEY else SSH_PUBLIC_MODE,
        }
        for key, path in trainer_names.MPI_SSH_ITEMS
    ]
    secret = {"secretName": ssh_secret_name(plan, options), "items": items, "defaultMode": SSH_DEFAULT_MODE}
    return {"name": trainer_names.MPI_SSH_VOLUME, "secret": secret}


def _hostfile_volume(plan: TrainPlan) -> dict[str, Any]:
    item = {"key": names.HOSTFILE, "path": names.HOSTFILE, "mode": names.HOSTFILE_MODE}
    return {
        "name": trainer_names.MPI_HOSTFILE_VOLUME,
        "configMap": {"name": trainer_names.trainjob_hostfile(plan.name), "items": [item]},
    }


def _enforce_mpi(plan: TrainPlan, job: dict[str, Any], options: Options) -> None:
    """The MPI plugin's EnforceMLPolicy on one replicated job."""
    if job["name"] not in (trainer_names.LAUNCHER_RJOB, trainer_names.NODE_RJOB):
        return
    launcher, pod = job["name"] == trainer_names.LAUNCHER_RJOB, _pod(job)
    volumes = pod.setdefault("volumes", [])
    _upsert(volumes, _ssh_volume(plan, options), "name")
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
    """The JobSet builder's Trainer(): the TrainJob's image, command and args in the trainer job's `node`
    container, its env there and (launcher as a node) in the `node` job's `node` container."""
    trainer, is_trainer = plan.trainer, _ancestor(job) == trainer_names.ANCESTOR_TRAINER
    if is_trainer:
        job["replicas"] = 1
    elif not (plan.run_launcher_as_node and job["name"] == trainer_names.NODE_RJOB):
        return
    for container in _pod(job).get("containers") or []:
        if container.get("name") != trainer_names.TRAINER_CONTAINER:
            continue
        for key in ("image", "command", "args") if is_trainer else ():
            if key in trainer:
                container[key] = tree.copy(trainer[key])
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


def build_jobset_spec(plan: TrainPlan, options: Options) -> dict[str, Any]:
    spec = tree.copy(plan.jobset_spec)
    for job, count in zip(spec.get("replicatedJobs") or [], pod_counts(plan), strict=True):
        _typed_pod(_pod(job))
        _enforce_mpi(plan, job, options)
        job["template"]["spec"]["parallelism"] = count
        job["template"]["spec"]["completions"] = count
        _enforce_trainer(plan, job)
        _deadline(plan, job["template"]["spec"])
        if plan.schedule_timeout_seconds is not None:
            meta = job["template"]["spec"]["template"].setdefault("metadata", {})
            meta["labels"] = {**(meta.get("labels") or {}), names.SCHEDULER_PLUGINS_GROUP_LABEL: plan.name}
        if plan.volcano is not None:  # the Volcano plugin's EnforcePodGroupPolicy
            meta = job["template"]["spec"]["template"].setdefault("metadata", {})
            meta["annotations"] = {
                **(meta.get("annotations") or {}),
                names.VOLCANO_GROUP_ANNOTATION: plan.name,
            }
    spec["suspend"] = plan.suspend
    trainjob_disruption.make_free(spec, options)
    _jobset_webhook_defaults(spec)
    return spec


def _deadline(plan: TrainPlan, job_spec: dict[str, Any]) -> None:
    """activeDeadlineSeconds: Trainer's controller fails the TrainJob and deletes its JobSet that long after
    it starts; mpigen gives every child Job the deadline (a Job past it fails, and so the JobSet), keeping
    a shorter one of the runtime's."""
    wanted = plan.active_deadline_seconds
    if wanted is not None:
        job_spec["activeDeadlineSeconds"] = min(wanted, job_spec.get("activeDeadlineSeconds", wanted))


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
    spec = build_jobset_spec(plan, options)
    place_trainjob(spec, options)
    if options.queue is not None:
        spec["suspend"] = True
    if plan.managed_by == MULTIKUEUE:  # as for an MPIJob: MultiKueue runs the JobSet on a worker cluster
        spec["managedBy"] = MULTIKUEUE
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
    return hostfile_config_map(plan, "".join(f"{host}{separator}{plan.slots}\n" for host in hosts(plan)))


def hostfile_config_map(plan: TrainPlan, text: str) -> dict[str, Any]:
    """The MPI plugin's hostfile ConfigMap holding `text` (empty: what its size is measured on)."""
    meta = _meta(plan, trainer_names.trainjob_hostfile(plan.name), names.COMPONENT_CONFIG)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {names.HOSTFILE: text}}


def key_job(plan: TrainPlan) -> KeyJob:
    """The TrainJob's key Job (shared/ssh.py): its Secret, the image of the `node` job's pods (else the
    launcher's) and the TrainJob's `app.kubernetes.io/name`."""
    jobs = {job["name"]: job for job in plan.jobset_spec.get("replicatedJobs") or []}
    source = (
        jobs.get(trainer_names.NODE_RJOB)
        or jobs.get(trainer_names.LAUNCHER_RJOB)
        or next(iter(jobs.values()))
    )
    return KeyJob(
        name=plan.name,
        namespace=plan.namespace,
        secret=trainer_names.trainjob_ssh_secret(plan.name),
        pod=(source["template"]["spec"].get("template") or {})["spec"],
        app_name=trainer_names.TRAINJOB_APP_NAME,
    )


def build_key_config(plan: TrainPlan) -> dict[str, Any]:
    meta = _meta(plan, names.config_map(plan.name), names.COMPONENT_CONFIG)
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta,
        "data": {names.KEYGEN_SCRIPT: keygen_script(key_job(plan))},
    }


def build_ssh_secret(plan: TrainPlan) -> dict[str, Any]:
    meta = _meta(plan, trainer_names.trainjob_ssh_secret(plan.name), "ssh")
    return {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": "Opaque"}


def build_network_policy(plan: TrainPlan, options: Options) -> list[dict[str, Any]]:
    """`--network-policy same-job`: ingress into the JobSet's pods only from the JobSet's pods, selected
    by the label the JobSet controller sets on every pod (jobset v0.12.0 pkg/controllers:
    `labelAndAnnotateObject`, over the template's own); the key Job's pods are not selected."""
    if options.network_policy != SAME_JOB:
        return []
    selector = {"matchLabels": {jobset_names.JOBSET_NAME_LABEL: plan.name}}
    spec = {
        "podSelector": selector,
        "policyTypes": ["Ingress"],
        "ingress": [{"from": [{"podSelector": dict(selector)}]}],
    }
    meta = _meta(plan, plan.name, NETWORK_COMPONENT)
    return [{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": meta, "spec": spec}]


def build(plan: TrainPlan, options: Options) -> list[dict[str, Any]]:
    """Every object, in order: the key Job's RBAC, its script, the hostfile, the empty SSH Secret, the
    NetworkPolicy, the PodGroup (or Kubernetes' own Workload and PodGroup), the key Job, the JobSet. With
    `--ssh-secret` the pods mount that Secret and the key Job, its RBAC, script and Secret are not rendered."""
    keys, generate = key_job(plan), options.ssh_secret is None
    jobset = build_jobset(plan, options)
    objects = [
        *(keygen_rbac(keys) if generate else []),
        *([build_key_config(plan)] if generate else []),
        build_hostfile(plan),
        *([build_ssh_secret(plan)] if generate else []),
        *build_network_policy(plan, options),
        *build_pod_group(plan, pod_counts(plan), _meta(plan, plan.name, names.COMPONENT_SCHEDULING)),
        *trainjob_gang.build(plan, options, pod_counts(plan), jobset),
        *([keygen_job(keys, options)] if generate else []),
        jobset,
    ]
    return [canonical(obj) for obj in objects]


def check(plan: TrainPlan) -> list[Issue]:
    """JobSet's ValidateCreate on the names it derives: every child Job `<jobset>-<rjob>-<index>` and pod
    `<jobset>-<rjob>-<index>-<pod index>-<5 random>` a DNS-1035 label (the hostfile's size:
    mpigen.targets.jobset.trainjob_sizes)."""
    issues = []
    for index, (job, count) in enumerate(
        zip(plan.jobset_spec.get("replicatedJobs") or [], pod_counts(plan), strict=True)
    ):
        pod = f"{plan.name}-{job['name']}-{job.get('replicas', 1) - 1}-{count - 1}"
        if len(pod) + jobset_names.POD_NAME_RANDOM_SUFFIX > DNS1035_MAX:
            message = f'pod names such as "{pod}-abcde" would be longer than {DNS1035_MAX} characters (JobSet refuses the JobSet); shorten the TrainJob\'s name'
            issues.append(Issue(("metadata", "name"), message + f" (replicated job {index}: {job['name']})"))
    return issues


def check_placement(plan: TrainPlan, options: Options) -> list[Issue]:
    """What Kueue would refuse of the JobSet's topology annotations (`--topology`, the templates' own)."""
    spec = build_jobset_spec(plan, options)
    place_trainjob(spec, options)
    return check_trainjob(spec, options)
