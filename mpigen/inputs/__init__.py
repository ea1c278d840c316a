"""Input fronts: which (apiVersion, kind) pairs mpigen compiles, and the front that plans each.

A front is a module with `to_plan(document, options) -> JobPlan`. Fronts are imported only when a
document of theirs is compiled, so start-up stays cheap.
"""

from __future__ import annotations

import importlib
import re
from typing import TYPE_CHECKING, Any, Protocol

from mpigen import names
from mpigen.errors import Issue, shown
from mpigen.inputs import trainer_names
from mpigen.options import Options
from mpigen.plan import JobPlan, TrainPlan

if TYPE_CHECKING:
    from mpigen.inputs.trainjob import Runtimes


class Front(Protocol):
    def __call__(self, document: dict[str, Any], options: Options) -> JobPlan: ...


class TrainFront(Protocol):
    """A TrainJob's front: it plans the job with the runtime it names among the stream's runtimes
    (collected once per stream, mpigen.pipeline.collect_runtimes)."""

    def __call__(self, document: dict[str, Any], runtimes: Runtimes, options: Options) -> TrainPlan: ...


# (apiVersion, kind) -> module under mpigen.inputs. Add new input versions here.
FRONTS: dict[tuple[str, str], str] = {
    ("kubeflow.org/v1alpha1", "MPIJob"): "v1alpha1",
    ("kubeflow.org/v1alpha2", "MPIJob"): "v1alpha2",
    ("kubeflow.org/v1", "MPIJob"): "v1",
    ("kubeflow.org/v2beta1", "MPIJob"): "v2beta1",
}


# (apiVersion, kind) -> module under mpigen.inputs whose `to_plan(document, runtimes, options)` plans a
# TrainJob (Kubeflow Trainer), run on a target with the "trainjob" ability (mpigen.targets.CAPABILITIES).
TRAIN_FRONTS: dict[tuple[str, str], str] = {
    (trainer_names.TRAINER_API, trainer_names.TRAINJOB_KIND): "trainjob",
}


def supported() -> list[str]:
    return [f"{api_version} {kind}" for api_version, kind in FRONTS]


KIND = "MPIJob"
# The other kinds of kubeflow.org that mpigen passes through; one written in another case (`TfJob`) is a
# near-miss kubectl would refuse with "no matches for kind", so mpigen names the kind meant instead.
KUBEFLOW_KINDS = ("TFJob", "PyTorchJob", "MXJob", "XGBoostJob", "PaddleJob", "JAXJob", "Notebook")
_KUBEFLOW_KIND_BY_LOWER = {kind.lower(): kind for kind in KUBEFLOW_KINDS}


def claims(document: dict[str, Any]) -> bool:
    """Whether mpigen takes the document: an MPIJob it compiles, or a near-miss it must refuse rather
    than pass through (kubectl would apply it as a custom resource no controller reads).

    Near-misses: a kind that is MPIJob in any case with any apiVersion (or none), an apiVersion
    that looks like Kubeflow's (`kubeflow/v1alpha2`, `Kubeflow.org/v1`) but is not `kubeflow.org/<v>`,
    and another Kubeflow kind in the wrong case (`TfJob`) under a Kubeflow-like apiVersion.
    Every other document passes through, other kubeflow.org kinds (TFJob, PyTorchJob, Notebook) too,
    and another project's MPIJob (`foreign_mpijob`).
    """
    kind, api_version = document.get("kind"), document.get("apiVersion")
    if isinstance(kind, str) and kind.lower() == KIND.lower() and not foreign_mpijob(document):
        return True
    if is_trainer(document):
        return True
    if not isinstance(api_version, str) or not _looks_like_kubeflow(api_version):
        return False
    return not _is_kubeflow(api_version) or _miscased_kubeflow_kind(kind) is not None


# How close (difflib's ratio) an API group may come to kubeflow.org and still be another project's.
_NEAR_GROUP = 0.75


def foreign_mpijob(document: dict[str, Any]) -> bool:
    """Kind MPIJob in an API group unrelated to Kubeflow's (`mpi.example.com/v1`): another project's
    custom resource, which kubectl and kustomize apply as they find it, so mpigen passes it through
    (with `foreign_warning`). A group that names Kubeflow or nearly spells kubeflow.org (`kubeflow.og`,
    `kubefow.org`), a group without a dot (no CRD's group has none) or no group at all is a near-miss
    of Kubeflow's and stays an error."""
    kind, api_version = document.get("kind"), document.get("apiVersion")
    if not (isinstance(kind, str) and kind.lower() == KIND.lower() and isinstance(api_version, str)):
        return False
    group = api_version.strip().rpartition("/")[0].lower()
    if "." not in group or "kubeflow" in group:
        return False
    # deferred: difflib only for an MPIJob of a group outside kubeflow, to tell a near miss from another
    # project's
    import difflib

    return difflib.SequenceMatcher(None, group, names.GROUP).ratio() < _NEAR_GROUP


def foreign_warning(document: dict[str, Any]) -> Issue:
    """The warning for a passed-through `foreign_mpijob`."""
    group = str(document.get("apiVersion")).rpartition("/")[0]
    message = (
        f"{shown(group)} is not Kubeflow's API group ({names.GROUP}): this MPIJob is passed through "
        "unchanged, not compiled"
    )
    return Issue(("apiVersion",), message, "warning")


def _miscased_kubeflow_kind(kind: object) -> str | None:
    """The Kubeflow kind (not MPIJob) that `kind` writes in another case, if it does."""
    meant = _KUBEFLOW_KIND_BY_LOWER.get(kind.lower()) if isinstance(kind, str) else None
    return meant if meant is not None and meant != kind else None


TRAINER_KINDS = (trainer_names.TRAINJOB_KIND, *trainer_names.RUNTIME_KINDS)


def is_trainer(document: dict[str, Any]) -> bool:
    """A Kubeflow Trainer TrainJob or runtime (any version of the group: only v1alpha1 is compiled)."""
    api_version, kind = document.get("apiVersion"), document.get("kind")
    return (
        isinstance(api_version, str)
        and api_version.partition("/")[0] == trainer_names.TRAINER_GROUP
        and kind in TRAINER_KINDS
    )


def _is_kubeflow(api_version: str) -> bool:
    group, slash, version = api_version.partition("/")
    return group == names.GROUP and bool(slash) and bool(version) and "/" not in version


def _looks_like_kubeflow(api_version: str) -> bool:
    return api_version.strip().lower().startswith("kubeflow")


def near_miss_issues(document: dict[str, Any]) -> list[Issue]:
    """Why a claimed document is not an MPIJob mpigen compiles, each with a "did you mean"."""
    kind, api_version = document.get("kind"), document.get("apiVersion")
    *rest, last = api_versions()
    wanted = f"{', '.join(rest)} and {last}" if rest else last
    issues = []
    is_mpijob = isinstance(kind, str) and kind.lower() == KIND.lower()
    meant = KIND if is_mpijob else _miscased_kubeflow_kind(kind)
    if meant is not None and kind != meant:
        issues.append(Issue(("kind",), f'unknown kind {shown(str(kind))} (did you mean "{meant}"?)'))
    if not isinstance(api_version, str) or not api_version:
        what = "missing" if api_version is None else f"expected a string, got {_what(api_version)}"
        issues.append(
            Issue(("apiVersion",), f'{what} (did you mean "{_suggest_api_version("", is_mpijob)}"?)')
        )
    elif not _is_kubeflow(api_version):
        suggestion = _suggest_api_version(api_version, is_mpijob)
        issues.append(
            Issue(
                ("apiVersion",),
                f'{shown(api_version)} is not a Kubeflow apiVersion (did you mean "{suggestion}"?)',
            )
        )
    elif is_mpijob and (api_version, KIND) not in FRONTS:
        issues.append(
            Issue(
                ("apiVersion",),
                f"unsupported apiVersion {shown(api_version)} for {KIND}; mpigen compiles {wanted}",
            )
        )
    return issues


def _suggest_api_version(api_version: str, is_mpijob: bool) -> str:
    """`kubeflow.org/` with the version the user wrote, if any: for an MPIJob, one mpigen compiles."""
    version = api_version.strip().rpartition("/")[2].lower()
    candidate = f"{names.GROUP}/{version}"
    if not is_mpijob:
        return candidate if re.fullmatch(_VERSION, version) else f"{names.GROUP}/v1"
    return candidate if (candidate, KIND) in FRONTS else api_versions()[-1]


def _what(value: object) -> str:
    if isinstance(value, (dict, list)):
        return "a mapping" if isinstance(value, dict) else "a list"
    return (
        "a boolean"
        if isinstance(value, bool)
        else f"a {type(value).__name__}"
        if value is not None
        else "null"
    )


def front_for(document: dict[str, Any]) -> Front | None:
    key = (document.get("apiVersion"), document.get("kind"))
    if not all(isinstance(part, str) for part in key):
        return None  # a list or a mapping where a string belongs: the near-miss check says what
    module = FRONTS.get(key)  # type: ignore[arg-type]
    if module is None:
        return None
    to_plan: Front = importlib.import_module(f"mpigen.inputs.{module}").to_plan
    return to_plan


def train_front_for(document: dict[str, Any]) -> TrainFront | None:
    """The front of a TrainJob mpigen compiles (TRAIN_FRONTS), or None."""
    key = (document.get("apiVersion"), document.get("kind"))
    module = TRAIN_FRONTS.get(key) if all(isinstance(part, str) for part in key) else None  # type: ignore[arg-type]
    if module is None:
        return None
    to_plan: TrainFront = importlib.import_module(f"mpigen.inputs.{module}").to_plan
    return to_plan


_VERSION = r"v(\d+)(?:(alpha|beta)(\d+))?"
# Kubernetes orders versions GA > beta > alpha, then by number (apimachinery version priority).
_STABILITY = {"alpha": 0, "beta": 1, None: 2}


def schema_file(api_version: str, kind: str) -> str:
    """The name of the schema file of one input front: `mpijob-kubeflow-v1alpha2.json`."""
    group, _, version = api_version.partition("/")
    return f"{kind.lower()}-{group.split('.')[0]}-{version}.json"


def api_versions() -> list[str]:
    """Every MPIJob apiVersion mpigen compiles, oldest first."""
    return sorted({version for version, kind in FRONTS if kind == "MPIJob"}, key=_version_order)


def _version_order(api_version: str) -> tuple[int, int, int]:
    match = re.fullmatch(_VERSION, api_version.partition("/")[2])
    if match is None:
        return (0, 0, 0)
    return (int(match[1]), _STABILITY[match[2]], int(match[3] or 0))
