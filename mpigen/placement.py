"""Placement: where a job's ranks run, as `--topology` (annotation `mpigen.dev/topology`) says it.

One value, one meaning on every target; each target turns it into its scheduler's own words (the
operator target: pod affinity for kube-scheduler; the jobset target: Kueue's topology-aware scheduling
annotations; the volcano target: the Volcano Job's `networkTopology`). The grammar:

    required:<node-label-key>         every pod of the job, launcher and workers, in one domain of the
                                      label (one value of it), or the job does not start
    preferred:<node-label-key>        as few domains of the label as the scheduler can find
    slice:<node-label-key>:<size>     the workers in groups of <size> consecutive ranks, each group in one
                                      domain of the label (Kueue's podset-slice-required-topology and
                                      podset-slice-size; only a target that can say it takes it)

A node-label key is a Kubernetes qualified name (apimachinery `validation.IsQualifiedName`, which Kueue
v0.19.2 `pkg/controller/jobframework/tas_validation.go` applies to its topology annotations through
`ValidateLabelName`): an optional DNS-subdomain prefix and `/`, then a name of at most 63 characters.
This module is vocabulary: no target, no I/O.
"""

from __future__ import annotations

import re

from mpigen.errors import shown
from mpigen.records import Record

REQUIRED = "required"
PREFERRED = "preferred"
SLICE = "slice"
MODES = (REQUIRED, PREFERRED, SLICE)
GRAMMAR = "required:<node-label-key>, preferred:<node-label-key> or slice:<node-label-key>:<size>"

# apimachinery pkg/util/validation/validation.go: qualifiedNameFmt, qualifiedNameMaxLength, and the
# prefix's IsDNS1123Subdomain.
# Patterns as strings (re caches what it compiles): importing this module compiles nothing, so a render
# without --topology pays nothing for it.
_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z"
_NAME_MAX = 63
_PREFIX = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z"
_PREFIX_MAX = 253
_DIGITS = r"[0-9]+\Z"
# Kueue parses podset-slice-size as a 32-bit integer (tas_validation.go: validateSliceSizeAnnotation).
MAX_SLICE_SIZE = 2**31 - 1


class Placement(Record):
    """A parsed `--topology`: the mode, the node-label key, and for `slice` the ranks per domain."""

    mode: str
    key: str
    size: int = 0

    def __str__(self) -> str:
        return f"{self.mode}:{self.key}" + (f":{self.size}" if self.mode == SLICE else "")


def label_key_problem(key: str) -> str:
    """Why `key` is not a Kubernetes label key ("" when it is one)."""
    prefix, slash, name = key.rpartition("/")
    if slash and not prefix:
        return "its prefix before '/' is empty"
    if slash and (len(prefix) > _PREFIX_MAX or not re.match(_PREFIX, prefix)):
        return f"its prefix before '/' must be a DNS subdomain (lower-case letters, digits, '-' and '.', at most {_PREFIX_MAX} characters)"
    if not name:
        return "its name is empty"
    if len(name) > _NAME_MAX:
        return f"its name must be at most {_NAME_MAX} characters"
    if "/" in prefix or not re.match(_NAME, name):
        return "its name must consist of letters, digits, '-', '_' or '.', and begin and end with a letter or digit"
    return ""


def parse(value: str) -> Placement:
    """The placement `value` says; ValueError saying what is wrong with it."""
    mode, _, rest = value.partition(":")
    if mode not in MODES or not rest:
        raise ValueError(f"must be {GRAMMAR}; got {shown(value)}")
    key, size = rest, 0
    if mode == SLICE:
        key, _, count = rest.rpartition(":")
        if not key or not re.match(_DIGITS, count) or not 1 <= int(count) <= MAX_SLICE_SIZE:
            raise ValueError(
                f"slice takes a node-label key and the ranks per domain, a whole number from 1 to {MAX_SLICE_SIZE} (slice:<node-label-key>:<size>); got {shown(value)}"
            )
        size = int(count)
    problem = label_key_problem(key)
    if problem:
        raise ValueError(f"{shown(key)} is not a valid node-label key: {problem}; got {shown(value)}")
    return Placement(mode=mode, key=key, size=size)


def placement(topology: str | None) -> Placement | None:
    """The placement of an `Options.topology` already checked by `parse` (None: none asked)."""
    return None if topology is None else parse(topology)
