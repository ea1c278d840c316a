"""No `null` in a custom resource mpigen writes (JobSet, Volcano Job, PodGroup, Workload), whatever nulls
the user's templates hold (`command:` with nothing after it): server-side apply refuses them
(tests/cluster/test_nulls.py). Built-in kinds keep what the user wrote."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import V1, V1ALPHA2, V2BETA1, make_job

import mpigen
from mpigen.options import Options
from mpigen.targets.nulls import is_custom

OPTIONS = {
    "jobset": Options(target="jobset"),
    "volcano": Options(target="volcano"),
    "operator-volcano-gang": Options(gang_scheduler="volcano"),
    "operator-scheduler-plugins-gang": Options(gang_scheduler="scheduler-plugins"),
}


def nulls(value: Any, path: str = "") -> list[str]:
    if isinstance(value, dict):
        return [
            p
            for key, item in value.items()
            for p in ([f"{path}.{key}"] if item is None else nulls(item, f"{path}.{key}"))
        ]
    if isinstance(value, list):
        return [p for i, item in enumerate(value) for p in nulls(item, f"{path}[{i}]")]
    return []


def with_nulls(version: str) -> dict[str, Any]:
    job = make_job(version)
    for replica in job["spec"]["mpiReplicaSpecs"].values():
        spec = replica["template"]["spec"]
        spec["containers"][0].update({"command": None, "workingDir": None})
        spec["nodeSelector"] = None
    return job


@pytest.mark.parametrize("setting", sorted(OPTIONS))
@pytest.mark.parametrize("version", [V1ALPHA2, V1, V2BETA1])
def test_no_custom_resource_holds_a_null(version: str, setting: str) -> None:
    job = with_nulls(version)
    if version == V2BETA1:
        job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["command"] = None
    objects = mpigen.compile(job, OPTIONS[setting])
    custom = [obj for obj in objects if is_custom(obj)]
    assert custom, [obj["kind"] for obj in objects]
    for obj in custom:
        assert nulls(obj) == [], obj["kind"]


def test_built_in_kinds_keep_what_the_user_wrote() -> None:
    objects = mpigen.compile(with_nulls(V1ALPHA2))
    launcher = next(o for o in objects if o["kind"] == "Job" and o["metadata"]["name"] == "pi-launcher")
    assert ".spec.template.spec.containers[0].command" in nulls(launcher)
