"""Hints that lead straight to a job that compiles: the tightest limit said at once, combined rules in
one message, every problem of a job in one run, and "did you mean" that knows where a field belongs."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import V1, V1ALPHA1, make_job

import mpigen
from mpigen import CompileError


def messages(job: dict[str, Any], options: mpigen.Options | None = None) -> list[str]:
    with pytest.raises(CompileError) as caught:
        mpigen.compile(job, options)
    return [issue.text() for issue in caught.value.issues]


def test_a_long_name_is_told_the_limit_that_holds_in_the_end() -> None:
    job = make_job()
    job["metadata"]["name"] = "a" * 70
    [message] = messages(job)
    assert "at most 45 characters" in message
    job["metadata"]["name"] = "a" * 45
    mpigen.compile(job)  # the number the message gave compiles


def v1alpha1(gpus: int, per_node: int) -> dict[str, Any]:
    return make_job(V1ALPHA1, workers=None, name="gpus", namespace=None, gpus=gpus, gpusPerNode=per_node)


def test_the_gpu_rule_is_one_message_whose_suggestions_compile() -> None:
    [message] = messages(v1alpha1(16, 6))
    assert (
        "1, 2, 4 or a multiple of 8 (the v1alpha1 CRD)" in message
        and "fewer than or a multiple of gpusPerNode (6)" in message
    )
    assert message.endswith("(nearest: 4 or 24)")


@pytest.mark.slow  # 1,311 jobs compiled, each refused one's suggestions compiled in turn
def test_every_suggestion_of_the_gpu_rule_compiles() -> None:
    off = mpigen.Options(validate=False)
    for per_node in range(1, 20):
        for gpus in range(1, 70):
            try:
                mpigen.compile(v1alpha1(gpus, per_node), off)
            except CompileError as exc:
                [issue] = exc.issues
                nearest = issue.message.rpartition("(nearest: ")[2].rstrip(")").split(" or ")
                for value in nearest:
                    mpigen.compile(v1alpha1(int(value), per_node), off)  # never refused in turn


def test_an_unknown_field_does_not_hide_the_other_problems() -> None:
    job = make_job(V1)  # v1alpha1 and v1alpha2 leave unknown fields out, with a warning
    job["spec"]["slotPerWorker"] = 1
    job["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"] = 2
    assert messages(job) == [
        'spec.slotPerWorker: unknown field "slotPerWorker" (did you mean "slotsPerWorker"?)',
        "spec.mpiReplicaSpecs.Launcher.replicas: must be 1, got 2",
    ]


def test_a_dedented_replica_spec_is_told_where_it_belongs() -> None:
    job = make_job(V1)  # v1alpha1 and v1alpha2 leave unknown fields out, with a warning
    job["spec"]["Worker"] = job["spec"]["mpiReplicaSpecs"].pop("Worker")
    found = messages(job)
    assert (
        found[0]
        == 'spec.Worker: unknown field "Worker" (did you mean to put it under spec.mpiReplicaSpecs, one level deeper?)'
    )


def test_pod_template_typos_get_a_did_you_mean() -> None:
    job = make_job(V1)  # v1alpha1 and v1alpha2 leave unknown fields out, with a warning
    job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resource"] = {}
    assert messages(job) == [
        'spec.mpiReplicaSpecs.Worker.template.spec.containers[0].resource: unknown field "resource" (did you mean "resources"?)'
    ]
