"""A projected volume's clusterTrustBundle and podCertificate sources (Kubernetes 1.37
pkg/apis/core/validation: validateProjectionSources, ValidateSignerName, ValidateClusterTrustBundleName,
ValidateUserAnnotations).

Both are read from 1.37, where ClusterTrustBundleProjection and PodCertificateRequest are on by default;
an earlier server drops them unread (pkg/api/pod: dropDisabledClusterTrustBundleProjection,
dropDisabledPodCertificateProjection). The `user` and `defaultUser` fields of 1.37's volume sources are
dropped unread too while AtomicWriteVolumeUserFields is alpha (off by default), so no rule reads them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from mpigen.checks.pod import formats
from mpigen.checks.pod.field import Path, Violation, invalid, not_supported, required, too_long
from mpigen.checks.pod.metadata import label_selector
from mpigen.checks.pod.view import mapping, number, text

Claim = Callable[[str, object], Iterator[Violation]]  # a path in the volume, and the value to name if taken
KEY_TYPES = ("RSA3072", "RSA4096", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519")
MAX_EXPIRATION = 91 * 24 * 60 * 60  # certificates.MaxMaxExpirationSeconds
KUBERNETES_MAX_EXPIRATION = 24 * 60 * 60  # certificates.KubernetesMaxMaxExpirationSeconds
ANNOTATIONS_MAX_BYTES = 256 * 1024


def read(version: tuple[int, int]) -> bool:
    return version >= (1, 37)


def local_path(path: str, where: Path) -> Iterator[Violation]:
    """ValidateLocalNonReservedPath."""
    if path.startswith("/"):
        yield invalid(where, path, "must be a relative path")
    if ".." in path.split("/"):
        yield invalid(where, path, "must not contain '..'")
    if path.startswith("..") and not path.startswith("../"):
        yield invalid(where, path, "must not start with '..'")


def signer_name(name: str, at: Path) -> Iterator[Violation]:
    """ValidateSignerName: `example.com/signer-name`."""
    if not name:
        yield required(at)
        return
    segments = name.split("/")
    if len(segments) != 2:
        yield invalid(
            at, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'"
        )
        return
    domain, path = segments
    if len(domain) > 253:
        yield too_long(at, 253)
    labels = domain.split(".")
    for label in labels:
        problems = formats.dns1123_label(label)
        yield from (invalid(at, domain, f"validating label {_quoted(label)}: {msg}") for msg in problems)
        if problems:
            break
    if len(labels) < 2:
        yield invalid(at, domain, "should be a domain with at least two segments separated by dots")
    for label in path.split("."):
        problems = formats.dns1123_subdomain(label)
        yield from (invalid(at, path, f"validating label {_quoted(label)}: {msg}") for msg in problems)
        if problems:
            break
    if len(name) > 253 + 253 + 63 + 1 + 1:
        yield too_long(at, 253 + 253 + 63 + 1 + 1)


def _quoted(value: str) -> str:
    """Go's %q of a printable string."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def cluster_trust_bundle(part: dict[str, Any], at: Path, claim: Claim) -> Iterator[Violation]:
    name, signer = part.get("name"), part.get("signerName")
    if name is not None and signer is not None:
        yield invalid(at, part, "only one of name and signerName may be used")
    elif name is not None:
        name = text(name)
        if not name:
            yield required((*at, "name"), "must be a valid object name")
        for msg in formats.dns1123_subdomain(name.rpartition(":")[2]):
            yield invalid((*at, "name"), name, f"not a valid clustertrustbundlename: {msg}")
        if part.get("labelSelector") is not None:
            yield invalid(
                (*at, "labelSelector"),
                part["labelSelector"],
                "labelSelector must be unset if name is specified",
            )
    elif signer is not None:
        if not text(signer):
            yield required((*at, "signerName"), "must be a valid signer name")
        yield from signer_name(text(signer), (*at, "signerName"))
        yield from label_selector(part.get("labelSelector"), (*at, "labelSelector"))
    else:
        yield required(at, "either name or signerName must be specified")
    path = text(part.get("path"))
    if not path:
        yield required((*at, "path"))
    yield from local_path(path, (*at, "path"))
    yield from claim(path, path)


def pod_certificate(part: dict[str, Any], at: Path, claim: Claim) -> Iterator[Violation]:
    signer = text(part.get("signerName"))
    yield from signer_name(signer, (*at, "signerName"))
    annotations = part.get("userAnnotations")
    if isinstance(annotations, dict):
        yield from _user_annotations(annotations, (*at, "userAnnotations"))
    key_type = text(part.get("keyType"))
    if key_type not in KEY_TYPES:
        yield not_supported((*at, "keyType"), key_type, KEY_TYPES)
    expiry = number(part.get("maxExpirationSeconds"))
    if expiry is not None:
        if expiry < 3600:
            yield invalid(
                (*at, "maxExpirationSeconds"), expiry, "if provided, maxExpirationSeconds must be >= 3600"
            )
        host = signer.partition("/")[0]
        limit = (
            KUBERNETES_MAX_EXPIRATION
            if host == "kubernetes.io" or host.endswith(".kubernetes.io")
            else MAX_EXPIRATION
        )
        if expiry > limit:
            yield invalid(
                (*at, "maxExpirationSeconds"), expiry, f"if provided, maxExpirationSeconds must be <= {limit}"
            )
    paths = [
        name for name in ("credentialBundlePath", "keyPath", "certificateChainPath") if text(part.get(name))
    ]
    for name in paths:
        yield from local_path(part[name], (*at, name))
        yield from claim(part[name], part[name])
    if not paths:
        yield required(at, "specify at least one of credentialBundlePath, keyPath, and certificateChainPath")


def _user_annotations(annotations: dict[str, Any], at: Path) -> Iterator[Violation]:
    """ValidateUserAnnotations: each key (in lower case) a domain-prefixed qualified name."""
    for key in annotations:
        lowered = str(key).lower()
        if not lowered:
            yield required(at)
            continue
        problems = formats.qualified_name(lowered)
        yield from (invalid(at, lowered, msg) for msg in problems)
        if not problems and len(lowered.split("/")) != 2:
            yield invalid(at, lowered, 'must be a domain-prefixed key (such as "acme.io/foo")')
    size = sum(len(str(k).encode()) + len(str(v).encode()) for k, v in mapping(annotations).items())
    if size > ANNOTATIONS_MAX_BYTES:
        yield too_long(at, ANNOTATIONS_MAX_BYTES)
