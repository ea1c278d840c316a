"""Volume sources and volume mounts (Kubernetes 1.37 pkg/apis/core/validation: ValidateVolumes,
validateVolumeSource and the common sources' own checks: validateNFSVolumeSource, validateCSIVolumeSource,
ValidateCSIDriverName, validateProjectedVolumeSource, validateProjectionSources, validateKeyToPath,
ValidateLocalNonReservedPath, validateDownwardAPIVolumeFile; ValidateVolumeMounts). The in-tree drivers'
sources and the image volume are in mpigen.checks.pod.drivers, the clusterTrustBundle and podCertificate
projections in mpigen.checks.pod.projected, an ephemeral volume's claim template in
mpigen.checks.pod.ephemeral.

A server before 1.35 drops image volumes and their mounts before it validates (`as_read`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mpigen.checks.pod import drivers, env, formats, projected
from mpigen.checks.pod.ephemeral import ephemeral
from mpigen.checks.pod.field import (
    Path,
    Violation,
    forbidden,
    invalid,
    not_found,
    not_supported,
    required,
    too_long,
)
from mpigen.checks.pod.view import Pod, mapping, mappings, number, text

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
PROPAGATIONS = ("Bidirectional", "HostToContainer", "None")
RECURSIVE_READ_ONLY = ("Disabled", "Enabled", "IfPossible")
_FILE_MODE = "must be a number between 0 and 0777 (octal), both inclusive"


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


def valid_volumes(pod: Pod) -> set[str]:
    """The names of the volumes the server accepts (a mount of any other is `Not found`)."""
    found: set[str] = set()
    for volume, problems in _checked(pod):
        name = text(volume.get("name"))
        if name and not problems and not formats.dns1123_label(name) and name not in found:
            found.add(name)
    return found


def volume_sources(pod: Pod) -> Iterator[Violation]:
    for _, problems in _checked(pod):
        yield from problems


def _source(volume: dict[str, Any], where: Path, version: tuple[int, int]) -> Iterator[Violation]:
    # A volume without a source is defaulted to an emptyDir (k8s.io/kubernetes pkg/apis/core/v1
    # SetDefaults_Volume) before validation, so "must specify a volume type" never reaches a template.
    present = [name for name in SOURCES if volume.get(name) is not None]
    for name in present[1:]:
        yield forbidden(
            (*where, drivers.FORBIDDEN_NAMES.get(name, name)), "may not specify more than 1 volume type"
        )
    if present:
        first = present[0]
        at = (*where, drivers.ERROR_NAMES.get(first, first))
        if first in _VERSIONED:
            yield from _VERSIONED[first](mapping(volume[first]), at, version)
        else:
            yield from _CHECKS.get(first, _none)(mapping(volume[first]), at)
    if volume.get("iscsi") is not None:
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
            yield from _mode(source, where, "defaultMode")
            for index, item in enumerate(mappings(source.get("items"))):
                yield from _key_to_path(item or {}, (*where, "items", index))

    return check


def _mode(source: dict[str, Any], where: Path, field: str) -> Iterator[Violation]:
    mode = number(source.get(field))
    if mode is not None and not 0 <= mode <= 0o777:
        yield invalid((*where, field), mode, _FILE_MODE)


def _key_to_path(item: dict[str, Any], where: Path) -> Iterator[Violation]:
    if not text(item.get("key")):
        yield required((*where, "key"))
    path = text(item.get("path"))
    if not path:
        yield required((*where, "path"))
    if path.startswith("/"):
        yield invalid((*where, "path"), path, "must be a relative path")
    if ".." in path.split("/"):
        yield invalid((*where, "path"), path, "must not contain '..'")
    if path.startswith("..") and not path.startswith("../"):
        yield invalid((*where, "path"), path, "must not start with '..'")
    yield from _mode(item, where, "mode")


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


_PROJECTIONS = ("secret", "configMap", "downwardAPI", "serviceAccountToken")
_PROJECTIONS_1_37 = (*_PROJECTIONS, "clusterTrustBundle", "podCertificate")


def _projected(source: dict[str, Any], where: Path, version: tuple[int, int]) -> Iterator[Violation]:
    yield from _mode(source, where, "defaultMode")
    paths: set[str] = set()

    def claim(path: str, value: object) -> Iterator[Violation]:
        if path in paths:
            yield invalid(where, value, "conflicting duplicate paths")
        paths.add(path)

    for index, item in enumerate(mappings(source.get("sources"))):
        at = (*where, "sources", index)
        kinds = _PROJECTIONS_1_37 if projected.read(version) else _PROJECTIONS
        present = [kind for kind in kinds if (item or {}).get(kind) is not None]
        for kind in present:
            part = mapping((item or {})[kind])
            if kind in ("secret", "configMap"):
                if not text(part.get("name")):
                    yield required((*at, kind, "name"))
                for j, key_path in enumerate(mappings(part.get("items"))):
                    yield from _key_to_path(key_path or {}, (*at, kind, "items", j))
                    if text((key_path or {}).get("path")):
                        yield from claim(text((key_path or {}).get("path")), text(part.get("name")))
            elif kind == "clusterTrustBundle":
                yield from projected.cluster_trust_bundle(part, (*at, kind), claim)
            elif kind == "podCertificate":
                yield from projected.pod_certificate(part, (*at, kind), claim)
            elif kind == "downwardAPI":
                for file in mappings(part.get("items")):
                    yield from _downward_file(file or {}, (*at, kind))
                    path = text((file or {}).get("path"))
                    if path:
                        yield from claim(path, path)
            else:
                expiry = number(part.get("expirationSeconds"))
                if expiry is not None and expiry < 600:
                    yield invalid(
                        (*at, kind, "expirationSeconds"),
                        expiry,
                        "may not specify a duration less than 10 minutes",
                    )
                if expiry is not None and expiry > 1 << 32:
                    yield invalid(
                        (*at, kind, "expirationSeconds"),
                        expiry,
                        "may not specify a duration larger than 2^32 seconds",
                    )
                path = text(part.get("path"))
                if not path:  # the server names the volume's `projected.path`
                    yield required((*where, "path"))
                else:
                    yield from projected.local_path(path, (*where, "path"))
        if len(present) > 1:
            yield forbidden(at, "may not specify more than 1 volume type per source")


VOLUME_FIELD_PATHS = (
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
)


def _downward_file(file: dict[str, Any], where: Path) -> Iterator[Violation]:
    """validateDownwardAPIVolumeFile; the server names the errors of every file at the source's path."""
    path = text(file.get("path"))
    if not path:
        yield required((*where, "path"))
    yield from projected.local_path(path, (*where, "path"))
    field, resource = file.get("fieldRef"), file.get("resourceFieldRef")
    if isinstance(field, dict):
        yield from env.field_ref(field, (*where, "fieldRef"), VOLUME_FIELD_PATHS)
        if resource is not None:
            yield invalid(
                where, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"
            )
    elif isinstance(resource, dict):
        yield from env.resource_field_ref(resource, (*where, "resourceFieldRef"), volume=True)
    else:
        yield required(where, "one of fieldRef and resourceFieldRef is required")
    yield from _mode(file, where, "mode")


def _downward_api(source: dict[str, Any], where: Path) -> Iterator[Violation]:
    yield from _mode(source, where, "defaultMode")
    for file in mappings(source.get("items")):
        yield from _downward_file(file or {}, where)


_CHECKS = {
    "emptyDir": _empty_dir,
    "hostPath": _host_path,
    "configMap": _named("name"),
    "secret": _named("secretName"),
    "persistentVolumeClaim": _named("claimName"),
    "nfs": _nfs,
    "csi": _csi,
    "downwardAPI": _downward_api,
    **drivers.CHECKS,
}
_VERSIONED = {"projected": _projected, "ephemeral": ephemeral, "image": drivers.image}


def volume_mounts(pod: Pod) -> Iterator[Violation]:
    volumes = valid_volumes(pod)
    for at, container in pod.containers():
        paths: set[str] = set()
        for index, mount in enumerate(mappings(container.get("volumeMounts"))):
            if mount is not None:
                yield from _mount(mount, (*at, "volumeMounts", index), volumes, paths, container)


def _mount(
    mount: dict[str, Any], where: Path, volumes: set[str], paths: set[str], container: dict[str, Any]
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
