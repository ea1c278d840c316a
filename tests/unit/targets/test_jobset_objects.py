"""The jobset target (mpigen.targets.jobset): one JobSet per job, whatever the input version, whose host
names, launcher Role and Kueue labels agree with what it says of the job."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import V1, V1ALPHA1, V1ALPHA2, V2BETA1, make_job

import mpigen
from mpigen.compiler import plan_job
from mpigen.options import Options
from mpigen.targets import target

JOBSET = Options(target="jobset", namespace="ml")
JOBS = {
    "v1alpha1": make_job(V1ALPHA1, 3),
    "v1alpha2": make_job(V1ALPHA2, 3),
    "v1": make_job(V1, 2),
    "v2beta1": make_job(V2BETA1, 4),
    "v2beta1-intel": make_job(V2BETA1, 2, mpiImplementation="Intel"),
}


def _kinds(objects: list[dict[str, Any]]) -> list[str]:
    return [obj["kind"] for obj in objects]


def _jobset(objects: list[dict[str, Any]]) -> dict[str, Any]:
    [found] = [obj for obj in objects if obj["kind"] == "JobSet"]
    return found


@pytest.mark.parametrize("case", sorted(JOBS))
def test_one_jobset_runs_the_job_and_its_hosts_are_the_jobset_pods(case: str) -> None:
    plan, _ = plan_job(JOBS[case], JOBSET)
    run = target("jobset")
    objects = mpigen.compile(JOBS[case], JOBSET)
    assert not {"StatefulSet", "Service", "Job"} & set(_kinds(objects)) - ({"Job"} if plan.ssh else set())
    assert _kinds(objects)[-1] == "JobSet"
    spec = _jobset(objects)["spec"]
    worker, launcher = spec["replicatedJobs"]
    assert worker["name"] == "worker" and launcher["name"] == "launcher"
    assert (
        worker["template"]["spec"]["parallelism"] == worker["template"]["spec"]["completions"] == plan.workers
    )
    assert launcher["dependsOn"] == [{"name": "worker", "status": "Ready"}]
    assert spec["network"] == {"enableDNSHostnames": True, "publishNotReadyAddresses": True}
    assert spec["successPolicy"] == {"operator": "All", "targetReplicatedJobs": ["launcher"]}
    inits = launcher["template"]["spec"]["template"]["spec"].get("initContainers", [])
    assert "wait-for-workers" not in [c["name"] for c in inits]
    [config] = [obj for obj in objects if obj["kind"] == "ConfigMap"]
    hosts = [line.split()[0].split(":")[0] for line in config["data"]["hostfile"].splitlines()]
    assert hosts == run.hosts(plan)
    assert [host.split(".")[0] for host in hosts] == [
        f"{plan.name}-worker-0-{i}" for i in range(plan.workers)
    ]
    assert run.worker_pods(plan) == [f"{plan.name}-worker-0-{i}" for i in range(plan.workers)]
    roles = [
        obj for obj in objects if obj["kind"] == "Role" and obj["metadata"]["name"] == f"{plan.name}-launcher"
    ]
    assert roles == ([run.launcher_role(plan)] if plan.kubexec else [])
    if plan.ssh is not None:
        assert hosts[0] == f"{plan.name}-worker-0-0.{plan.name}.ml.svc"


def test_kubectl_exec_versions_are_warned_of_their_namespace_wide_exec_right() -> None:
    compiled = mpigen.compile_job(JOBS["v1alpha2"], JOBSET)
    [role] = [obj for obj in compiled.objects if obj["kind"] == "Role"]
    assert all("resourceNames" not in rule for rule in role["rules"])
    assert any("exec into any of them" in w.message and w.severity == "warning" for w in compiled.warnings)
    assert not any("exec into" in w.message for w in mpigen.compile_job(JOBS["v2beta1"], JOBSET).warnings)


DISRUPTED = {"type": "DisruptionTarget", "status": "True"}


def test_restarts_come_from_the_backoff_limit_and_disruptions_are_free() -> None:
    spec = _jobset(mpigen.compile(make_job(V2BETA1, 2, runPolicy={"backoffLimit": 3}), JOBSET))["spec"]
    assert spec["failurePolicy"] == {
        "maxRestarts": 3,
        "restartStrategy": "BlockingRecreate",
        "rules": [
            {
                "name": "disruption",
                "action": "RestartJobSetAndIgnoreMaxRestarts",
                "onJobFailureReasons": ["PodFailurePolicy"],
            }
        ],
    }
    policy = {"rules": [{"action": "FailJob", "onPodConditions": [DISRUPTED]}]}
    jobs = {rjob["name"]: rjob["template"]["spec"] for rjob in spec["replicatedJobs"]}
    assert {job["backoffLimit"] for job in jobs.values()} == {0}
    assert jobs["worker"]["podFailurePolicy"] == policy
    # a Job takes a podFailurePolicy only over pods that never restart in place (the API server refuses it
    # with OnFailure), so the v2beta1 launcher (OnFailure by default) is made Never: under backoffLimit 0
    # its first in-place restart would fail the Job anyway
    assert jobs["launcher"]["template"]["spec"]["restartPolicy"] == "Never"
    assert jobs["launcher"]["podFailurePolicy"] == policy
    launcher = {
        rjob["name"]: rjob for rjob in _jobset(mpigen.compile(JOBS["v1"], JOBSET))["spec"]["replicatedJobs"]
    }
    v1_launcher = launcher["launcher"]["template"]["spec"]
    assert v1_launcher["template"]["spec"]["restartPolicy"] == "Never"
    assert v1_launcher["podFailurePolicy"] == policy
    assert _jobset(mpigen.compile(make_job(V2BETA1, 2), JOBSET))["spec"]["failurePolicy"]["maxRestarts"] == 6


def test_without_free_disruptions_every_pod_failure_counts() -> None:
    options = JOBSET.replace(free_disruptions=False)
    spec = _jobset(mpigen.compile(make_job(V2BETA1, 2, runPolicy={"backoffLimit": 3}), options))["spec"]
    assert spec["failurePolicy"] == {"maxRestarts": 3}
    assert not any("podFailurePolicy" in rjob["template"]["spec"] for rjob in spec["replicatedJobs"])
    # the launcher keeps its replica spec's restartPolicy
    [launcher] = [rjob for rjob in spec["replicatedJobs"] if rjob["name"] == "launcher"]
    assert launcher["template"]["spec"]["template"]["spec"]["restartPolicy"] == "OnFailure"


def test_the_deadline_rule_still_fails_the_jobset_beside_the_disruption_rule() -> None:
    job = make_job(V2BETA1, 2, runPolicy={"activeDeadlineSeconds": 60})
    rules = _jobset(mpigen.compile(job, JOBSET))["spec"]["failurePolicy"]["rules"]
    assert [(rule["name"], rule["action"]) for rule in rules] == [
        ("disruption", "RestartJobSetAndIgnoreMaxRestarts"),
        ("deadline", "FailJobSet"),
    ]


def test_queue_and_priority_class_label_the_jobset_and_suspend_it() -> None:
    jobset = _jobset(mpigen.compile(JOBS["v2beta1"], JOBSET.replace(queue="team-a", priority_class="high")))
    assert jobset["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"
    assert jobset["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "high"
    assert jobset["spec"]["suspend"] is True
    assert "suspend" not in _jobset(mpigen.compile(JOBS["v2beta1"], JOBSET))["spec"]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (Options(queue="team-a"), "refused on the operator target"),
        (JOBSET.replace(queue="team-a", gang_scheduler="volcano"), "--queue with --gang-scheduler"),
    ],
)
def test_queue_is_refused_where_kueue_would_admit_part_of_the_job(options: Options, expected: str) -> None:
    with pytest.raises(mpigen.CompileError) as caught:
        mpigen.compile(JOBS["v2beta1"], options)
    assert any(expected in issue.message for issue in caught.value.issues)


def test_a_gang_waits_for_the_workers_alone() -> None:
    objects = mpigen.compile(JOBS["v2beta1"], JOBSET.replace(gang_scheduler="volcano"))
    [group] = [obj for obj in objects if obj["kind"] == "PodGroup"]
    assert group["spec"]["minMember"] == 4
    operator = mpigen.compile(JOBS["v2beta1"], Options(gang_scheduler="volcano", namespace="ml"))
    assert [obj["spec"]["minMember"] for obj in operator if obj["kind"] == "PodGroup"] == [5]


def test_queue_warns_of_the_resources_kueue_counts_that_a_queue_may_not_cover() -> None:
    warned = [w.message for w in mpigen.compile_job(JOBS["v1"], JOBSET.replace(queue="q")).warnings]
    assert any("requests ephemeral-storage" in message for message in warned)
    assert not any("ephemeral-storage" in w.message for w in mpigen.compile_job(JOBS["v1"], JOBSET).warnings)
