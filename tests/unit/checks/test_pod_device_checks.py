"""mpigen.checks.pod's rules of a container's raw block devices (`volumeDevices`, mpigen.checks.pod.mounts):
the volume each names, their paths, and what they may not share with the container's mounts, in the
server's words and at its paths. tests/cluster/test_pod_rules.py holds the verdicts to a real
kube-apiserver's (family devices)."""

from __future__ import annotations

from typing import Any

import pytest

from mpigen.checks.pod import check_object, server_path

C = "spec.template.spec.containers[0]"
CLAIM = {"name": "blk", "persistentVolumeClaim": {"claimName": "blk"}}
EPHEMERAL = {
    "name": "eph",
    "ephemeral": {
        "volumeClaimTemplate": {
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
        }
    },
}
SCRATCH = {"name": "scratch", "emptyDir": {}}


def job(
    devices: list[dict[str, Any]],
    volumes: list[dict[str, Any]] | None = None,
    mounts: list[dict[str, Any]] | None = None,
    where: str = "containers",
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "main", "image": "x", "volumeDevices": devices}
    if mounts is not None:
        container["volumeMounts"] = mounts
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "volumes": [CLAIM, EPHEMERAL, SCRATCH] if volumes is None else volumes,
        "containers": [{"name": "app", "image": "x"}] if where == "initContainers" else [],
    }
    spec.setdefault(where, []).append(container)
    return {"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": {"spec": spec}}}


def texts(obj: dict[str, Any], version: tuple[int, int] = (1, 37)) -> list[str]:
    return [f"{server_path(v.path)}: {v.body}" for v in check_object(obj, version)]


def device(name: str, path: str) -> dict[str, str]:
    return {"name": name, "devicePath": path}


def test_devices_of_claims_and_ephemeral_claims_are_accepted() -> None:
    both = [device("blk", "/dev/xvdb"), device("eph", "dev/relative-is-fine")]
    assert texts(job(both)) == []
    assert texts(job(both, mounts=[{"name": "scratch", "mountPath": "/scratch"}])) == []


@pytest.mark.parametrize("where", ["containers", "initContainers"])
def test_a_device_names_a_claim_volume_the_server_accepted(where: str) -> None:
    prefix = "spec.template.spec.initContainers[0]" if where == "initContainers" else C
    assert texts(job([device("missing", "/dev/a")], where=where)) == [
        f'{prefix}.volumeDevices[0].name: Not found: "missing"'
    ]
    assert texts(job([device("scratch", "/dev/a")], where=where)) == [
        (
            f'{prefix}.volumeDevices[0].name: Invalid value: "scratch": '
            "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"
        )
    ]
    # a claim volume the server refuses is no volume to name
    broken = [{"name": "blk", "persistentVolumeClaim": {"claimName": ""}}]
    assert texts(job([device("blk", "/dev/a")], broken, where=where))[1:] == [
        f'{prefix}.volumeDevices[0].name: Not found: "blk"'
    ]
    assert texts(job([device("", "/dev/a")], where=where)) == [
        f"{prefix}.volumeDevices[0].name: Required value",
        f'{prefix}.volumeDevices[0].name: Not found: ""',
    ]


def test_device_names_and_paths_are_unique_and_paths_have_no_backsteps() -> None:
    assert texts(job([device("blk", "/dev/a"), device("blk", "/dev/a")])) == [
        f'{C}.volumeDevices[1].name: Invalid value: "blk": must be unique',
        f'{C}.volumeDevices[1].devicePath: Invalid value: "/dev/a": must be unique',
    ]
    assert texts(job([device("blk", "/dev/../a"), device("eph", "")])) == [
        f"{C}.volumeDevices[0].devicePath: Invalid value: \"/dev/../a\": can not contain backsteps ('..')",
        f"{C}.volumeDevices[1].devicePath: Required value",
    ]


def test_a_device_shares_no_name_or_path_with_the_containers_mounts() -> None:
    mounts = [{"name": "blk", "mountPath": "/dev/a"}]
    assert texts(job([device("blk", "/dev/a")], mounts=mounts)) == [
        f'{C}.volumeMounts[0].name: Invalid value: "blk": must not already exist in volumeDevices',
        f'{C}.volumeMounts[0].mountPath: Invalid value: "/dev/a": must not already exist as a path in volumeDevices',
        f'{C}.volumeDevices[0].name: Invalid value: "blk": must not already exist in volumeMounts',
        f'{C}.volumeDevices[0].devicePath: Invalid value: "/dev/a": must not already exist as a path in volumeMounts',
    ]
    other = [{"name": "scratch", "mountPath": "/dev/a"}]
    assert texts(job([device("blk", "/dev/a")], mounts=other)) == [
        f'{C}.volumeMounts[0].mountPath: Invalid value: "/dev/a": must not already exist as a path in volumeDevices',
        f'{C}.volumeDevices[0].devicePath: Invalid value: "/dev/a": must not already exist as a path in volumeMounts',
    ]
