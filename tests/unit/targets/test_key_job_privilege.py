"""Least privilege for the SSH key Job: its pod takes only the user and group it needs from the worker's
pod securityContext (runAsUser, runAsGroup, runAsNonRoot), never SELinux, AppArmor or seccomp overrides,
sysctls, supplemental or filesystem groups, on every run target that renders it."""

from __future__ import annotations

import pytest
from jobs import V2BETA1, make_job

import mpigen
from mpigen.options import Options

WORKER_POD_CONTEXT = {
    "runAsUser": 1000,
    "runAsGroup": 1000,
    "runAsNonRoot": True,
    "fsGroup": 1000,
    "supplementalGroups": [4, 27],
    "seLinuxOptions": {"type": "spc_t"},
    "appArmorProfile": {"type": "Unconfined"},
    "seccompProfile": {"type": "Unconfined"},
    "sysctls": [{"name": "net.core.somaxconn", "value": "1024"}],
}


@pytest.mark.parametrize("target", ["operator", "jobset"])
def test_the_key_jobs_pod_takes_only_the_workers_user_and_group(target: str) -> None:
    job = make_job(V2BETA1)
    job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["securityContext"] = dict(WORKER_POD_CONTEXT)
    objects = mpigen.compile(job, Options(target=target, validate=False))
    (key_job,) = [o for o in objects if o["kind"] == "Job" and o["metadata"]["name"] == "pi-ssh-keygen"]
    pod = key_job["spec"]["template"]["spec"]
    assert pod["securityContext"] == {"runAsUser": 1000, "runAsGroup": 1000, "runAsNonRoot": True}
    for container in [*pod["initContainers"], *pod["containers"]]:
        assert container["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
