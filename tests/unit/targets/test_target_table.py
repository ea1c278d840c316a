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


def _warnings(job: dict[str, Any], name: str) -> list[str]:
    from mpigen.compiler import compile_job

    return [w.text() for w in compile_job(job, Options(target=name)).warnings if w.severity == "warning"]


MULTIKUEUE_WARNINGS = {
    "operator": "the operator would leave this job to Kueue's MultiKueue; mpigen compiles it to run here",
    # The JobSet keeps spec.managedBy; Kueue v0.19's MultiKueue adapter copies the JobSet alone.
    "jobset": "kept on the JobSet: Kueue's MultiKueue runs it on a worker cluster, to which it copies the JobSet "
    "alone (Kueue v0.19): apply every other object of this output there too (the ConfigMap pi-config that "
    "the pods mount above all)",
    # A Volcano Job has no managedBy: it runs where it is applied.
    "volcano": "the operator would leave this job to Kueue's MultiKueue; a Volcano Job has no managedBy, so "
    "Volcano runs it on this cluster",
}


@pytest.mark.parametrize("version", [V1, V2BETA1])
@pytest.mark.parametrize("name", sorted(TARGETS))
def test_each_target_says_what_it_does_with_a_multikueue_job(name: str, version: str) -> None:
    job = make_job(version, 2, runPolicy={"managedBy": "kueue.x-k8s.io/multikueue"})
    managed = [w for w in _warnings(job, name) if w.startswith("spec.runPolicy.managedBy")]
    assert managed == [f"spec.runPolicy.managedBy: kueue.x-k8s.io/multikueue: {MULTIKUEUE_WARNINGS[name]}"]
    objects = mpigen.compile(job, Options(target=name))
    carried = [o for o in objects if (o.get("spec") or {}).get("managedBy") == "kueue.x-k8s.io/multikueue"]
    assert [o["kind"] for o in carried] == (["JobSet"] if name == "jobset" else [])


CLEAN_POD_POLICY_NONE = {
    "operator": None,  # the workers keep running, as the operator leaves them
    "jobset": "on --target jobset the workers are deleted when the JobSet finishes (JobSet always ends its "
    "running Jobs)",
    "volcano": "on --target volcano the running workers are deleted when the launcher completes (Volcano's "
    "CompleteJob ends every running pod of the Job)",
}


@pytest.mark.parametrize(
    ("version", "where"),
    [(V1ALPHA2, "spec"), (V1, "spec.runPolicy"), (V2BETA1, "spec.runPolicy")],
)
@pytest.mark.parametrize("name", sorted(TARGETS))
def test_an_explicit_clean_pod_policy_none_is_warned_about_where_the_target_cannot_keep_workers(
    name: str, version: str, where: str
) -> None:
    policy = {"cleanPodPolicy": "None"}
    job = make_job(version, 2, **(policy if where == "spec" else {"runPolicy": policy}))
    said = [w for w in _warnings(job, name) if "cleanPodPolicy" in w]
    expected = CLEAN_POD_POLICY_NONE[name]
    assert said == ([] if expected is None else [f"{where}.cleanPodPolicy: None: {expected}"])
    # None by default (nothing written) is the version's default, not the job's wish: no warning.
    assert not [w for w in _warnings(make_job(version, 2), name) if "cleanPodPolicy" in w]
