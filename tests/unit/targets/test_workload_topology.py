"""`--topology` with `--gang-scheduler kubernetes`, offline: the PodGroup's (and its template's)
`schedulingConstraints.topology` for `required:`, nothing there for `preferred:` (a warning says so), the
alpha gate named, the jobset target's launcher following the workers' domain, what is refused, and the
offline rules of the new field (kube-scheduler and kube-apiserver judge the same in
tests/cluster/test_workload_gang_topology.py)."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import V2BETA1, make_job

import mpigen
from mpigen.checks.workload import scheduling_issues
from mpigen.errors import CompileError
from mpigen.options import Options

Obj = dict[str, Any]
RACK = "topology.example.com/rack"
REQUIRED = Options(gang_scheduler="kubernetes", topology=f"required:{RACK}")


def by_kind(objects: list[Obj], kind: str) -> list[Obj]:
    return [obj for obj in objects if obj["kind"] == kind]


def constraints(objects: list[Obj]) -> list[Any]:
    """The schedulingConstraints of the Workload's template and of the PodGroup (None: absent)."""
    (workload,) = by_kind(objects, "Workload")
    (group,) = by_kind(objects, "PodGroup")
    return [
        workload["spec"]["podGroupTemplates"][0].get("schedulingConstraints"),
        group["spec"].get("schedulingConstraints"),
    ]


def pod_specs(objects: list[Obj]) -> dict[str, Obj]:
    found = {}
    for obj in objects:
        spec, name = obj.get("spec", {}), obj["metadata"]["name"]
        if "template" in spec:
            found[name] = spec["template"]["spec"]
        for job in spec.get("replicatedJobs", []):
            found[f"{name}-{job['name']}"] = job["template"]["spec"]["template"]["spec"]
    return found


@pytest.mark.parametrize("target", ["operator", "jobset"])
def test_required_constrains_the_template_and_the_pod_group(target: str) -> None:
    compilation = mpigen.compile_job(make_job(V2BETA1, 3), REQUIRED.replace(target=target))
    assert constraints(compilation.objects) == [{"topology": [{"key": RACK}]}] * 2
    (gate,) = [issue for issue in compilation.warnings if "TopologyAwareWorkloadScheduling" in issue.message]
    assert f"--topology required:{RACK}" in gate.message
    assert "TopologyAwareWorkloadScheduling=true" in gate.message and gate.severity == "warning"


def test_the_operator_target_keeps_its_pod_affinity() -> None:
    specs = pod_specs(mpigen.compile(make_job(V2BETA1, 3), REQUIRED))
    for name in ("pi-launcher", "pi-worker"):
        (term,) = specs[name]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert term["topologyKey"] == RACK


def test_on_the_jobset_target_the_launcher_follows_the_workers() -> None:
    objects = mpigen.compile(make_job(V2BETA1, 3), REQUIRED.replace(target="jobset"))
    specs = pod_specs(objects)
    (term,) = specs["pi-launcher"]["affinity"]["podAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert term["topologyKey"] == RACK
    (jobset,) = by_kind(objects, "JobSet")
    (workers,) = [job for job in jobset["spec"]["replicatedJobs"] if job["name"] == "worker"]
    worker_labels = workers["template"]["spec"]["template"]["metadata"]["labels"]
    assert term["labelSelector"]["matchLabels"].items() <= worker_labels.items()
    assert "affinity" not in specs["pi-worker"], "the PodGroup places the workers"
    assert not [
        key for key in (jobset["metadata"].get("annotations") or {}) if key.startswith("kueue.x-k8s.io/")
    ]


def test_preferred_has_no_word_in_the_pod_group() -> None:
    options = REQUIRED.replace(topology=f"preferred:{RACK}")
    compilation = mpigen.compile_job(make_job(V2BETA1, 3), options)
    assert constraints(compilation.objects) == [None, None]
    (said,) = [issue for issue in compilation.warnings if "no preferred topology" in issue.message]
    assert said.path == ()
    specs = pod_specs(compilation.objects)
    assert specs["pi-worker"]["affinity"]["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]


@pytest.mark.parametrize("topology", [f"preferred:{RACK}", f"slice:{RACK}:2"])
def test_the_jobset_target_refuses_what_the_pod_group_cannot_say(topology: str) -> None:
    with pytest.raises(CompileError) as refused:
        mpigen.compile(make_job(V2BETA1, 4), REQUIRED.replace(target="jobset", topology=topology))
    assert f"{topology} is refused on the jobset target with --gang-scheduler kubernetes" in str(
        refused.value
    )


def test_without_the_gang_nothing_changes() -> None:
    compilation = mpigen.compile_job(make_job(V2BETA1, 3), Options(topology=f"required:{RACK}"))
    assert not by_kind(compilation.objects, "PodGroup")
    assert not [issue for issue in compilation.warnings if "TopologyAwareWorkloadScheduling" in issue.message]


def group_of(kind: str) -> tuple[Obj, tuple[Any, ...]]:
    (obj,) = by_kind(mpigen.compile(make_job(V2BETA1), REQUIRED), kind)
    if kind == "PodGroup":
        return obj, ("spec", "schedulingConstraints")
    return obj, ("spec", "podGroupTemplates", 0, "schedulingConstraints")


@pytest.mark.parametrize("kind", ["PodGroup", "Workload"])
@pytest.mark.parametrize(
    ("topology", "field", "message"),
    [
        ([{"key": RACK}, {"key": "zone"}], ("topology",), "must have at most 1 item"),
        ([{}], ("topology", 0, "key"), "Required value"),
        ([{"key": ""}], ("topology", 0, "key"), "Required value"),
        ([{"key": "a/b/c"}], ("topology", 0, "key"), "Invalid value: 'a/b/c'"),
        ([{"key": "-rack"}], ("topology", 0, "key"), "Invalid value: '-rack'"),
    ],
)
def test_each_constraint_rule_is_checked(
    kind: str, topology: Any, field: tuple[Any, ...], message: str
) -> None:
    obj, at = group_of(kind)
    node = obj
    for key in at:
        node = node[key]
    node["topology"] = topology
    (issue,) = scheduling_issues(obj)
    assert issue.path == at + field and message in issue.message


@pytest.mark.parametrize("kind", ["PodGroup", "Workload"])
def test_the_rendered_constraint_keeps_the_rules(kind: str) -> None:
    obj, _ = group_of(kind)
    assert list(scheduling_issues(obj)) == []
