"""Argo CD's plugin environment: the render options of mpigen's Config Management Plugin, read from the
variables Argo CD's repo-server gives the plugin's commands, and the parameter announcements its UI shows;
both made from the one option table (mpigen.options), under the flags' names.

What the repo-server passes (argo-cd v3.5.0 reposerver/repository/repository.go: newEnv, getPluginEnvs;
pkg/apis/application/v1alpha1/types.go: ApplicationSourcePluginParameters.Environ):
- `ARGOCD_APP_NAMESPACE`: the Application's destination namespace;
- `KUBE_VERSION`: the destination cluster's version as `k8s.io/apimachinery` version.ParseGeneric prints
  it ("1.30.2"), empty when unknown;
- `ARGOCD_APP_PARAMETERS`: the Application's `spec.source.plugin.parameters`, only those set, as JSON
  (`[{"name": "target", "string": "jobset"}]`; `null` with none); present whenever the Application has a
  `plugin` section;
- `PARAM_<NAME>`: each string parameter again, its name upper-cased and every character outside
  `[A-Z0-9_]` made `_` (`gang-scheduler` is `PARAM_GANG_SCHEDULER`); arrays and maps as `PARAM_<NAME>_<i>`
  and `PARAM_<NAME>_<KEY>`.

Which wins: a parameter, then `ARGOCD_APP_NAMESPACE` and `KUBE_VERSION`; a job's own `mpigen.dev/*`
annotation wins over all of them (mpigen.inputs.annotations). The `PARAM_*` variables are read only
where `ARGOCD_APP_PARAMETERS` is absent (a command run by hand), since Argo CD derives them from it. An
empty string is as if the parameter were not set, as Argo CD's UI may send one. Every problem names the
variable and the parameter: a plugin's stderr is what Argo CD shows for a failed generation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from mpigen.checks.kube.versions import parse_kube_version, supported_kube_versions
from mpigen.errors import shown
from mpigen.inputs.annotations import near_option, parser
from mpigen.options import OPTION_TABLE, Options, OptionSpec, unmet_needs

PARAMETERS_VAR = "ARGOCD_APP_PARAMETERS"
PARAM_PREFIX = "PARAM_"
NAMESPACE_VAR = "ARGOCD_APP_NAMESPACE"
KUBE_VERSION_VAR = "KUBE_VERSION"

_SPECS = {spec.flag: spec for spec in OPTION_TABLE}
_DEFAULTS = Options()


def param_variable(name: str) -> str:
    """The variable Argo CD gives a string parameter (v1alpha1 types.go: escaped)."""
    return PARAM_PREFIX + re.sub(r"[^A-Z0-9_]", "_", name.upper())


_BY_VARIABLE = {param_variable(flag): flag for flag in _SPECS}


def _unknown(name: str) -> str:
    return f"parameter {shown(name)}: unknown mpigen option{near_option(name)}; known: {', '.join(_SPECS)}"


def _given_parameters(environ: Mapping[str, str]) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """{option flag: (where it came from, its text)} of the parameters set, and the problems found."""
    if PARAMETERS_VAR in environ:
        return _json_parameters(environ[PARAMETERS_VAR])
    given: dict[str, tuple[str, str]] = {}
    problems = []
    for variable in sorted(name for name in environ if name.startswith(PARAM_PREFIX)):
        flag = _BY_VARIABLE.get(variable)
        if flag is None:
            problems.append(f"{variable}: no mpigen option is named so; known: {', '.join(_BY_VARIABLE)}")
        else:
            given[flag] = (variable, environ[variable])
    return given, problems


def _json_parameters(text: str) -> tuple[dict[str, tuple[str, str]], list[str]]:
    try:
        entries = json.loads(text)
    except ValueError as exc:
        return {}, [f"{PARAMETERS_VAR}: not JSON ({exc})"]
    if entries is None:
        return {}, []
    if not isinstance(entries, list):
        return {}, [f"{PARAMETERS_VAR}: expected a JSON list of parameters, got {type(entries).__name__}"]
    given: dict[str, tuple[str, str]] = {}
    problems = []
    for entry in entries:
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str):
            problems.append(f"{PARAMETERS_VAR}: a parameter without a name: {shown(json.dumps(entry))}")
            continue
        where = f"{PARAMETERS_VAR}: parameter {shown(name)}"
        if name not in _SPECS:
            problems.append(f"{PARAMETERS_VAR}: {_unknown(name)}")
        elif name in given:
            problems.append(f"{where}: given twice")
        elif "array" in entry or "map" in entry or not isinstance(entry.get("string", ""), str):
            kind = "an array" if "array" in entry else "a map" if "map" in entry else "a non-string"
            problems.append(f"{where}: takes a string, got {kind}")
        else:
            given[name] = (where, entry.get("string", ""))
    return given, problems


def _kube_version(text: str) -> tuple[str | None, list[str], list[str]]:
    """The version of the cluster's schemas: a cluster newer than the newest schemas shipped is checked
    against those, with a warning; one older than the oldest is refused (its API may lack what the
    output uses)."""
    try:
        return parse_kube_version(text), [], []
    except ValueError as exc:
        match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?", text.strip())
        supported = supported_kube_versions()
        newest = tuple(int(part) for part in supported[-1].split("."))
        if match and (int(match[1]), int(match[2])) > newest:
            warning = (
                f"{KUBE_VERSION_VAR}: {shown(text)} is newer than the newest Kubernetes schemas mpigen ships; "
                f"checked against {supported[-1]} (set the kube-version parameter to choose)"
            )
            return supported[-1], [], [warning]
        hint = "; set the kube-version parameter to check against another version"
        return None, [f"{KUBE_VERSION_VAR}: {exc}{hint}"], []


def options_from_environment(environ: Mapping[str, str]) -> tuple[Options, list[str], list[str]]:
    """The options Argo CD's environment sets, the problems found in it (each naming its variable and
    parameter), and warnings."""
    found, problems = _given_parameters(environ)
    given = {flag: value for flag, value in found.items() if value[1] != ""}  # "": as if not set
    warnings: list[str] = []
    values: dict[str, Any] = {}
    for flag, (where, text) in given.items():
        spec = _SPECS[flag]
        try:
            values[spec.field] = parser(spec)(text)
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
    if "namespace" not in given and environ.get(NAMESPACE_VAR):
        try:
            values["namespace"] = parser(_SPECS["namespace"])(environ[NAMESPACE_VAR])
        except ValueError as exc:
            problems.append(f"{NAMESPACE_VAR}: {exc}")
    if "kube-version" not in given and environ.get(KUBE_VERSION_VAR):
        version, refused, warned = _kube_version(environ[KUBE_VERSION_VAR])
        problems += refused
        warnings += warned
        if version is not None:
            values["kube_version"] = version
    for flag, needed in unmet_needs(values):
        problems.append(f"parameter {shown(flag)} needs the parameter {shown(needed)}")
    return _DEFAULTS.replace(**values), problems, warnings


# Parameter announcements ----------------------------------------------------------------------------


def _default_text(spec: OptionSpec) -> str | None:
    """The option's default as the parameter's text, or None where the default is no value."""
    value = getattr(_DEFAULTS, spec.field)
    if spec.kind == "switch":
        return "true" if value else "false"
    return None if value is None else str(value)


# Where the plugin's default differs from the flag's: what Argo CD gives it.
_PLUGIN_DEFAULTS = {
    "namespace": f"default: the Application's destination namespace ({NAMESPACE_VAR})",
    "kube-version": f"default: the destination cluster's version ({KUBE_VERSION_VAR})",
}


def announcements() -> list[dict[str, Any]]:
    """The parameters the plugin announces to Argo CD's UI (reposerver/apiclient ParameterAnnouncement:
    name, title, tooltip, string), one per option, in the option table's order."""
    out = []
    for spec in OPTION_TABLE:
        tooltip = spec.help
        if spec.choices:
            tooltip += f" One of: {', '.join(spec.choices)}."
        if spec.kind == "switch":
            tooltip = f'{spec.summary} "true" or "false".'
        if spec.flag in _PLUGIN_DEFAULTS:
            tooltip += f" Plugin {_PLUGIN_DEFAULTS[spec.flag]}."
        entry: dict[str, Any] = {"name": spec.flag, "title": spec.summary, "tooltip": tooltip}
        default = _default_text(spec)
        if default is not None:
            entry["string"] = default
        out.append(entry)
    return out


# Discovery ------------------------------------------------------------------------------------------

# `kind: MPIJob` or `kind: TrainJob` in any case, in block or flow YAML or JSON, as
# mpigen.yaml.load.may_hold_mpijob looks for an MPIJob.
_JOB_KIND = re.compile(r"""(?i)\bkind['"]?\s*:\s*['"]?(mpijob|trainjob)\b""")


def names_a_job(text: str) -> bool:
    """Whether a file's text names an MPIJob or TrainJob kind: the plugin's discovery. A file that names
    one but is broken is picked too, so that generation says what is wrong with it rather than Argo CD
    passing the directory over in silence."""
    return _JOB_KIND.search(text) is not None
