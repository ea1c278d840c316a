"""What the MPIJob differential tests share: one job compiled by mpigen and run by its operator's own
controller (operator_oracle.py), paired object by object, and the departures taken back out one by one.

A `Pair` holds both sides keyed by (kind, name). A departure is a function `(pair) -> bool` that takes one
documented difference (a numbered row of docs/departures.md) out of mpigen's side, or of the operator's,
asserting that it is exactly what the row says, and returns whether the job showed it. Once every
departure is taken out, both sides must be equal, field by field (`assert_equal` names the first
differing field paths).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import operator_oracle
import yaml

from golden import RENDER_ONLY, annotated, option_annotations
from mpigen.compiler import compile_job
from mpigen.options import Options

Obj = dict[str, Any]
Key = tuple[str, str]
ROOT = Path(__file__).resolve().parents[2]
DEPARTURES = ROOT / "docs" / "departures.md"
MPIGEN_LABELS = (
    "app.kubernetes.io/name",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/component",
    "app.kubernetes.io/managed-by",
)


@dataclass
class Pair:
    """One job, both sides. `ours` and `theirs` are edited in place by the departures."""

    job: Obj
    options: Options
    ours: dict[Key, Obj]
    theirs: dict[Key, Obj]
    warnings: list[str] = field(default_factory=list)
    # mpigen's objects of a group the oracle's pinned k8s.io/api lacks (scheduling.k8s.io/v1beta1), and
    # the pod templates' spec.schedulingGroup (object key -> value): kept out of `--canonical`, which
    # would refuse the kinds and drop the field; a departure must take each out (`compare` checks).
    unstored: dict[Key, Obj] = field(default_factory=dict)
    scheduling_groups: dict[Key, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return str(self.job["metadata"]["name"])

    @property
    def spec(self) -> Obj:
        spec: Obj = self.job["spec"]
        return spec

    def of_kind(self, side: dict[Key, Obj], kind: str) -> list[Obj]:
        return [obj for (k, _), obj in sorted(side.items()) if k == kind]


def oracle_flags(api_version: str, options: Options) -> tuple[str | None, tuple[str, ...]]:
    """The operator's flags for mpigen's options: its gang scheduler, (v2beta1) cluster domain and
    (v1alpha2) kubectl-delivery image."""
    gang = None
    if options.gang_scheduler and options.gang_scheduler != "kubernetes":  # Kubernetes' own: no flag
        gang = "volcano" if options.gang_scheduler == "volcano" else options.effective_scheduler_name
    extra: tuple[str, ...] = ()
    if options.cluster_domain and api_version.endswith("v2beta1"):
        extra = ("--cluster-domain", options.cluster_domain)
    if options.kubectl_delivery_image and api_version.endswith("v1alpha2"):
        extra = ("--kubectl-delivery-image", options.kubectl_delivery_image)
    return gang, extra


def pair(job: Obj, options: Options | None = None) -> Pair:
    """mpigen's objects for `job` and its operator's."""
    compiled = compile_job(copy.deepcopy(job), options)
    assert compiled.options is not None
    gang, extra = oracle_flags(job["apiVersion"], compiled.options)
    theirs_job = without_mpigen_annotations(job)
    if compiled.options.namespace and "namespace" not in theirs_job["metadata"]:
        theirs_job["metadata"]["namespace"] = compiled.options.namespace  # as `kubectl apply -n` would
    theirs = operator_oracle.run(job["apiVersion"], theirs_job, gang, extra)
    objects = copy.deepcopy(compiled.objects)
    unstored = [o for o in objects if o["apiVersion"] in UNSTORED_GROUPS]
    groups = {
        key(o): spec.pop("schedulingGroup")
        for o in objects
        for spec in pod_specs(o)
        if "schedulingGroup" in spec
    }
    stored = [o for o in objects if o["apiVersion"] not in UNSTORED_GROUPS]
    return Pair(
        job=job,
        options=compiled.options,
        ours={key(o): without_noise(o) for o in operator_oracle.as_stored(job["apiVersion"], stored)},
        theirs={key(o): without_noise(o) for o in theirs},
        warnings=[w.message for w in compiled.warnings],
        unstored={key(o): without_noise(o) for o in unstored},
        scheduling_groups=groups,
    )


# The apiVersions the oracles' pinned k8s.io/api (v2beta1 v0.35.6, v1 v0.31.3) has no Go types for.
UNSTORED_GROUPS = frozenset({"scheduling.k8s.io/v1beta1"})


def without_mpigen_annotations(job: Obj) -> Obj:
    """The job as the operator gets it: mpigen's own `mpigen.dev/*` options are not the operator's."""
    job = copy.deepcopy(job)
    annotations = job.get("metadata", {}).get("annotations")
    if isinstance(annotations, dict):
        kept = {k: v for k, v in annotations.items() if not k.startswith("mpigen.dev/")}
        if kept:
            job["metadata"]["annotations"] = kept
        else:
            del job["metadata"]["annotations"]
    return job


def key(obj: Obj) -> Key:
    return (obj["kind"], obj["metadata"]["name"])


def without_noise(value: Any, parent: str = "") -> Any:
    """Both sides in one spelling, as the API server stores them: empty lists and maps (`args: []`, the
    typed conversion's `resources: {}`) and `uid: ""` dropped; quantities as strings (`cpu: 1` is
    stored as "1")."""
    if isinstance(value, list):
        return [without_noise(item, parent) for item in value]
    if not isinstance(value, dict):
        if parent in QUANTITY_MAPS and isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        return value
    return {
        k: without_noise(v, k if isinstance(v, dict) else parent)
        for k, v in value.items()
        if v not in ({}, []) and not (k == "uid" and v == "")
    }


Departure = Callable[[Pair], bool]
QUANTITY_MAPS = frozenset({"limits", "requests", "minResources", "capacity"})


# --- helpers for the departures ----------------------------------------------------------------------


def get(obj: Any, *path: str | int) -> Any:
    for step in path:
        if (
            isinstance(obj, dict)
            and step in obj
            or isinstance(obj, list)
            and isinstance(step, int)
            and step < len(obj)
        ):
            obj = obj[step]
        else:
            return None
    return obj


def pop(obj: Obj, *path: str) -> Any:
    """Remove a field (and the mappings it leaves empty); its value."""
    parent = get(obj, *path[:-1])
    value = parent.pop(path[-1])
    if not parent and len(path) > 1:
        pop(obj, *path[:-1])
    return value


def pod_specs(obj: Obj) -> Iterator[Obj]:
    """The pod specs of an object: a Pod's own, a Job's or StatefulSet's template."""
    if obj["kind"] == "Pod":
        yield obj["spec"]
    elif obj["kind"] in ("Job", "StatefulSet"):
        yield obj["spec"]["template"]["spec"]


def metadatas(obj: Obj) -> Iterator[Obj]:
    """An object's metadata and its pod template's."""
    yield obj["metadata"]
    template = get(obj, "spec", "template", "metadata")
    if obj["kind"] in ("Job", "StatefulSet") and template is not None:
        yield template


def take(side: dict[Key, Obj], kind: str, name: str) -> Obj:
    """Remove one object, which must be there."""
    assert (kind, name) in side, f"{kind}/{name} missing: {sorted(side)}"
    return side.pop((kind, name))


def assert_equal(pair_: Pair) -> None:
    """Both sides equal once the departures are out; else the differing field paths."""
    assert not pair_.unstored, f"objects only mpigen renders: {sorted(pair_.unstored)}"
    assert not pair_.scheduling_groups, (
        f"spec.schedulingGroup only mpigen sets: {sorted(pair_.scheduling_groups)}"
    )
    assert sorted(pair_.ours) == sorted(pair_.theirs), (
        f"objects only mpigen renders: {sorted(set(pair_.ours) - set(pair_.theirs))}; "
        f"only the operator creates: {sorted(set(pair_.theirs) - set(pair_.ours))}"
    )
    problems = [
        f"{k[0]}/{k[1]} {path}: mpigen {ours!r}, operator {theirs!r}"
        for k in sorted(pair_.ours)
        for path, ours, theirs in differences(pair_.ours[k], pair_.theirs[k])
    ]
    assert not problems, "differences no departure row explains:\n" + "\n".join(problems[:20])


def differences(a: Any, b: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            yield from differences(a.get(k), b.get(k), f"{path}.{k}" if path else k)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from differences(x, y, f"{path}[{i}]")
    elif a != b:
        yield path, _short(a), _short(b)


def _short(value: Any) -> Any:
    text = json.dumps(value)
    return value if len(text) < 200 else text[:200] + "..."


def documented_rows(section: str) -> dict[int, str]:
    """The numbered rows of one section of docs/departures.md (`## <section>`): number -> What."""
    text = DEPARTURES.read_text()
    start = text.index(f"\n## {section}")
    end = text.find("\n## ", start + 1)
    rows = {}
    for line in text[start : end if end > 0 else None].splitlines():
        found = re.match(r"^\| (\d+) \| (.*?) \|", line)
        if found:
            number = int(found.group(1))
            assert number not in rows, f"row {number} twice in {section}"
            rows[number] = found.group(2)
    return rows


# --- the golden cases ----------------------------------------------------------------------------------


def operator_cases(api_version: str) -> list[str]:
    """The golden cases of one MPIJob of `api_version` on the operator target (not another target's,
    nor a stream only `render` reads)."""
    return sorted(
        d.name for d in (ROOT / "golden").iterdir() if d.is_dir() and _is_operator_case(d, api_version)
    )


def _is_operator_case(directory: Path, api_version: str) -> bool:
    args = directory / "args"
    if directory.name in RENDER_ONLY or (args.exists() and "--target" in args.read_text()):
        return False
    try:
        docs = list(yaml.safe_load_all((directory / "input.yaml").read_text()))
    except (yaml.YAMLError, ValueError):
        return False
    if len(docs) != 1 or not isinstance(docs[0], dict) or docs[0].get("apiVersion") != api_version:
        return False
    return "mpigen.dev/target" not in (get(docs[0], "metadata", "annotations") or {})


def golden_job(case: str) -> Obj:
    """The case's job with its `args` as `mpigen.dev/*` annotations (the oracle gets it without them)."""
    directory = ROOT / "golden" / case
    job = yaml.safe_load((directory / "input.yaml").read_text())
    args_file = directory / "args"
    args = [a for a in args_file.read_text().split("\n") if a] if args_file.exists() else []
    annotated_job: Obj = annotated(job, option_annotations(args), replace=False)
    return annotated_job


def compare(departures: dict[int, Departure], job: Obj, options: Options | None = None) -> set[int]:
    """Both sides of one job, each departure taken out in order, asserted equal: the rows it showed."""
    both = pair(job, options)
    seen = set()
    for number, departure in departures.items():
        if not (both.ours or both.theirs):
            break  # nothing left to compare (a job the operator leaves alone)
        if departure(both):
            seen.add(number)
    assert_equal(both)
    return seen
