"""A container's volume mounts and raw block devices (Kubernetes 1.37 pkg/apis/core/validation:
ValidateVolumeMounts, ValidateVolumeDevices, validateMountPropagation, validateMountRecursiveReadOnly).
A mount names a volume the server accepted; a device names such a volume of a persistentVolumeClaim or
an ephemeral source. A container's mounts and devices share no name and no path."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mpigen.checks.pod.field import Path, Violation, forbidden, invalid, not_found, not_supported, required
from mpigen.checks.pod.view import Pod, mapping, mappings, text
from mpigen.checks.pod.volumes import valid_volumes

PROPAGATIONS = ("Bidirectional", "HostToContainer", "None")
RECURSIVE_READ_ONLY = ("Disabled", "Enabled", "IfPossible")


def volume_mounts(pod: Pod) -> Iterator[Violation]:
    """Each container's mounts, then its devices (validateContainerCommon's order)."""
    volumes = valid_volumes(pod)
    for at, container in pod.containers():
        mounts = [m for m in mappings(container.get("volumeMounts")) if m is not None]
        devices = [d for d in mappings(container.get("volumeDevices")) if d is not None]
        # GetVolumeMountMap, GetVolumeDeviceMap: name -> path, a later entry of a name replacing an earlier
        mounted = {text(m.get("name")): text(m.get("mountPath")) for m in mounts}
        attached = {text(d.get("name")): text(d.get("devicePath")) for d in devices}
        paths: set[str] = set()
        for index, mount in enumerate(mappings(container.get("volumeMounts"))):
            if mount is not None:
                where = (*at, "volumeMounts", index)
                yield from _mount(mount, where, volumes, paths, container)
                yield from _clash(mount, where, attached, ("mountPath", "volumeDevices"))
        yield from _devices(container, (*at, "volumeDevices"), volumes, mounted)


def _mount(
    mount: dict[str, Any], where: Path, volumes: dict[str, str], paths: set[str], container: dict[str, Any]
) -> Iterator[Violation]:
    name, target = text(mount.get("name")), text(mount.get("mountPath"))
    if not name:
        yield required((*where, "name"))
    if name not in volumes:
        yield not_found((*where, "name"), name)
    if not target:
        yield required((*where, "mountPath"))
    if target in paths:
        yield invalid((*where, "mountPath"), target, "must be unique")
    paths.add(target)
    listed = where[:-1]  # the server names subPath errors at volumeMounts.subPath
    for field in ("subPath", "subPathExpr"):
        sub = text(mount.get(field))
        if sub.startswith("/"):
            yield invalid((*listed, field), sub, "must be a relative path")
        if ".." in sub.split("/"):
            yield invalid((*listed, field), sub, "must not contain '..'")
    if text(mount.get("subPath")) and text(mount.get("subPathExpr")):
        yield invalid(
            (*where, "subPathExpr"), mount["subPathExpr"], "subPathExpr and subPath are mutually exclusive"
        )
    yield from _propagation(mount, listed, container)


def _propagation(mount: dict[str, Any], listed: Path, container: dict[str, Any]) -> Iterator[Violation]:
    mode = mount.get("mountPropagation")
    if isinstance(mode, str):
        if mode not in PROPAGATIONS:
            yield not_supported((*listed, "mountPropagation"), mode, PROPAGATIONS)
        if (
            mode == "Bidirectional"
            and mapping(container.get("securityContext")).get("privileged") is not True
        ):
            yield forbidden(
                (*listed, "mountPropagation"),
                "Bidirectional mount propagation is available only to privileged containers",
            )
    rro = mount.get("recursiveReadOnly")
    if isinstance(rro, str):
        if rro not in RECURSIVE_READ_ONLY:
            yield not_supported((*listed, "recursiveReadOnly"), rro, RECURSIVE_READ_ONLY)
        elif rro != "Disabled" and mount.get("readOnly") is not True:
            yield forbidden((*listed, "recursiveReadOnly"), "may only be specified when readOnly is true")
        elif rro != "Disabled" and mode not in (None, "None"):
            yield forbidden(
                (*listed, "recursiveReadOnly"),
                "may only be specified when mountPropagation is None or not specified",
            )


def _clash(
    entry: dict[str, Any], where: Path, others: dict[str, str], names: tuple[str, str]
) -> Iterator[Violation]:
    """A mount (a device) whose name or path the container's devices (mounts) already use."""
    field, listed = names
    name, target = text(entry.get("name")), text(entry.get(field))
    if name in others:
        yield invalid((*where, "name"), name, f"must not already exist in {listed}")
    if target in others.values():
        yield invalid((*where, field), target, f"must not already exist as a path in {listed}")


# Block devices come only from claims: a persistentVolumeClaim or an ephemeral volume's.
_BLOCK_SOURCES = ("persistentVolumeClaim", "ephemeral")


def _devices(
    container: dict[str, Any], at: Path, volumes: dict[str, str], mounted: dict[str, str]
) -> Iterator[Violation]:
    """ValidateVolumeDevices; a device path needs not be absolute."""
    names: set[str] = set()
    paths: set[str] = set()
    for index, device in enumerate(mappings(container.get("volumeDevices"))):
        if device is None:
            continue
        where = (*at, index)
        name, target = text(device.get("name")), text(device.get("devicePath"))
        if not name:
            yield required((*where, "name"))
        if name in names:
            yield invalid((*where, "name"), name, "must be unique")
        if name in volumes and volumes[name] not in _BLOCK_SOURCES:
            yield invalid(
                (*where, "name"),
                name,
                "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode",
            )
        if name not in volumes:
            yield not_found((*where, "name"), name)
        if not target:
            yield required((*where, "devicePath"))
        if target in paths:
            yield invalid((*where, "devicePath"), target, "must be unique")
        if target and ".." in target.split("/"):
            yield invalid((*where, "devicePath"), target, "can not contain backsteps ('..')")
        else:
            paths.add(target)
        yield from _clash(device, where, mounted, ("devicePath", "volumeMounts"))
        if name:
            names.add(name)
