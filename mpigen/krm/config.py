"""The function's options: a `functionConfig` that sets render options for every job in the list.

Two shapes carry them, each keyed by the option table's flag names (mpigen.options.OPTION_TABLE: the
names of the `--<flag>` flags and the `mpigen.dev/<flag>` annotations), each value a string read by the
parser of that option's annotation (mpigen.inputs.annotations.parser):

- a `v1` `ConfigMap`, its `data`: what kpt makes of `kpt fn eval IMAGE -- target=jobset` and of a Kptfile
  pipeline's `configMap:` (kpt v1.0.0-beta.49 internal/fnruntime/utils.go: NewConfigMap, a ConfigMap named
  `function-input`);
- mpigen's own transformer config for kustomize, `mpigen.dev/v1` `Compile` (examples/kustomize/function),
  its `spec`.

The options are the starting point of every job's compile; a job's own `mpigen.dev/*` annotation wins
(mpigen.inputs.annotations.options_for applies the annotations over them). An unknown key, a value that
is not a string, a value the option's parser refuses, or an option set without the one it needs (as the
flags refuse `--scheduler-name` without `--gang-scheduler`) is a problem naming the key
(`data.tagret`), and the function then changes nothing. Any other `functionConfig` (a kind mpigen does
not know, an MPIJob, which is a generator's job) sets no option.
"""

from __future__ import annotations

from typing import Any

from mpigen.errors import Issue, shown
from mpigen.inputs.annotations import ANNOTATIONS, near_option
from mpigen.options import Options, unmet_needs
from mpigen.outcome import Finding, Outcome, krm_result

CONFIG_MAP = ("v1", "ConfigMap", "data")
COMPILE = ("mpigen.dev/v1", "Compile", "spec")
SHAPES = (CONFIG_MAP, COMPILE)


def options_field(config: Any) -> str | None:
    """The field that holds the options of a `functionConfig` of a known shape (`data`, `spec`); None for
    any other `functionConfig`."""
    if not isinstance(config, dict):
        return None
    return next(
        (
            field
            for api, kind, field in SHAPES
            if (config.get("apiVersion"), config.get("kind")) == (api, kind)
        ),
        None,
    )


def config_options(config: Any, outcome: Outcome) -> tuple[Options | None, list[dict[str, Any]]]:
    """For the function (mpigen.krm.protocol): the options a ConfigMap or `Compile` `config` sets (None: it
    is neither), or the error `results[]` naming each key it refuses (also added to
    `outcome`, for stderr)."""
    if options_field(config) is None:
        return None, []
    options, issues = function_options(config)
    meta = config.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    ref = {
        key: value
        for key, value in (
            ("apiVersion", config.get("apiVersion")),
            ("kind", config.get("kind")),
            ("name", name),
        )
        if isinstance(value, str) and value
    }
    for issue in issues:
        outcome.errors.append(
            Finding("functionConfig", None, ref.get("kind", ""), ref.get("name", ""), issue)
        )
    return options, [krm_result(issue.message, "error", issue.path, ref) for issue in issues]


def function_options(config: Any) -> tuple[Options, list[Issue]]:
    """The options a `functionConfig` sets over the defaults, and the problems found in it (each with the
    path of its key in the config)."""
    field = options_field(config)
    given = config.get(field) if field is not None else None
    if field is None or given is None:
        return Options(), []
    if not isinstance(given, dict):
        return Options(), [
            Issue((field,), f"expected a mapping of option names to values, got {_type(given)}")
        ]
    values: dict[str, Any] = {}
    issues: list[Issue] = []
    for key, value in given.items():
        path = (field, str(key))
        if key not in ANNOTATIONS:
            issues.append(Issue(path, _unknown(str(key), list(ANNOTATIONS))))
            continue
        if not isinstance(value, str):
            issues.append(Issue(path, f"expected a string (quote it: \"{key}: '...'\"), got {_type(value)}"))
            continue
        option, parse = ANNOTATIONS[key]
        try:
            values[option] = parse(value)
        except ValueError as exc:
            issues.append(Issue(path, str(exc)))
    for flag, needed in unmet_needs(values):
        issues.append(Issue((field, flag), f"needs {needed} (set {needed} in the same {field})"))
    if issues:
        return Options(), issues
    return Options().replace(**values), []


def _unknown(key: str, known: list[str]) -> str:
    return f"unknown mpigen option {shown(key)}{near_option(key)}; known options: {', '.join(sorted(known))}"


def _type(value: Any) -> str:
    return "null" if value is None else type(value).__name__
