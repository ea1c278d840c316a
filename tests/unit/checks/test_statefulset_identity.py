"""A worker template's `hostname` and `subdomain` are judged as the API server judges a StatefulSet's pod
template: not at all, since the controller overwrites both (Kubernetes 1.37 ValidateStatefulSetSpec); the
same fields on the launcher's Job template are validated (tests/cluster/test_pod_rules.py, family
`identity`, compares both with the real server)."""

from __future__ import annotations

import pytest
from jobs import V1ALPHA2, make_job

import mpigen
from mpigen.checks.pod import check_object
from mpigen.errors import CompileError

BAD = {"hostname": "Bad_Name", "subdomain": "y" * 64}


def test_a_statefulset_template_is_not_refused_for_what_its_controller_overwrites() -> None:
    statefulset = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "w"},
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}], **BAD}}},
    }
    assert check_object(statefulset, (1, 37)) == []
    pod = {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Never", **BAD}
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {"template": {"spec": pod}},
    }
    assert {v.path[-1] for v in check_object(job, (1, 37))} == {"hostname", "subdomain"}


def test_a_worker_hostname_renders_and_a_launcher_hostname_is_refused() -> None:
    job = make_job(V1ALPHA2)
    job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"].update(BAD)
    assert mpigen.compile(job)
    job = make_job(V1ALPHA2)
    job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["hostname"] = "Bad_Name"
    with pytest.raises(CompileError, match="hostname"):
        mpigen.compile(job)
