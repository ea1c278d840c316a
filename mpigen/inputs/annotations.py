"""Per-job options: every render option can also be set on the MPIJob itself, as an annotation.

This is how options reach mpigen inside kustomize (the KRM function and the legacy exec plugin get
the job and nothing else), and it works the same through `mpigen render` and the Python API, so one
input gives the same objects on every path. Keys are the command-line flag names under the
`mpigen.dev/` prefix; a job's annotation takes precedence over the command-line flag or `Options`:

    metadata:
      annotations:
        mpigen.dev/gang-scheduler: volcano
        mpigen.dev/kube-version: "1.30"

The annotations configure the compile; they are not copied to the generated objects. An unknown
`mpigen.dev/` key is an error (a typo must not be ignored silently), as is a value the flag refuses.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from mpigen.checks.kube.versions import parse_kube_version
from mpigen.errors import Issue, shown
from mpigen.names import DNS1123_LABEL_MAX, DNS1123_SUBDOMAIN_MAX, is_dns1123_label, is_dns1123_subdomain
from mpigen.options import (
    DEFAULT_KUBECTL_DELIVERY_IMAGE,
    MAX_COUNT,
    OPTION_TABLE,
    Options,
    OptionSpec,
    off_target,
    unmet_needs,
)
from mpigen.placement import parse

PREFIX = "mpigen.dev/"


def _quoted(value: str) -> str:
    """A value in a one-line message: quoted, with newlines and control characters escaped, shortened."""
    return shown(value)


_DIGITS = r"[0-9]+\Z"  # ASCII digits only: str.isdigit() also takes "٣" and "²"


def whole_number(high: int) -> Callable[[str], int]:
    """A parser of whole numbers from 1 to `high`, written in ASCII digits (an annotation, a flag)."""

    def parse(value: str) -> int:
        if not re.match(_DIGITS, value) or not value.strip("0"):
            raise ValueError(f"expected a whole number >= 1, got {_quoted(value)}")
        if len(value.lstrip("0")) > len(str(high)) or int(value) > high:
            raise ValueError(f"must be at most {high}, got {value}")
        return int(value)

    return parse


def _choice(*choices: str) -> Callable[[str], str]:
    def parse(value: str) -> str:
        if value not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}; got {_quoted(value)}")
        return value

    return parse


_IMAGE = r"[!-~]+\Z"  # printable ASCII, no spaces: what an image reference can hold


def _image(value: str) -> str:
    if not re.match(_IMAGE, value):
        raise ValueError(
            f'must be a container image reference (no spaces, newlines or control characters), like "{DEFAULT_KUBECTL_DELIVERY_IMAGE}"; got {_quoted(value)}'
        )
    return value


def _dns_subdomain(value: str) -> str:
    if not is_dns1123_subdomain(value):
        raise ValueError(
            f"must be a DNS subdomain (lower-case letters, digits, '-' and '.', at most {DNS1123_SUBDOMAIN_MAX} characters), as the API server requires of such names; got {_quoted(value)}"
        )
    return value


def _dns_label(value: str) -> str:
    if not is_dns1123_label(value):
        raise ValueError(
            f"must be a DNS label (lower-case letters, digits and '-', at most {DNS1123_LABEL_MAX} characters), as a label value and the object it names require; got {_quoted(value)}"
        )
    return value


def _namespace(value: str) -> str:
    if not is_dns1123_label(value):
        raise ValueError(f"{_quoted(value)} is not a valid namespace (DNS-1123 label)")
    return value


def _kube_version(value: str) -> str:
    return parse_kube_version(value)


def _topology(value: str) -> str:
    return str(parse(value))


def _boolean(value: str) -> bool:
    if value not in ("true", "false"):
        raise ValueError(f'must be "true" or "false"; got {_quoted(value)}')
    return value == "true"


# The parser of each kind of value (mpigen.options.ValueKind); a choice's is made from its choices.
PARSERS: dict[str, Callable[[str], Any]] = {
    "count": whole_number(MAX_COUNT),
    "image": _image,
    "dns-label": _dns_label,
    "dns-subdomain": _dns_subdomain,
    "namespace": _namespace,
    "kube-version": _kube_version,
    "switch": _boolean,
    "topology": _topology,
}


def parser(spec: OptionSpec) -> Callable[[str], Any]:
    """The parser of one option's value, as an annotation and as a flag take it: the one place a
    value's kind picks its parser."""
    return _choice(*spec.choices) if spec.kind == "choice" else PARSERS[spec.kind]


# annotation key (after the prefix) -> (Options field, parser), from mpigen.options.OPTION_TABLE.
ANNOTATIONS: dict[str, tuple[str, Callable[[str], Any]]] = {
    spec.flag: (spec.field, parser(spec)) for spec in OPTION_TABLE
}


def annotation_paths(job: dict[str, Any]) -> dict[str, Any]:
    meta = job.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    if not isinstance(annotations, dict):
        return {}
    return {
        key: value for key, value in annotations.items() if isinstance(key, str) and key.startswith(PREFIX)
    }


def given_option_issues(options: Options) -> list[Issue]:
    """The values of `options` (as the Python API may give them, unparsed) that their flag and annotation
    would refuse, each checked by the same parser."""
    issues: list[Issue] = []
    for spec in OPTION_TABLE:
        value = getattr(options, spec.field)
        if value is None or spec.kind == "switch" or value == getattr(_DEFAULT_OPTIONS, spec.field):
            continue
        _, parse = ANNOTATIONS[spec.flag]
        try:
            parse(str(value))
        except ValueError as exc:
            issues.append(Issue((), f"option {spec.flag} (--{spec.flag}): {exc}"))
    return issues


_DEFAULT_OPTIONS = Options()


def near_option(name: str, prefix: str = "") -> str:
    """The "did you mean" of an unknown option name (an annotation's, a functionConfig key, an Argo CD
    parameter): ` (did you mean "<prefix><option>"?)`, or "" when no option is close."""
    import difflib  # deferred: only for the hint of an unknown option, not on a valid job's path

    close = difflib.get_close_matches(name, list(ANNOTATIONS), n=1)
    return f' (did you mean "{prefix}{close[0]}"?)' if close else ""


def options_for(job: dict[str, Any], options: Options) -> tuple[Options, list[Issue]]:
    """`options` with the job's `mpigen.dev/*` annotations applied, and the problems found in them and in
    the values `options` holds."""
    found = annotation_paths(job)
    if not found:
        return options, given_option_issues(options) + _off_target_issues(options)
    changes: dict[str, Any] = {}
    issues: list[Issue] = []
    for key in sorted(found):
        path = ("metadata", "annotations", key)
        short = key[len(PREFIX) :]
        if short not in ANNOTATIONS:
            hint = near_option(short, PREFIX)
            known = ", ".join(sorted(ANNOTATIONS))
            issues.append(Issue(path, f'unknown mpigen option "{key}"{hint}; known options: {known}'))
            continue
        field, parse = ANNOTATIONS[short]
        value = found[key]
        if not isinstance(value, str):
            continue  # the job's metadata check reports it: annotation values are strings
        try:
            changes[field] = parse(value)
        except ValueError as exc:
            issues.append(Issue(path, str(exc)))
    merged = options.replace(**changes)
    for flag, needed in unmet_needs({spec.field: getattr(merged, spec.field) for spec in OPTION_TABLE}):
        issues.append(
            Issue(("metadata", "annotations", PREFIX + flag), f"needs {PREFIX}{needed} (or --{needed})")
        )
    issues += given_option_issues(options.replace(**{field: getattr(Options(), field) for field in changes}))
    return merged, issues + _off_target_issues(merged)


def _off_target_issues(options: Options) -> list[Issue]:
    """An option the job's target has no use for: refused, saying why (the message names the flag and the
    annotation: one problem, the same words whichever of them set it)."""
    issues = []
    for spec in off_target({field.field: getattr(options, field.field) for field in OPTION_TABLE}):
        message = f"--{spec.flag} ({PREFIX}{spec.flag}) is refused on the {options.target} target: {spec.off_target}"
        issues.append(Issue((), message))
    return issues
