"""Volume sources (Kubernetes 1.37 pkg/apis/core/validation: ValidateVolumes, validateVolumeSource and
the common sources' own checks: validateNFSVolumeSource, validateCSIVolumeSource, ValidateCSIDriverName).
The files a configMap, secret, downward API or projected volume writes are checked in
mpigen.checks.pod.files, the in-tree drivers' sources and the image volume in mpigen.checks.pod.drivers,
an ephemeral volume's claim template in mpigen.checks.pod.ephemeral, mounts and devices in
mpigen.checks.pod.mounts.

A server before 1.35 drops image volumes and their mounts before it validates (`as_read`). The in-tree
drivers' and the ephemeral volume's checks load only for a template that has such a volume."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mpigen.checks.pod import files, formats
from mpigen.checks.pod.field import (
    Path,
    Violation,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)
from mpigen.checks.pod.view import Pod, mapping, mappings, text

SOURCES = (
    "emptyDir",
    "hostPath",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "quobyte",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
)
HOST_PATH_TYPES = (
    "",
    "BlockDevice",
    "CharDevice",
    "Directory",
    "DirectoryOrCreate",
    "File",
    "FileOrCreate",
    "Socket",
)


# The name the server gives a source's errors' paths where that differs from its field, and the name
# it gives a second source ("may not specify more than 1 volume type") where that differs.
ERROR_NAMES = {"gcePersistentDisk": "persistentDisk"}
FORBIDDEN_NAMES = {"cephfs": "cephFS", "downwardAPI": "downwarAPI"}


def _checked(pod: Pod) -> list[tuple[dict[str, Any], list[Violation]]]:
    """Each volume with its source's violations, worked out once per template."""
    if "volumes" not in pod.memo:
        pod.memo["volumes"] = [
            (volume, list(_source(volume, pod.path("volumes", index), pod.version)))
            for index, volume in enumerate(mappings(pod.spec.get("volumes")))
            if volume is not None
        ]
    checked: list[tuple[dict[str, Any], list[Violation]]] = pod.memo["volumes"]
    return checked


def valid_volumes(pod: Pod) -> dict[str, str]:
    """The volumes the server accepts, by name, each with its source (ValidateVolumes' map: a mount or
    device naming any other is `Not found`); a volume without a source is an emptyDir."""
    found: dict[str, str] = {}
    for volume, problems in _checked(pod):
        name = text(volume.get("name"))
        if name and not problems and not formats.dns1123_label(name) and name not in found:
            found[name] = next((s for s in SOURCES if volume.get(s) is not None), "emptyDir")
    return found


def volume_sources(pod: Pod) -> Iterator[Violation]:
    for _, problems in _checked(pod):
        yield from problems


def _source(volume: dict[str, Any], where: Path, version: tuple[int, int]) -> Iterator[Violation]:
    # A volume without a source is defaulted to an emptyDir (k8s.io/kubernetes pkg/apis/core/v1
    # SetDefaults_Volume) before validation, so "must specify a volume type" never reaches a template.
    present = [name for name in SOURCES if volume.get(name) is not None]
    for name in present[1:]:
        yield forbidden((*where, FORBIDDEN_NAMES.get(name, name)), "may not specify more than 1 volume type")
    if present:
        first = present[0]
        at = (*where, ERROR_NAMES.get(first, first))
        if first in _VERSIONED:
            yield from _VERSIONED[first](mapping(volume[first]), at, version)
        elif first in IN_TREE:
            # deferred: the in-tree volume drivers' rules load only for a template with such a volume (gated
            # pod rules)
            from mpigen.checks.pod import drivers

            yield from drivers.CHECKS[first](mapping(volume[first]), at)
        else:
            yield from _CHECKS.get(first, _none)(mapping(volume[first]), at)
    if volume.get("iscsi") is not None:
        # deferred: the in-tree volume drivers' rules load only for a template with such a volume (gated pod
        # rules)
        from mpigen.checks.pod import drivers

        yield from drivers.iscsi_name_length(volume, where)


def as_read(spec: dict[str, Any], version: tuple[int, int]) -> dict[str, Any]:
    """The pod spec as a server of `version` validates it: before 1.35 (ImageVolume off by default)
    without its image volumes and their mounts (pkg/api/pod dropImageVolumes), so later indices move up
    as the server's do."""
    volumes = spec.get("volumes")
    if version >= (1, 35) or not isinstance(volumes, list):
        return spec
    images = {text(v.get("name")) for v in volumes if isinstance(v, dict) and v.get("image") is not None}
    if not images:
        return spec
    read = {
        **spec,
        "volumes": [v for v in volumes if not (isinstance(v, dict) and v.get("image") is not None)],
    }
    for field in ("containers", "initContainers", "ephemeralContainers"):
        if isinstance(spec.get(field), list):
            read[field] = [_without_mounts(c, images) for c in spec[field]]
    return read


def _without_mounts(container: object, images: set[str]) -> object:
    if not isinstance(container, dict) or not isinstance(container.get("volumeMounts"), list):
        return container
    mounts = [
        m for m in container["volumeMounts"] if not (isinstance(m, dict) and text(m.get("name")) in images)
    ]
    return {**container, "volumeMounts": mounts}


def _none(source: dict[str, Any], where: Path) -> Iterator[Violation]:
    return iter(())


def _empty_dir(source: dict[str, Any], where: Path) -> Iterator[Violation]:
    limit = source.get("sizeLimit")
    if limit is None:
        return
    value = formats.parse_quantity(limit)
    if value is None:  # refused as the object is decoded
        yield invalid((*where, "sizeLimit"), formats.quantity_text(limit), formats.QUANTITY_MSG)
    elif value < formats.ZERO:
        yield forbidden((*where, "sizeLimit"), "SizeLimit field must be a valid resource quantity")


def _host_path(source: dict[str, Any], where: Path) -> Iterator[Violation]:
    path = text(source.get("path"))
    if not path:
        yield required((*where, "path"))
        return
    if ".." in path.split("/"):
        yield invalid((*where, "path"), path, "must not contain '..'")
    kind = source.get("type")
    if isinstance(kind, str) and kind not in HOST_PATH_TYPES:
        yield not_supported((*where, "type"), kind, HOST_PATH_TYPES)


def _named(field: str) -> Any:
    def check(source: dict[str, Any], where: Path) -> Iterator[Violation]:
        if not text(source.get(field)):
            yield required((*where, field))
        if field in ("name", "secretName"):
            yield from files.mode(source, where, "defaultMode")
            for index, item in enumerate(mappings(source.get("items"))):
                yield from files.key_to_path(item or {}, (*where, "items", index))

    return check


def _nfs(source: dict[str, Any], where: Path) -> Iterator[Violation]:
    if not text(source.get("server")):
        yield required((*where, "server"))
    path = text(source.get("path"))
    if not path:
        yield required((*where, "path"))
    if not path.startswith("/"):
        yield invalid((*where, "path"), path, "must be an absolute path")


def _csi(source: dict[str, Any], where: Path) -> Iterator[Violation]:
    driver = text(source.get("driver"))
    if not driver:
        yield required((*where, "driver"))
    else:
        if len(driver) > 63:
            yield too_long((*where, "driver"), 63)
        yield from (
            invalid((*where, "driver"), driver, msg) for msg in formats.dns1123_subdomain(driver.lower())
        )
    secret = source.get("nodePublishSecretRef")
    if isinstance(secret, dict):
        name = text(secret.get("name"))
        if not name:
            yield required((*where, "nodePublishSecretRef", "name"))
        else:  # the server names the secret's field `csi.name`
            yield from (invalid((*where, "name"), name, msg) for msg in formats.dns1123_subdomain(name))


_CHECKS = {
    "emptyDir": _empty_dir,
    "hostPath": _host_path,
    "configMap": _named("name"),
    "secret": _named("secretName"),
    "persistentVolumeClaim": _named("claimName"),
    "nfs": _nfs,
    "csi": _csi,
    "downwardAPI": files.downward_api,
}


def _ephemeral(source: dict[str, Any], where: Path, version: tuple[int, int]) -> Iterator[Violation]:
    # deferred: the ephemeral volume's rules load only for a template with one (gated pod rules)
    from mpigen.checks.pod.ephemeral import ephemeral

    return ephemeral(source, where, version)


def _image(source: dict[str, Any], where: Path, version: tuple[int, int]) -> Iterator[Violation]:
    # deferred: the image volume's rules (with the drivers') load only for a template with one (gated pod
    # rules)
    from mpigen.checks.pod.drivers import image

    return image(source, where, version)


_VERSIONED = {"projected": files.projected_volume, "ephemeral": _ephemeral, "image": _image}
# Every other source is an in-tree driver's, checked by mpigen.checks.pod.drivers (loaded for a
# template that has one).
IN_TREE = frozenset(SOURCES) - _CHECKS.keys() - _VERSIONED.keys()
