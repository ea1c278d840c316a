"""Disruptions on each run target and for TrainJobs: which Job gets a podFailurePolicy, what the option
`free_disruptions` (`--no-free-disruptions`, `mpigen.dev/free-disruptions`) and a `--kube-version` before 1.26
turn off, and that a runtime's own failure policy is kept, with a warning."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from jobs import V1, V2BETA1, make_job

import mpigen
from mpigen.compiler import compile_job
from mpigen.inputs.trainjob import Runtimes
from mpigen.options import Options

ROOT = Path(__file__).resolve().parents[3]

DISRUPTED = {"type": "DisruptionTarget", "status": "True"}


def _launcher_job(objects: list[dict[str, Any]]) -> dict[str, Any]:
    [job] = [o for o in objects if o["kind"] == "Job" and o["metadata"]["name"].endswith("-launcher")]
    return job


def test_the_operator_launcher_that_never_restarts_in_place_ignores_its_disruptions() -> None:
    job = _launcher_job(mpigen.compile(make_job(V1, 2), Options(namespace="ml")))
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert job["spec"]["podFailurePolicy"] == {
        "rules": [{"action": "Ignore", "onPodConditions": [DISRUPTED]}]
    }


def test_an_operator_launcher_restarting_in_place_gets_no_policy_the_api_server_would_refuse() -> None:
    job = _launcher_job(mpigen.compile(make_job(V2BETA1, 2), Options(namespace="ml")))
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "OnFailure"
    assert "podFailurePolicy" not in job["spec"]


@pytest.mark.parametrize("target", ["operator", "jobset", "volcano"])
def test_turned_off_no_target_renders_a_disruption_policy(target: str) -> None:
    options = Options(namespace="ml", target=target)
    on = mpigen.compile(make_job(V1, 2), options)
    off = mpigen.compile(make_job(V1, 2), options.replace(free_disruptions=False))
    assert "podFailurePolicy" not in str(off) and "IgnoreMaxRestarts" not in str(off)
    # on the volcano target nothing changes: Volcano counts every restart
    assert (on == off) == (target == "volcano")


def test_the_annotation_turns_it_off_as_the_flag_does() -> None:
    annotated = make_job(V1, 2, annotations={"mpigen.dev/free-disruptions": "false"})
    assert mpigen.compile(annotated, Options(namespace="ml")) == mpigen.compile(
        make_job(V1, 2), Options(namespace="ml", free_disruptions=False)
    )


@pytest.mark.parametrize("target", ["operator", "jobset"])
def test_before_kubernetes_1_26_nothing_is_rendered_and_a_warning_says_why(target: str) -> None:
    """1.25 serves neither podFailurePolicy nor DisruptionTarget (alpha gates, off): the fields are dropped."""
    options = Options(namespace="ml", target=target)
    old = compile_job(make_job(V1, 2), options.replace(kube_version="1.25"))
    assert old.objects == compile_job(make_job(V1, 2), options.replace(free_disruptions=False)).objects
    [warning] = [w for w in old.warnings if "podFailurePolicy" in w.message]
    assert warning.message.startswith("--kube-version 1.25: ") and warning.severity == "warning"
    assert "podFailurePolicy" in str(
        compile_job(make_job(V1, 2), options.replace(kube_version="1.26")).objects
    )
    off = compile_job(make_job(V1, 2), options.replace(kube_version="1.25", free_disruptions=False))
    assert not any("podFailurePolicy" in w.message for w in off.warnings)


RUNTIME = ROOT / "examples" / "trainjob" / "runtime.yaml"
TRAIN_JOB = ROOT / "examples" / "trainjob" / "pi.yaml"


def _train(runtime: dict[str, Any], options: Options | None = None) -> tuple[dict[str, Any], list[str]]:
    """The TrainJob example's JobSet with `runtime`, and its warnings."""
    runtimes = Runtimes()
    runtimes.add(runtime, Options())
    [job] = yaml.safe_load_all(TRAIN_JOB.read_text())
    job["spec"]["runtimeRef"]["name"] = runtime["metadata"]["name"]
    done = compile_job(job, options or Options(), runtimes=runtimes)
    [jobset] = [o for o in done.objects if o["kind"] == "JobSet"]
    return jobset, [w.message for w in done.warnings]


def _runtime() -> dict[str, Any]:
    [runtime] = yaml.safe_load_all(RUNTIME.read_text())
    return dict(runtime)


def _rjobs(jobset: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {rjob["name"]: rjob["template"]["spec"] for rjob in jobset["spec"]["replicatedJobs"]}


def test_a_trainjob_gets_the_jobset_targets_free_disruptions() -> None:
    jobset, warnings = _train(_runtime())
    assert warnings == []
    assert jobset["spec"]["failurePolicy"] == {
        "restartStrategy": "BlockingRecreate",
        "rules": [
            {
                "name": "disruption",
                "action": "RestartJobSetAndIgnoreMaxRestarts",
                "onJobFailureReasons": ["PodFailurePolicy"],
            }
        ],
    }
    for job in _rjobs(jobset).values():
        assert job["template"]["spec"]["restartPolicy"] == "Never"  # the webhook would say OnFailure
        assert job["podFailurePolicy"] == {"rules": [{"action": "FailJob", "onPodConditions": [DISRUPTED]}]}
    off, _ = _train(_runtime(), Options(free_disruptions=False))
    assert "failurePolicy" not in off["spec"]
    assert {job["template"]["spec"]["restartPolicy"] for job in _rjobs(off).values()} == {"OnFailure"}


@pytest.mark.parametrize(
    ("where", "field", "value"),
    [
        ((), "failurePolicy", {"rules": [{"name": "all", "action": "FailJobSet"}]}),
        ((0,), "podFailurePolicy", {"rules": [{"action": "Ignore", "onPodConditions": [DISRUPTED]}]}),
        ((1,), "podReplacementPolicy", "TerminatingOrFailed"),
    ],
)
def test_a_runtimes_own_failure_policy_is_kept_whole_with_a_warning(
    where: tuple[int, ...], field: str, value: Any
) -> None:
    runtime = _runtime()
    spec = runtime["spec"]["template"]["spec"]
    target = spec if not where else spec["replicatedJobs"][where[0]]["template"]["spec"]
    target[field] = value
    if field == "podFailurePolicy":
        target["template"]["spec"]["restartPolicy"] = "Never"
    jobset, warnings = _train(runtime)
    [warning] = warnings
    assert f".{field}" in warning and "kept as written" in warning
    assert "IgnoreMaxRestarts" not in str(jobset)
    jobs = list(_rjobs(jobset).values())
    if where:
        assert jobs[where[0]][field] == value
    else:  # the runtime CRD's default strategy beside it
        assert jobset["spec"][field] == {**value, "restartStrategy": "Recreate"}
    mpigens = {"rules": [{"action": "FailJob", "onPodConditions": [DISRUPTED]}]}
    assert not any(job.get("podFailurePolicy") == mpigens for job in jobs)


def test_a_job_restarting_in_place_keeps_it_and_counts_its_disruptions() -> None:
    runtime = _runtime()
    launcher = runtime["spec"]["template"]["spec"]["replicatedJobs"][1]["template"]["spec"]
    launcher["template"]["spec"]["restartPolicy"] = "OnFailure"
    jobset, [warning] = _train(runtime)
    assert 'replicated job "launcher" with restartPolicy OnFailure' in warning
    jobs = _rjobs(jobset)
    assert "podFailurePolicy" not in jobs["launcher"] and "podFailurePolicy" in jobs["node"]
    assert jobset["spec"]["failurePolicy"]["rules"][0]["name"] == "disruption"


def test_a_trainjob_before_kubernetes_1_26_warns_once() -> None:
    jobset, warnings = _train(_runtime(), Options(kube_version="1.25"))
    assert "failurePolicy" not in jobset["spec"] and len(warnings) == 1
    assert warnings[0].startswith("--kube-version 1.25")
