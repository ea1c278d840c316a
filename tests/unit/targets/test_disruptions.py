"""Disruptions on each run target: which Job gets a podFailurePolicy, and what the option
`free_disruptions` (`--no-free-disruptions`, `mpigen.dev/free-disruptions`) turns off."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import V1, V2BETA1, make_job

import mpigen
from mpigen.options import Options

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
