"""The run-target seam (mpigen.targets): what the operator target says of a job agrees with the objects it
builds, and `--target` / `mpigen.dev/target` take exactly the names of the table."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import V1, V1ALPHA1, V1ALPHA2, V2BETA1, make_job

import mpigen
from mpigen.compiler import plan_job
from mpigen.options import Options
from mpigen.targets import DEFAULT_TARGET, TARGETS, target

JOBS = {
    "v1alpha1": make_job(V1ALPHA1, 3),
    "v1alpha2": make_job(V1ALPHA2, 3),
    "v1": make_job(V1, 2),
    "v2beta1": make_job(V2BETA1, 4),
    "v2beta1-domain": make_job(V2BETA1, 2, annotations={"mpigen.dev/cluster-domain": "example.org"}),
}


def _one(objects: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any] | None:
    found = [obj for obj in objects if obj["kind"] == kind and name in (None, obj["metadata"]["name"])]
    assert len(found) <= 1
    return found[0] if found else None


@pytest.mark.parametrize("case", sorted(JOBS))
def test_the_operator_target_names_the_pods_hosts_and_role_it_builds(case: str) -> None:
    plan, options = plan_job(JOBS[case], Options())
    run = target(options.target)
    objects = run.build(plan, options)
    assert objects == mpigen.compile(JOBS[case])
    workers = _one(objects, "StatefulSet")
    assert workers is not None
    name, replicas = workers["metadata"]["name"], workers["spec"]["replicas"]
    assert run.worker_pods(plan) == [f"{name}-{index}" for index in range(replicas)]
    hostfile = _one(objects, "ConfigMap")
    assert hostfile is not None
    lines = hostfile["data"]["hostfile"].splitlines()
    assert [line.split()[0].split(":")[0] for line in lines] == run.hosts(plan)
    assert run.launcher_role(plan) == _one(objects, "Role", f"{plan.name}-launcher")


def test_the_default_target_is_the_first_row_and_the_option_takes_the_table_s_names() -> None:
    assert DEFAULT_TARGET == "operator" == Options().target
    job = make_job(V2BETA1, 2, annotations={"mpigen.dev/target": "operator"})
    assert mpigen.compile(job) == mpigen.compile(make_job(V2BETA1, 2))
    with pytest.raises(mpigen.CompileError) as caught:
        mpigen.compile(make_job(V2BETA1, 2, annotations={"mpigen.dev/target": "kueue"}))
    [issue] = caught.value.issues
    assert issue.path == ("metadata", "annotations", "mpigen.dev/target")
    assert issue.message == f'must be one of {", ".join(TARGETS)}; got "kueue"'
