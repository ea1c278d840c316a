"""`--gang-scheduler kubernetes`: Kubernetes 1.37's own Workload and PodGroup, offline. Which pods join
the gang on each target and how many must be placed together, what is refused (the volcano target, a
--kube-version before 1.37), what is said once per render, and the offline rules of the new objects
(the real kube-apiserver and kube-scheduler judge the same in tests/cluster/test_workload_gang.py)."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import V1, V1ALPHA2, V2BETA1, make_job

import mpigen
from mpigen.checks.workload import scheduling_issues
from mpigen.errors import CompileError
from mpigen.options import Options
from mpigen.pipeline import process
from mpigen.yaml.load import Document

Obj = dict[str, Any]
GANG = Options(gang_scheduler="kubernetes")


def pod_specs(objects: list[Obj]) -> dict[str, Obj]:
    """Each pod template's spec, by `<object>` or `<JobSet>-<replicated job>`."""
    found = {}
    for obj in objects:
        spec, name = obj.get("spec", {}), obj["metadata"]["name"]
        if "template" in spec:
            found[name] = spec["template"]["spec"]
        for job in spec.get("replicatedJobs", []):
            found[f"{name}-{job['name']}"] = job["template"]["spec"]["template"]["spec"]
    return found


def by_kind(objects: list[Obj], kind: str) -> list[Obj]:
    return [obj for obj in objects if obj["kind"] == kind]


@pytest.mark.parametrize("version", [V1ALPHA2, V1, V2BETA1])
def test_the_operator_target_gangs_launcher_and_workers(version: str) -> None:
    objects = mpigen.compile(make_job(version, 3), GANG)
    (workload,) = by_kind(objects, "Workload")
    (group,) = by_kind(objects, "PodGroup")
    assert group["apiVersion"] == workload["apiVersion"] == "scheduling.k8s.io/v1beta1"
    (template,) = workload["spec"]["podGroupTemplates"]
    assert template["schedulingPolicy"] == group["spec"]["schedulingPolicy"] == {"gang": {"minCount": 4}}
    assert group["spec"]["workloadRef"] == {"workloadName": "pi", "templateName": template["name"]}
    assert template["disruptionMode"] == group["spec"]["disruptionMode"] == {"all": {}}
    specs = pod_specs(objects)
    joined = sorted(name for name, spec in specs.items() if "schedulingGroup" in spec)
    assert joined == ["pi-launcher", "pi-worker"]
    assert {specs[name]["schedulingGroup"]["podGroupName"] for name in joined} == {"pi"}
    assert not [spec for spec in specs.values() if "schedulerName" in spec]
    assert by_kind(objects, "PodDisruptionBudget") == []
    (workers,) = by_kind(objects, "StatefulSet")
    assert workers["spec"]["podManagementPolicy"] == "Parallel"  # OrderedReady: only pod 0, never placed


def test_the_jobset_target_gangs_the_workers_only() -> None:
    objects = mpigen.compile(make_job(V2BETA1, 3), GANG.replace(target="jobset"))
    (group,) = by_kind(objects, "PodGroup")
    assert group["spec"]["schedulingPolicy"] == {"gang": {"minCount": 3}}
    specs = pod_specs(objects)
    assert specs["pi-worker"]["schedulingGroup"] == {"podGroupName": "pi"}
    assert "schedulingGroup" not in specs["pi-launcher"], "the launcher dependsOn the workers"


def test_min_available_and_priority_class_of_the_run_policy() -> None:
    policy = {"schedulingPolicy": {"minAvailable": 2, "priorityClass": "high"}}
    objects = mpigen.compile(make_job(V2BETA1, 3, runPolicy=policy), GANG)
    (group,) = by_kind(objects, "PodGroup")
    (workload,) = by_kind(objects, "Workload")
    assert group["spec"]["schedulingPolicy"]["gang"]["minCount"] == 2
    assert (
        group["spec"]["priorityClassName"]
        == workload["spec"]["podGroupTemplates"][0]["priorityClassName"]
        == "high"
    )


def test_refused_on_the_volcano_target_and_before_1_37() -> None:
    with pytest.raises(CompileError) as volcano:
        mpigen.compile(make_job(V2BETA1), GANG.replace(target="volcano"))
    assert "--target volcano" in str(volcano.value)
    with pytest.raises(CompileError) as old:
        mpigen.compile(make_job(V2BETA1), GANG.replace(kube_version="1.36"))
    assert "--kube-version is 1.36" in str(old.value)
    assert mpigen.compile(make_job(V2BETA1), GANG.replace(kube_version="1.37"))


def test_the_cluster_requirement_is_said_once_per_render() -> None:
    jobs = [Document(index, make_job(V2BETA1, name=f"job{index}"), 2) for index in (1, 2)]
    outcome = process([("jobs.yaml", jobs)], GANG)
    enable = [found for found in outcome.warnings if "GenericWorkload" in found.issue.message]
    assert len(enable) == 1
    assert "--runtime-config=scheduling.k8s.io/v1beta1=true" in enable[0].issue.message
    assert process([("jobs.yaml", jobs)], Options()).warnings == []


def test_fields_the_pod_group_has_no_place_for_are_named() -> None:
    policy = {"schedulingPolicy": {"queue": "research", "scheduleTimeoutSeconds": 60}}
    compilation = mpigen.compile_job(make_job(V2BETA1, runPolicy=policy), GANG)
    (ignored,) = [issue for issue in compilation.warnings if issue.path]
    assert ignored.path == ("spec", "runPolicy", "schedulingPolicy")
    assert "queue, scheduleTimeoutSeconds" in ignored.message


def rendered() -> list[Obj]:
    objects = mpigen.compile(make_job(V2BETA1), GANG)
    return [obj for obj in objects if obj["apiVersion"] == "scheduling.k8s.io/v1beta1"]


def test_the_rendered_objects_keep_the_rules() -> None:
    assert [issue for obj in rendered() for issue in scheduling_issues(obj)] == []


@pytest.mark.parametrize(
    ("kind", "field", "value", "message"),
    [
        ("PodGroup", ("spec", "schedulingPolicy", "gang", "minCount"), 0, "greater than or equal to 1"),
        ("PodGroup", ("spec", "schedulingPolicy", "basic"), {}, "exactly one of: `basic`, `gang`"),
        ("PodGroup", ("spec", "workloadRef", "templateName"), "a.b", "must not contain dots"),
        ("Workload", ("spec", "podGroupTemplates", 0, "disruptionMode", "single"), {}, "exactly one of"),
        ("Workload", ("spec", "podGroupTemplates", 0, "priorityClassName"), "High", "RFC 1123"),
    ],
)
def test_each_rule_is_checked(kind: str, field: tuple[Any, ...], value: Any, message: str) -> None:
    (obj,) = [obj for obj in rendered() if obj["kind"] == kind]
    node = obj
    for key in field[:-1]:
        node = node[key]
    node[field[-1]] = value
    (issue,) = scheduling_issues(obj)
    assert issue.path == field[: len(issue.path)] and message in issue.message


def test_a_templates_own_scheduling_group_is_replaced_with_a_warning() -> None:
    worker = {
        "spec": {"containers": [{"name": "w", "image": "x"}], "schedulingGroup": {"podGroupName": "mine"}}
    }
    compilation = mpigen.compile_job(make_job(V2BETA1, worker=worker), GANG)
    (workers,) = by_kind(compilation.objects, "StatefulSet")
    assert workers["spec"]["template"]["spec"]["schedulingGroup"] == {"podGroupName": "pi"}
    (replaced,) = [issue for issue in compilation.warnings if issue.path[-1:] == ("schedulingGroup",)]
    assert replaced.path == ("spec", "mpiReplicaSpecs", "Worker", "template", "spec", "schedulingGroup")


def test_scheduler_name_picks_a_profile_of_the_joined_pods() -> None:
    objects = mpigen.compile(make_job(V2BETA1), GANG.replace(target="jobset", scheduler_name="gangs"))
    specs = pod_specs(objects)
    assert specs["pi-worker"]["schedulerName"] == "gangs"
    assert "schedulerName" not in specs["pi-launcher"]
