"""Pod plans: what kubelet would run for a list of rendered Kubernetes objects, as plain data.

`plan_pods(objects)` turns mpigen's output into one `Pod` per pod the cluster would create: one per
StatefulSet replica (`<sts>-<i>`) and one for the launcher Job (`<job>-<suffix>`, a generated name like a Job
controller's). Only what the harness needs is read: containers (command, args, env, workingDir, volume
mounts), init containers and volumes (ConfigMap items with their modes, emptyDirs). Everything else
(RBAC, Services, PodGroups, resources) is ignored here; the tests check those elsewhere. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"  # a container image's PATH

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
    """A pod volume: `configMap` (files from a ConfigMap, read-only) or `emptyDir` (empty, writable)."""

    name: str
    kind: Literal["configMap", "emptyDir"]
    files: tuple[File, ...] = ()


@dataclass(frozen=True)
class Mount:
    """A volume mounted into a container at `path`."""

    volume: str
    path: str
    read_only: bool


@dataclass(frozen=True)
class Container:
    """One container: its full argv (command + args, `$(VAR)` expanded), env and mounts."""

    name: str
    image: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    mounts: tuple[Mount, ...]
    working_dir: str = "/"

    def env_dict(self) -> dict[str, str]:
        """The container's own env (later entries win, as in Kubernetes)."""
        return dict(self.env)


@dataclass(frozen=True)
class Pod:
    """One pod: name (= hostname), which controller made it, its containers and volumes."""

    name: str
    role: Literal["launcher", "worker"]
    owner: str
    containers: tuple[Container, ...]
    init_containers: tuple[Container, ...] = ()
    volumes: tuple[Volume, ...] = ()
    subdomain: str = ""
    namespace: str = "default"
    labels: Mapping[str, str] = field(default_factory=dict)

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


def _env(spec: Obj, pod: str, namespace: str, where: str) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    known: dict[str, str] = {}
    for var in spec.get("env") or []:
        name = var["name"]
        if "valueFrom" in var:
            ref = var["valueFrom"].get("fieldRef", {}).get("fieldPath")
            fields = {"metadata.name": pod, "metadata.namespace": namespace}
            if ref not in fields:
                raise PlanError(f"{where}.env[{name}]: only fieldRef metadata.name/namespace is supported")
            value = fields[ref]
        else:
            value = expand(str(var.get("value", "")), known)
        known[name] = value
        out.append((name, value))
    return tuple(out)


def _container(spec: Obj, pod: str, namespace: str, where: str) -> Container:
    env = _env(spec, pod, namespace, where)
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
    )


def _volume(spec: Obj, config_maps: Mapping[str, Obj], where: str) -> Volume:
    if "emptyDir" in spec:
        return Volume(spec["name"], "emptyDir")
    if "configMap" not in spec:
        raise PlanError(f"{where}: volume {spec['name']!r}: only configMap and emptyDir are supported")
    source = spec["configMap"]
    data = (config_maps.get(source["name"]) or {}).get("data")
    if data is None:
        raise PlanError(f"{where}: volume {spec['name']!r} names ConfigMap {source['name']!r}, not rendered")
    default_mode = int(source.get("defaultMode", 0o644))
    items = source.get("items") or [{"key": key, "path": key} for key in data]
    files = []
    for item in items:
        if item["key"] not in data:
            raise PlanError(f"{where}: ConfigMap {source['name']!r} has no key {item['key']!r}")
        files.append(File(item["path"], data[item["key"]], int(item.get("mode", default_mode))))
    return Volume(spec["name"], "configMap", tuple(files))


def _pod(
    name: str,
    role: Literal["launcher", "worker"],
    owner: Obj,
    template: Obj,
    config_maps: Mapping[str, Obj],
    subdomain: str = "",
) -> Pod:
    meta, spec = template.get("metadata") or {}, template["spec"]
    namespace = owner["metadata"].get("namespace") or "default"
    where = f"{owner['kind']}/{owner['metadata']['name']}"
    return Pod(
        name=name,
        role=role,
        owner=where,
        containers=tuple(_container(c, name, namespace, where) for c in spec["containers"]),
        init_containers=tuple(
            _container(c, name, namespace, where) for c in spec.get("initContainers") or []
        ),
        volumes=tuple(_volume(v, config_maps, where) for v in spec.get("volumes") or []),
        subdomain=subdomain,
        namespace=namespace,
        labels=dict(meta.get("labels") or {}),
    )


def is_launcher_job(obj: Obj) -> bool:
    """The launcher Job (label `mpi_role_type: launcher`, as v0.2.0 sets), not e.g. a clean-up Job."""
    labels = obj.get("metadata", {}).get("labels") or {}
    return obj.get("kind") == "Job" and labels.get("mpi_role_type") == "launcher"


def plan_pods(objects: Iterable[Obj], launcher_suffix: str = "e2e00") -> list[Pod]:
    """The job's pods: one per worker StatefulSet replica, then the launcher Job's pod.

    Other Jobs (mpigen's clean-up Job talks to the API server only) are not run.
    """
    objects = list(objects)
    config_maps = {o["metadata"]["name"]: o for o in objects if o.get("kind") == "ConfigMap"}
    pods: list[Pod] = []
    for obj in objects:
        if obj.get("kind") == "StatefulSet":
            base, spec = obj["metadata"]["name"], obj["spec"]
            for i in range(int(spec.get("replicas", 1))):
                pods.append(
                    _pod(
                        f"{base}-{i}",
                        "worker",
                        obj,
                        spec["template"],
                        config_maps,
                        subdomain=spec.get("serviceName", ""),
                    )
                )
    for obj in objects:
        if is_launcher_job(obj):
            name = f"{obj['metadata']['name']}-{launcher_suffix}"
            pods.append(_pod(name, "launcher", obj, obj["spec"]["template"], config_maps))
    return pods


def one(objects: Sequence[Obj], kind: str) -> Obj:
    """The only object of `kind` (PlanError when there is none or more than one)."""
    found = [o for o in objects if o.get("kind") == kind]
    if len(found) != 1:
        raise PlanError(f"expected exactly one {kind}, found {len(found)}")
    return found[0]


def parse_hostfile(text: str) -> list[tuple[str, int]]:
    """`[(host, slots), ...]` from an Open MPI hostfile (`host slots=N`; slots default to 1)."""
    out = []
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        slots = 1
        for word in words[1:]:
            if word.startswith("slots="):
                slots = int(word.removeprefix("slots="))
        out.append((words[0], slots))
    return out
