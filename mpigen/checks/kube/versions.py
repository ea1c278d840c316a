"""Kubernetes versions: the minor versions with strict schemas installed, and parsing a user's version.

Listing the installed schemas reads a directory, so it happens on first use (cached), never at import:
`SUPPORTED_KUBE_VERSIONS` and `DEFAULT_KUBE_VERSION` are computed when first asked for.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from mpigen.checks.kube.schemas import supported_versions

_KUBE_VERSION = r"v?(\d+)\.(\d+)(?:\.\d+)?"


@functools.cache
def supported_kube_versions() -> tuple[str, ...]:
    """The Kubernetes minor versions ("1.25", ...) with strict schemas installed, oldest first."""
    return supported_versions()


def default_kube_version() -> str:
    """The newest Kubernetes version with schemas installed: what `--kube-version` defaults to."""
    return supported_kube_versions()[-1]


def parse_kube_version(text: str) -> str:
    """Normalise "1.30", "v1.30" or "1.30.2" to "1.30"; refuse versions without shipped schemas."""
    match = re.fullmatch(_KUBE_VERSION, text.strip())
    version = f"{int(match[1])}.{int(match[2])}" if match else None
    supported = supported_kube_versions()
    if version not in supported:
        shown = f"{supported[0]} to {supported[-1]}"
        raise ValueError(f'unsupported Kubernetes version {text!r}: expected {shown}, like "1.30"')
    return version


def __getattr__(name: str) -> Any:
    # PEP 562: the constants, computed on first use rather than when the module is imported.
    if name == "SUPPORTED_KUBE_VERSIONS":
        return supported_kube_versions()
    if name == "DEFAULT_KUBE_VERSION":
        return default_kube_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
