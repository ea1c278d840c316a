"""The in-tree volume drivers' sources and the image volume (Kubernetes 1.37 pkg/apis/core/validation:
validateGitRepoVolumeSource, validateISCSIVolumeSource, validateRBDVolumeSource, validateGlusterfsVolumeSource,
validateCephFSVolumeSource, validateCinderVolumeSource, validateFCVolumeSource, validateFlexVolumeSource,
validateAzureFile, validateAzureDisk, validateVsphereVolumeSource, validateQuobyteVolumeSource,
validateScaleIOVolumeSource, validateStorageOSVolumeSource, validatePortworxVolumeSource,
validatePhotonPersistentDiskVolumeSource, validateGCEPersistentDiskVolumeSource,
validateAWSElasticBlockStoreVolumeSource, validateFlockerVolumeSource, validateImageVolumeSource).

Their rules are the same from Kubernetes 1.25 to 1.37. A 1.37 server still accepts the drivers it
no longer runs (gitRepo, photonPersistentDisk, scaleIO, flocker, storageos, quobyte, glusterfs): it only
warns (pkg/api/pod/warnings.go), so these refuse only what that server refuses. The image volume is
read from 1.35 (ImageVolume on by default; earlier servers drop it and its mounts, see
`mpigen.checks.pod.volumes.as_read`), and a template's image volume needs its `reference` from 1.37."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from mpigen.checks.pod import formats
from mpigen.checks.pod.containers import PULL_POLICIES
from mpigen.checks.pod.field import Key, Path, Violation, invalid, not_supported, required
from mpigen.checks.pod.view import mapping, number, text

Source = Callable[[dict[str, Any], Path], Iterator[Violation]]

_IQN = r"iqn\.[0-9]{4}-[0-9]{2}\.([A-Za-z0-9.-]+)(:[^,;*&$|\t\n\f\r ]+)\Z"
_EUI = r"eui.[A-Za-z0-9]{16}\Z"
_NAA = r"naa.[A-Za-z0-9]{32}\Z"
_PARTITION = formats.range_error(1, 255)  # pdPartitionErrorMsg: 0 is accepted all the same
AZURE_CACHING_MODES = ("None", "ReadOnly", "ReadWrite")
AZURE_DISK_KINDS = ("Dedicated", "Managed", "Shared")


def _needs(*fields: str) -> Source:
    """A source whose only rules are that these string fields are not empty."""

    def check(source: dict[str, Any], where: Path) -> Iterator[Violation]:
        for name in fields:
            if not text(source.get(name)):
                yield required((*where, name))

    return check


def _needs_list(field: str) -> Source:
    def check(source: dict[str, Any], where: Path) -> Iterator[Violation]:
        if not source.get(field):
            yield required((*where, field))

    return check


def _rbd(source: dict[str, Any], where: Path) -> Iterator[Violation]:
    yield from _needs_list("monitors")(source, where)
    yield from _needs("image")(source, where)


def _git_repo(source: dict[str, Any], where: Path) -> Iterator[Violation]:
    if not text(source.get("repository")):
        yield required((*where, "repository"))
    directory = text(source.get("directory"))
    if directory.startswith("/"):
        yield invalid((*where, "directory"), directory, "must be a relative path")
    if ".." in directory.split("/"):
        yield invalid((*where, "directory"), directory, "must not contain '..'")


def _iscsi_name(value: str, at: Path, detail: str) -> Iterator[Violation]:
    if not value.startswith(("iqn", "eui", "naa")):
        yield invalid(at, value, detail)
    elif not (
        re.search(_IQN, value)
        if value[:3] == "iqn"
        else re.match({"eui": _EUI, "naa": _NAA}[value[:3]], value)
    ):
        yield invalid(at, value, "must be valid format")


def _iscsi(source: dict[str, Any], where: Path) -> Iterator[Violation]:
    if not text(source.get("targetPortal")):
        yield required((*where, "targetPortal"))
    iqn = text(source.get("iqn"))
    if not iqn:
        yield required((*where, "iqn"))
    else:
        yield from _iscsi_name(iqn, (*where, "iqn"), "must be valid format starting with iqn, eui, or naa")
    lun = number(source.get("lun")) or 0
    if not 0 <= lun <= 255:
        yield invalid((*where, "lun"), lun, formats.range_error(0, 255))
    chap = source.get("chapAuthDiscovery") is True or source.get("chapAuthSession") is True
    if chap and source.get("secretRef") is None:
        yield required((*where, "secretRef"))
    initiator = source.get("initiatorName")
    if isinstance(initiator, str):  # the server names it `initiatorname`
        yield from _iscsi_name(
            initiator, (*where, "initiatorname"), "must be valid format starting with iqn, eui, or naa"
        )


def iscsi_name_length(volume: dict[str, Any], where: Path) -> Iterator[Violation]:
    """With an initiator name, `<volume name>:<targetPortal>` must fit 64 characters (checked of an
    iscsi source wherever it stands among the volume's sources)."""
    source = mapping(volume.get("iscsi"))
    name = text(volume.get("name"))
    if (
        isinstance(source.get("initiatorName"), str)
        and len(f"{name}:{text(source.get('targetPortal'))}") > 64
    ):
        yield invalid(
            (*where, "name"),
            name,
            "Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if "
            "iscsi.initiatorName is specified.",
        )


def _fc(source: dict[str, Any], where: Path) -> Iterator[Violation]:
    wwns, wwids = source.get("targetWWNs") or [], source.get("wwids") or []
    if not wwns and not wwids:
        yield required((*where, "targetWWNs"), "must specify either targetWWNs or wwids, but not both")
    if wwns and wwids:
        yield invalid(
            (*where, "targetWWNs"), wwns, "targetWWNs and wwids can not be specified simultaneously"
        )
    if wwns:
        lun = number(source.get("lun"))
        if source.get("lun") is None:
            yield required((*where, "lun"), "lun is required if targetWWNs is specified")
        elif lun is not None and not 0 <= lun <= 255:
            yield invalid((*where, "lun"), lun, formats.range_error(0, 255))


def _disk(name_field: str) -> Source:
    """GCE PD (whose errors the server names `persistentDisk`) and AWS EBS."""

    def check(source: dict[str, Any], where: Path) -> Iterator[Violation]:
        if not text(source.get(name_field)):
            yield required((*where, name_field))
        partition = number(source.get("partition")) or 0
        if not 0 <= partition <= 255:
            yield invalid((*where, "partition"), partition, _PARTITION)

    return check


def _flex(source: dict[str, Any], where: Path) -> Iterator[Violation]:
    if not text(source.get("driver")):
        yield required((*where, "driver"))
    for key in sorted(mapping(source.get("options"))):  # a Go map: the server's order varies
        domain = key.split("/", 1)[0] if "/" in key else key
        if ("." + domain.lower()).endswith((".kubernetes.io", ".k8s.io")):
            yield invalid(
                (*where, "options", Key(key)), key, "kubernetes.io and k8s.io namespaces are reserved"
            )


def _azure_disk(source: dict[str, Any], where: Path) -> Iterator[Violation]:
    if not text(source.get("diskName")):
        yield required((*where, "diskName"))
    uri = text(source.get("diskURI"))
    if not uri:
        yield required((*where, "diskURI"))
    caching = source.get("cachingMode")
    if isinstance(caching, str) and caching not in AZURE_CACHING_MODES:
        yield not_supported((*where, "cachingMode"), caching, AZURE_CACHING_MODES)
    kind = source.get("kind", "Shared")  # defaulted (SetObjectDefaults_Pod)
    if not isinstance(kind, str):
        return
    if kind not in AZURE_DISK_KINDS:
        yield not_supported((*where, "kind"), kind, AZURE_DISK_KINDS)
    if kind == "Managed" and not uri.startswith("/subscriptions/"):
        yield not_supported(
            (*where, "diskURI"),
            uri,
            (
                "/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}",
            ),
        )
    if kind != "Managed" and not uri.startswith("https://"):
        yield not_supported(
            (*where, "diskURI"),
            uri,
            ("https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd",),
        )


def split_host_port(pair: str) -> bool:
    """Whether Go's net.SplitHostPort accepts `pair`."""
    colon = pair.rfind(":")
    if colon < 0:
        return False
    start, end = 0, 0
    if pair.startswith("["):
        close = pair.find("]")
        if close < 0 or close + 1 != colon:
            return False
        start, end = 1, close + 1
    elif ":" in pair[:colon]:
        return False
    return "[" not in pair[start:] and "]" not in pair[end:]


def _quobyte(source: dict[str, Any], where: Path) -> Iterator[Violation]:
    registry = text(source.get("registry"))
    if not registry:
        yield required((*where, "registry"), "must be a host:port pair or multiple pairs separated by commas")
    elif len(text(source.get("tenant"))) >= 65:
        yield required((*where, "tenant"), "must be a UUID and may not exceed a length of 64 characters")
    else:
        for pair in registry.split(","):
            if not split_host_port(pair):
                yield invalid(
                    (*where, "registry"),
                    registry,
                    "must be a host:port pair or multiple pairs separated by commas",
                )
    if not text(source.get("volume")):
        yield required((*where, "volume"))


def _secret_name(source: dict[str, Any], where: Path) -> Iterator[Violation]:
    secret = source.get("secretRef")
    if isinstance(secret, dict) and not text(secret.get("name")):
        yield required((*where, "secretRef", "name"))


def _cinder(source: dict[str, Any], where: Path) -> Iterator[Violation]:
    if not text(source.get("volumeID")):
        yield required((*where, "volumeID"))
    yield from _secret_name(source, where)


def _storageos(source: dict[str, Any], where: Path) -> Iterator[Violation]:
    name, namespace = text(source.get("volumeName")), text(source.get("volumeNamespace"))
    if not name:
        yield required((*where, "volumeName"))
    else:
        yield from (invalid((*where, "volumeName"), name, msg) for msg in formats.dns1123_label(name))
    if namespace:
        yield from (
            invalid((*where, "volumeNamespace"), namespace, msg) for msg in formats.dns1123_label(namespace)
        )
    yield from _secret_name(source, where)


def _flocker(source: dict[str, Any], where: Path) -> Iterator[Violation]:
    name, uuid = text(source.get("datasetName")), text(source.get("datasetUUID"))
    if not name and not uuid:
        yield required(where, "one of datasetName and datasetUUID is required")
    if name and uuid:
        yield invalid(where, "resource", "datasetName and datasetUUID can not be specified simultaneously")
    if "/" in name:
        yield invalid((*where, "datasetName"), name, "must not contain '/'")


def image(source: dict[str, Any], where: Path, version: tuple[int, int]) -> Iterator[Violation]:
    """An image volume (read from 1.35); a template's needs its reference from 1.37 (1.35 and 1.36
    require it of pods only). Its pullPolicy is defaulted, so never empty."""
    if version >= (1, 37) and not text(source.get("reference")):
        yield required((*where, "reference"))
    policy = source.get("pullPolicy")
    if isinstance(policy, str) and policy and policy not in PULL_POLICIES:
        yield not_supported((*where, "pullPolicy"), policy, PULL_POLICIES)


# Each in-tree source's check by its field (mpigen.checks.pod.volumes lists these fields in IN_TREE).
CHECKS: dict[str, Source] = {
    "gitRepo": _git_repo,
    "gcePersistentDisk": _disk("pdName"),
    "awsElasticBlockStore": _disk("volumeID"),
    "iscsi": _iscsi,
    "glusterfs": _needs("endpoints", "path"),
    "rbd": _rbd,
    "quobyte": _quobyte,
    "flexVolume": _flex,
    "cinder": _cinder,
    "cephfs": _needs_list("monitors"),
    "flocker": _flocker,
    "fc": _fc,
    "azureFile": _needs("secretName", "shareName"),
    "vsphereVolume": _needs("volumePath"),
    "azureDisk": _azure_disk,
    "photonPersistentDisk": _needs("pdID"),
    "portworxVolume": _needs("volumeID"),
    "scaleIO": _needs("gateway", "system", "volumeName"),
    "storageos": _storageos,
}
