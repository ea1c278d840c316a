"""Pod plans: what kubelet would run for a list of rendered Kubernetes objects, as plain data.

`plan_pods(objects)` turns mpigen's output into one `Pod` per pod the cluster would create: one per
StatefulSet replica (`<sts>-<i>`), one per worker Pod object (as mpi-operator v2beta1 creates them), and
one for the launcher Job (`<job>-<suffix>`, a generated name like a Job controller's); for a Volcano
Job, its tasks' pods as Volcano's controller names them (`<job>-<task>-<i>`); for a JobSet, its
replicated jobs' pods as the JobSet and Job controllers name them (`<jobset>-<rjob>-0-<i>-<suffix>`,
hostname `<jobset>-<rjob>-0-<i>`), each with the labels its controller adds. Only what the
harness needs is read: containers (command, args, env, workingDir, volume mounts, runAsUser/runAsGroup),
init containers, volumes (ConfigMap and Secret items with their modes, emptyDirs), hostname and
subdomain. Everything else (RBAC, PodGroups, resources) is ignored here; the tests check those elsewhere.
Pure: no I/O.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Obj = Mapping[str, Any]


class PlanError(Exception):
    """The rendered objects cannot be run as pods by this harness (names the object and the field)."""


@dataclass(frozen=True)
class File:
    """One file inside a volume: its path relative to the volume root, its bytes and its mode."""

    path: str
    content: str
    mode: int


@dataclass(frozen=True)
class Volume:
    """A pod volume: `configMap`/`secret` (files of the object, read-only) or `emptyDir` (empty, writable)."""

    name: str
    kind: Literal["configMap", "secret", "emptyDir"]
    files: tuple[File, ...] = ()


@dataclass(frozen=True)
class Mount:
    """A volume mounted into a container at `path`."""

    volume: str
    path: str
    read_only: bool


@dataclass(frozen=True)
class Container:
    """One container: its argv (command + args as written, `$(VAR)` expanded; published.argv resolves
    a container without a command), env and mounts."""

    name: str
    image: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    mounts: tuple[Mount, ...]
    working_dir: str = "/"
    run_as_user: int | None = None  # securityContext (the container's, else the pod's); None: the image's
    run_as_group: int | None = None
    # The spec gives a `command`; without one the image's ENTRYPOINT runs, with `argv` (the args) or its CMD.
    has_command: bool = True

    def env_dict(self) -> dict[str, str]:
        """The container's own env (later entries win, as in Kubernetes)."""
        return dict(self.env)


@dataclass(frozen=True)
class Pod:
    """One pod: name, hostname (spec.hostname, else the name), which controller made it, containers, volumes."""

    name: str
    role: Literal["launcher", "worker"]
    owner: str
    containers: tuple[Container, ...]
    init_containers: tuple[Container, ...] = ()
    volumes: tuple[Volume, ...] = ()
    subdomain: str = ""
    namespace: str = "default"
    labels: Mapping[str, str] = field(default_factory=dict)
    hostname: str = ""  # empty: the pod's name
    dns_searches: tuple[str, ...] = ()  # spec.dnsConfig.searches, after the cluster's own search list

    @property
    def host(self) -> str:
        """The pod's hostname, as kubelet sets it (spec.hostname, else the pod name)."""
        return self.hostname or self.name

    def dns_names(self, cluster_domain: str = "cluster.local") -> tuple[str, ...]:
        """Names cluster DNS gives the pod through its headless Service (none without a subdomain)."""
        if not self.subdomain:
            return ()
        base = f"{self.host}.{self.subdomain}.{self.namespace}.svc"
        return (f"{base}.{cluster_domain}", base)

    def search_list(self, cluster_domain: str = "cluster.local") -> tuple[str, ...]:
        """resolv.conf's search list as kubelet writes it (ClusterFirst, then dnsConfig.searches)."""
        own = (f"{self.namespace}.svc.{cluster_domain}", f"svc.{cluster_domain}", cluster_domain)
        return own + tuple(s for s in self.dns_searches if s not in own)

    def volume(self, name: str) -> Volume:
        """The volume called `name` (PlanError if the pod has none)."""
        for vol in self.volumes:
            if vol.name == name:
                return vol
        raise PlanError(f"pod {self.name}: no volume named {name!r}")

    def mounts(self) -> dict[str, Mount]:
        """Every mount of every container by path; all containers of a pod share one namespace here."""
        out: dict[str, Mount] = {}
        for container in (*self.init_containers, *self.containers):
            for mount in container.mounts:
                seen = out.setdefault(mount.path, mount)
                if seen.volume != mount.volume:
                    raise PlanError(f"pod {self.name}: {mount.path} holds {seen.volume} and {mount.volume}")
        return out


_VAR_REF = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def expand(text: str, env: Mapping[str, str]) -> str:
    """Expand `$(VAR)` in a command or arg the way kubelet does (`$$` escapes; unknown refs stay)."""

    def one(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        return env.get(match.group(1), match.group(0))

    return _VAR_REF.sub(one, text)


_LABEL_REF = re.compile(r"^metadata\.labels\['([^']+)'\]$")


def _env(
    spec: Obj, pod: str, namespace: str, where: str, labels: Mapping[str, str]
) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    known: dict[str, str] = {}
    for var in spec.get("env") or []:
        name = var["name"]
        if "valueFrom" in var:
            ref = str(var["valueFrom"].get("fieldRef", {}).get("fieldPath"))
            fields = {"metadata.name": pod, "metadata.namespace": namespace}
            label = _LABEL_REF.match(ref)
            if label:  # the downward API gives "" for a label the pod does not have
                fields[ref] = labels.get(label.group(1), "")
            if ref not in fields:
                raise PlanError(
                    f"{where}.env[{name}]: only fieldRef metadata.name/namespace/labels['...'] is supported"
                )
            value = fields[ref]
        else:
            value = expand(str(var.get("value", "")), known)
        known[name] = value
        out.append((name, value))
    return tuple(out)


def _container(
    spec: Obj, pod: str, namespace: str, where: str, pod_security: Obj, labels: Mapping[str, str]
) -> Container:
    env = _env(spec, pod, namespace, where, labels)
    security = {**pod_security, **(spec.get("securityContext") or {})}
    argv = [expand(str(a), dict(env)) for a in (*(spec.get("command") or ()), *(spec.get("args") or ()))]
    mounts = tuple(
        Mount(m["name"], m["mountPath"], bool(m.get("readOnly", False)))
        for m in spec.get("volumeMounts") or []
    )
    return Container(
        name=spec["name"],
        image=str(spec.get("image", "")),
        argv=tuple(argv),
        env=env,
        mounts=mounts,
        working_dir=str(spec.get("workingDir") or "/"),
        run_as_user=security.get("runAsUser"),
        run_as_group=security.get("runAsGroup"),
        has_command=bool(spec.get("command")),
    )


def secret_data(secret: Obj) -> dict[str, str]:
    """A Secret's keys as text: `data` base64-decoded, then `stringData` (which wins, as in the API)."""
    out = {}
    for key, value in (secret.get("data") or {}).items():
        try:
            out[key] = base64.b64decode(str(value), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise PlanError(
                f"Secret/{secret['metadata']['name']}: data.{key}: not base64 text: {exc}"
            ) from exc
    out.update({key: str(value) for key, value in (secret.get("stringData") or {}).items()})
    return out


def _volume(spec: Obj, sources: Mapping[str, Mapping[str, Obj]], where: str) -> Volume:
    if "emptyDir" in spec:
        return Volume(spec["name"], "emptyDir")
    kind: Literal["configMap", "secret"]
    if "configMap" in spec:
        kind = "configMap"
    elif "secret" in spec:
        kind = "secret"
    else:
        raise PlanError(
            f"{where}: volume {spec['name']!r}: only configMap, secret and emptyDir are supported"
        )
    source = spec[kind]
    name = source["name" if kind == "configMap" else "secretName"]
    obj = sources[kind].get(name)
    if obj is None:
        raise PlanError(f"{where}: volume {spec['name']!r} names {kind} {name!r}, not rendered")
    data = dict(obj.get("data") or {}) if kind == "configMap" else secret_data(obj)
    default_mode = int(source.get("defaultMode", 0o644))
    items = source.get("items") or [{"key": key, "path": key} for key in data]
    files = []
    for item in items:
        if item["key"] not in data:
            raise PlanError(f"{where}: {kind} {name!r} has no key {item['key']!r}")
        files.append(File(item["path"], data[item["key"]], int(item.get("mode", default_mode))))
    return Volume(spec["name"], kind, tuple(files))


def _pod(
    name: str,
    role: Literal["launcher", "worker"],
    owner: Obj,
    template: Obj,
    sources: Mapping[str, Mapping[str, Obj]],
    subdomain: str = "",
    controller_labels: Mapping[str, str] | None = None,
    hostname: str = "",
) -> Pod:
    """A pod of `template`; `controller_labels` and `hostname` are what the controller making it adds."""
    meta, spec = template.get("metadata") or {}, template["spec"]
    namespace = owner["metadata"].get("namespace") or "default"
    where = f"{owner['kind']}/{owner['metadata']['name']}"
    security = spec.get("securityContext") or {}
    labels = {**(meta.get("labels") or {}), **(controller_labels or {})}
    return Pod(
        name=name,
        role=role,
        owner=where,
        containers=tuple(_container(c, name, namespace, where, security, labels) for c in spec["containers"]),
        init_containers=tuple(
            _container(c, name, namespace, where, security, labels) for c in spec.get("initContainers") or []
        ),
        volumes=tuple(_volume(v, sources, where) for v in spec.get("volumes") or []),
        subdomain=str(spec.get("subdomain") or subdomain),
        namespace=namespace,
        labels=labels,
        hostname=str(spec.get("hostname") or hostname),
        dns_searches=tuple(str(d) for d in (spec.get("dnsConfig") or {}).get("searches") or ()),
    )


# v0.2.0; kubeflow.org/v1 (whose launcher's job-role is "master"); v2beta1.
ROLE_LABELS = ("mpi_role_type", "training.kubeflow.org/replica-type", "training.kubeflow.org/job-role")


def role_of(obj: Obj) -> str:
    """The MPI role an object's labels give it (`launcher`, `worker`, or "")."""
    labels = obj.get("metadata", {}).get("labels") or {}
    return next((str(labels[key]) for key in ROLE_LABELS if key in labels), "")


def is_launcher_job(obj: Obj) -> bool:
    """The launcher Job (role label `launcher`), not e.g. a clean-up or key-generation Job."""
    return obj.get("kind") == "Job" and role_of(obj) == "launcher"


VOLCANO_JOB = "batch.volcano.sh/v1alpha1"


def _volcano_task_pods(
    obj: Obj, task_name: Literal["launcher", "worker"], sources: Mapping[str, Mapping[str, Obj]]
) -> list[Pod]:
    """A Volcano Job's task as Volcano's controller makes it: pods `<job>-<task>-<index>` whose
    hostname is the pod name and subdomain the job (the svc plugin)."""
    job = obj["metadata"]["name"]
    namespace = obj["metadata"].get("namespace") or "default"
    return [
        _pod(
            f"{job}-{task_name}-{i}",
            task_name,
            obj,
            task["template"],
            sources,
            subdomain=job,
            controller_labels={
                "volcano.sh/job-name": job,
                "volcano.sh/job-namespace": namespace,
                "volcano.sh/task-spec": task_name,
                "volcano.sh/task-index": str(i),
            },
        )
        for task in obj["spec"]["tasks"]
        if task["name"] == task_name
        for i in range(int(task.get("replicas", 1)))
    ]


JOBSET = "jobset.x-k8s.io/v1alpha2"


def _jobset_pods(
    obj: Obj,
    replicated_job: Literal["launcher", "worker"],
    sources: Mapping[str, Mapping[str, Obj]],
    suffix: str,
) -> list[Pod]:
    """A JobSet's replicated job as the JobSet and Job controllers make it: child Job
    `<jobset>-<rjob>-<j>`, its Indexed pods `<job>-<i>-<suffix>` (a random suffix in a cluster) with
    hostname `<job>-<i>`, subdomain the JobSet's (with DNS host names on), the controllers' labels
    (restart attempt 0: the first run)."""
    jobset = obj["metadata"]["name"]
    network = obj["spec"].get("network") or {}
    subdomain = str(network.get("subdomain") or jobset) if network.get("enableDNSHostnames") else ""
    pods = []
    for rjob in obj["spec"]["replicatedJobs"]:
        if rjob["name"] != replicated_job:
            continue
        job_spec = rjob["template"]["spec"]
        if job_spec.get("completionMode") != "Indexed":
            raise PlanError(
                f"JobSet/{jobset}: replicatedJobs[{replicated_job}]: completionMode is not Indexed"
            )
        for j in range(int(rjob.get("replicas", 1))):
            child = f"{jobset}-{replicated_job}-{j}"
            for i in range(int(job_spec.get("parallelism", 1))):
                labels = {
                    "jobset.sigs.k8s.io/jobset-name": jobset,
                    "jobset.sigs.k8s.io/replicatedjob-name": replicated_job,
                    "jobset.sigs.k8s.io/job-index": str(j),
                    "jobset.sigs.k8s.io/restart-attempt": "0",
                    "batch.kubernetes.io/job-completion-index": str(i),
                    "batch.kubernetes.io/job-name": child,
                }
                pods.append(
                    _pod(
                        f"{child}-{i}-{suffix}",
                        replicated_job,
                        obj,
                        job_spec["template"],
                        sources,
                        subdomain=subdomain,
                        controller_labels=labels,
                        hostname=f"{child}-{i}",
                    )
                )
    return pods


def plan_pods(objects: Iterable[Obj], launcher_suffix: str = "e2e00") -> list[Pod]:
    """The job's pods: one per worker StatefulSet replica or worker Pod, then the launcher Job's pod;
    or a Volcano Job's worker task pods, then its launcher task's; or a JobSet's worker replicated
    job's pods, then its launcher's.

    Other Jobs (mpigen's clean-up Job talks to the API server only) are not run.
    """
    objects = list(objects)
    sources = {
        "configMap": {o["metadata"]["name"]: o for o in objects if o.get("kind") == "ConfigMap"},
        "secret": {o["metadata"]["name"]: o for o in objects if o.get("kind") == "Secret"},
    }
    pods: list[Pod] = []
    for obj in objects:
        if obj.get("apiVersion") == VOLCANO_JOB and obj.get("kind") == "Job":
            pods += _volcano_task_pods(obj, "worker", sources)
        if obj.get("apiVersion") == JOBSET and obj.get("kind") == "JobSet":
            pods += _jobset_pods(obj, "worker", sources, launcher_suffix)
        if obj.get("kind") == "Pod" and role_of(obj) == "worker":
            pods.append(_pod(obj["metadata"]["name"], "worker", obj, obj, sources))
        if obj.get("kind") == "StatefulSet":
            base, spec = obj["metadata"]["name"], obj["spec"]
            for i in range(int(spec.get("replicas", 1))):
                pods.append(
                    _pod(
                        f"{base}-{i}",
                        "worker",
                        obj,
                        spec["template"],
                        sources,
                        subdomain=spec.get("serviceName", ""),
                    )
                )
    for obj in objects:
        if obj.get("apiVersion") == VOLCANO_JOB and obj.get("kind") == "Job":
            pods += _volcano_task_pods(obj, "launcher", sources)
        if obj.get("apiVersion") == JOBSET and obj.get("kind") == "JobSet":
            pods += _jobset_pods(obj, "launcher", sources, launcher_suffix)
        if is_launcher_job(obj):
            name = f"{obj['metadata']['name']}-{launcher_suffix}"
            pods.append(_pod(name, "launcher", obj, obj["spec"]["template"], sources))
    return pods


def one(objects: Sequence[Obj], kind: str) -> Obj:
    """The only object of `kind` (PlanError when there is none or more than one)."""
    found = [o for o in objects if o.get("kind") == kind]
    if len(found) != 1:
        raise PlanError(f"expected exactly one {kind}, found {len(found)}")
    return found[0]


def parse_hostfile(text: str) -> list[tuple[str, int]]:
    """`[(host, slots), ...]` from a hostfile: Open MPI's `host slots=N` or Hydra's (MPICH, Intel)
    `host:N`; slots default to 1."""
    out = []
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        host, colon, count = words[0].partition(":")
        slots = int(count) if colon else 1
        for word in words[1:]:
            if word.startswith("slots="):
                slots = int(word.removeprefix("slots="))
        out.append((host, slots))
    return out
