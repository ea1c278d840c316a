"""mpigen.checks.pod's rules of the pod's operating system, Windows host-process pods, user namespaces,
AppArmor annotations and pod-level limits, each accepted and refused, at the Kubernetes versions where
they changed. tests/cluster/test_pod_rules.py holds the verdicts to a real kube-apiserver's."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import V1, V2BETA1, make_job, pod

import mpigen
from mpigen.checks.pod import check_object, server_path

AT = "spec.template.spec"
APPARMOR = "container.apparmor.security.beta.kubernetes.io/"


def ctr(name: str = "main", **fields: Any) -> dict[str, Any]:
    return {"name": name, "image": "x", **fields}


def job(spec: dict[str, Any], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """A Job running a pod of `spec` (one container `main` unless `spec` says otherwise)."""
    template: dict[str, Any] = {"spec": {"restartPolicy": "Never", "containers": [ctr()], **spec}}
    if annotations is not None:
        template["metadata"] = {"annotations": annotations}
    return {"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": template}}


def texts(obj: dict[str, Any], version: tuple[int, int] = (1, 37)) -> list[str]:
    return [f"{server_path(v.path)}: {v.body}" for v in check_object(obj, version)]


# spec.os


def test_an_os_name_is_linux_or_windows() -> None:
    assert texts(job({"os": {"name": "linux"}})) == texts(job({"os": {"name": "windows"}})) == []
    assert texts(job({"os": {"name": "Windows"}})) == [
        f'{AT}.os: Unsupported value: "Windows": supported values: "linux", "windows"'
    ]
    assert texts(job({"os": {}})) == [f"{AT}.os.name: Required value"]
    assert texts(job({"os": {"name": ""}}), (1, 33)) == [f"{AT}.os.name: Required value: cannot be empty"]


def test_a_linux_pod_sets_no_windows_options() -> None:
    windows = {"windowsOptions": {"runAsUserName": "ContainerUser"}}
    assert texts(job({"securityContext": windows})) == []  # no os: either
    assert texts(
        job(
            {
                "os": {"name": "linux"},
                "securityContext": windows,
                "containers": [ctr(securityContext=windows)],
            }
        )
    ) == [
        f"{AT}.securityContext.windowsOptions: Forbidden: windows options cannot be set for a linux pod",
        f"{AT}.containers[0].securityContext.windowsOptions: Forbidden: windows options cannot be set for a linux pod",
    ]
    assert texts(job({"os": {"name": "linux"}, "securityContext": {"runAsUser": 1, "fsGroup": 2}})) == []


def test_a_windows_pod_sets_none_of_the_linux_fields() -> None:
    context = {
        "runAsNonRoot": True,
        "runAsUser": 1,
        "sysctls": [],
        "supplementalGroups": [],
        "supplementalGroupsPolicy": "Merge",
        "windowsOptions": {"runAsUserName": "ContainerUser"},
    }
    own = {
        "runAsNonRoot": True,
        "privileged": False,
        "procMount": "Default",
        "capabilities": {"drop": ["ALL"]},
    }
    spec = {
        "os": {"name": "windows"},
        "securityContext": context,
        "hostUsers": True,
        "shareProcessNamespace": False,
    }
    forbidden = "Forbidden: cannot be set for a windows pod"
    assert texts(job({**spec, "initContainers": [ctr("init", securityContext=own)]})) == [
        f"{AT}.securityContext.runAsUser: {forbidden}",
        f"{AT}.securityContext.supplementalGroups: {forbidden}",
        f"{AT}.securityContext.supplementalGroupsPolicy: {forbidden}",
        f"{AT}.hostUsers: {forbidden}",
        f"{AT}.shareProcessNamespace: {forbidden}",
        f"{AT}.initContainers[0].securityContext.capabilities: {forbidden}",
        f"{AT}.initContainers[0].securityContext.privileged: {forbidden}",
        f"{AT}.initContainers[0].securityContext.procMount: {forbidden}",
    ]
    # before 1.33 the server drops hostUsers and supplementalGroupsPolicy unread
    assert len(texts(job(spec), (1, 32))) == 3
    clean = {"runAsNonRoot": True, "windowsOptions": {"runAsUserName": "ContainerUser"}}
    assert texts(job({"os": {"name": "windows"}, "securityContext": clean, "hostPID": False})) == []


def test_mpigens_own_init_containers_count_on_windows() -> None:
    windows = pod("launcher", command=["mpirun", "true"])
    windows["spec"]["os"] = {"name": "windows"}
    worker = pod("worker")
    worker["spec"]["os"] = {"name": "windows"}
    assert mpigen.compile(make_job(V2BETA1, launcher=windows, worker=worker))
    with pytest.raises(mpigen.CompileError) as caught:
        mpigen.compile(
            make_job(V1, launcher=windows, worker=worker)
        )  # its launcher's init containers are hardened
    assert any(
        "initContainers[0].securityContext.seccompProfile: Forbidden: cannot be set for a windows pod"
        in issue.message
        for issue in caught.value.issues
    )


# Windows host-process pods


def host_process(of_pod: bool | None, *own: bool | None, host_network: bool = True) -> dict[str, Any]:
    spec: dict[str, Any] = {"hostNetwork": host_network} if host_network else {}
    if of_pod is not None:
        spec["securityContext"] = {"windowsOptions": {"hostProcess": of_pod}}
    containers = [
        ctr(
            f"c{i}",
            **({"securityContext": {"windowsOptions": {"hostProcess": value}}} if value is not None else {}),
        )
        for i, value in enumerate(own)
    ]
    return job({**spec, "containers": containers})


def test_a_host_process_pod_runs_only_host_process_containers_on_the_host_network() -> None:
    assert texts(host_process(True, None, True)) == []
    assert texts(host_process(None, True, True)) == []
    assert texts(host_process(False, None, False)) == []
    assert texts(host_process(None, True, None)) == [
        f'{AT}: Invalid value: "": If pod contains any hostProcess containers then all containers must be HostProcess containers'
    ]
    assert texts(host_process(True, None, host_network=False)) == [
        f"{AT}.hostNetwork: Invalid value: false: hostNetwork must be true if pod contains any hostProcess containers"
    ]
    assert texts(host_process(True, False)) == [
        (
            f"{AT}.containers[0].securityContext.windowsOptions.hostProcess: Invalid value: false: "
            "pod hostProcess value must be identical if both are specified, was true"
        )
    ]


# hostUsers


def test_a_pod_in_its_own_user_namespace_shares_no_host_namespace() -> None:
    assert texts(job({"hostUsers": False})) == []
    assert texts(job({"hostUsers": True, "hostNetwork": True, "hostPID": True})) == []
    own = job({"hostUsers": False, "hostNetwork": True, "hostPID": True, "hostIPC": True})
    assert texts(own) == [
        f"{AT}.hostNetwork: Forbidden: when `hostUsers` is false",
        f"{AT}.HostPID: Forbidden: when `hostUsers` is false",
        f"{AT}.HostIPC: Forbidden: when `hostUsers` is false",
    ]
    assert texts(job({"hostUsers": False, "hostPID": True}), (1, 33)) == [
        f"{AT}.HostPID: Forbidden: when `pod.Spec.HostUsers` is false"
    ]
    assert texts(own, (1, 32)) == []  # dropped unread while UserNamespacesSupport is off


def test_block_devices_need_the_host_user_namespace_from_1_34() -> None:
    devices = [{"name": "blk", "devicePath": "/dev/xvdb"}]
    claim = [{"name": "blk", "persistentVolumeClaim": {"claimName": "blk"}}]
    obj = job({"hostUsers": False, "volumes": claim, "containers": [ctr(volumeDevices=devices)]})
    assert texts(obj) == [f"{AT}.containers[0].volumeDevices: Forbidden: when `hostUsers` is false"]
    assert texts(obj, (1, 33)) == []


@pytest.mark.parametrize(
    ("mount", "host_users", "expected"),
    [
        ("Default", None, []),
        ("Unmasked", False, []),
        ("Unmasked", None, ['Invalid value: "Unmasked": `hostUsers` must be false to use `Unmasked`']),
        ("Unmasked", True, ['Invalid value: "Unmasked": `hostUsers` must be false to use `Unmasked`']),
        ("Bogus", False, ['Unsupported value: "Bogus": supported values: "Default", "Unmasked"']),
    ],
)
def test_proc_mount(mount: str, host_users: bool | None, expected: list[str]) -> None:
    spec: dict[str, Any] = {"containers": [ctr(securityContext={"procMount": mount})]}
    if host_users is not None:
        spec["hostUsers"] = host_users
    assert texts(job(spec)) == [f"{AT}.containers[0].securityContext.procMount: {e}" for e in expected]
    assert texts(job(spec), (1, 32)) == []  # read as Default while ProcMountType is off


# AppArmor annotations


def test_an_apparmor_annotation_names_a_container_and_a_readable_profile() -> None:
    good = {
        APPARMOR + "main": "runtime/default",
        APPARMOR + "init": "localhost/my-profile",
    }
    assert texts(job({"initContainers": [ctr("init")]}, good)) == []
    assert texts(job({}, {APPARMOR + "main": ""})) == []
    assert texts(job({}, {APPARMOR + "other": "unconfined", APPARMOR + "main": "docker-default"})) == [
        f'spec.template.annotations[{APPARMOR}other]: Invalid value: "other": container not found',
        (
            f'spec.template.annotations[{APPARMOR}main]: Invalid value: "docker-default": '
            'invalid AppArmor profile name: "docker-default"'
        ),
    ]
    assert texts(job({}, {APPARMOR + "main": "bogus"}), (1, 25)) != []


@pytest.mark.parametrize(
    ("annotation", "profile", "refused"),
    [
        ("runtime/default", {"type": "RuntimeDefault"}, ""),
        ("unconfined", {"type": "Unconfined"}, ""),
        ("localhost/p", {"type": "Localhost", "localhostProfile": "p"}, ""),
        (
            "unconfined",
            {"type": "RuntimeDefault"},
            "type: Forbidden: apparmor type in annotation and field must match",
        ),
        ("runtime/default", {"type": "Localhost", "localhostProfile": "p"}, "type: Forbidden: apparmor type"),
        (
            "localhost/q",
            {"type": "Localhost", "localhostProfile": "p"},
            "localhostProfile: Forbidden: apparmor profile in annotation and field must match",
        ),
    ],
)
def test_an_apparmor_annotation_agrees_with_the_field_from_1_30(
    annotation: str, profile: dict[str, str], refused: str
) -> None:
    for spec in (
        {"containers": [ctr(securityContext={"appArmorProfile": profile})]},
        {"securityContext": {"appArmorProfile": profile}},  # the pod's applies to the container
    ):
        found = texts(job(spec, {APPARMOR + "main": annotation}))
        if refused:
            (text,) = found
            assert text.startswith(f"{AT}.containers[0].securityContext.appArmorProfile.{refused}")
        else:
            assert found == []
        assert texts(job(spec, {APPARMOR + "main": annotation}), (1, 29)) == []
        assert texts(job({**spec, "os": {"name": "windows"}}, {APPARMOR + "main": annotation})) == [
            (
                f"{AT}.{'containers[0].' if 'containers' in spec else ''}securityContext.appArmorProfile: "
                "Forbidden: cannot be set for a windows pod"
            )
        ]


def test_an_apparmor_annotation_is_reported_at_the_input_annotation() -> None:
    worker = pod("worker")
    worker["metadata"] = {"annotations": {APPARMOR + "nobody": "runtime/default"}}
    with pytest.raises(mpigen.CompileError) as caught:
        mpigen.compile(make_job(V2BETA1, worker=worker))
    (issue,) = caught.value.issues
    assert issue.path == (
        "spec",
        "mpiReplicaSpecs",
        "Worker",
        "template",
        "metadata",
        "annotations",
        APPARMOR + "nobody",
    )
    assert f"spec.template.annotations[{APPARMOR}nobody]: " in issue.message


# Pod-level limits


def limited(pod_limits: dict[str, str], *containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return job({"containers": list(containers) or [ctr()], "resources": {"limits": pod_limits}, **spec})


def test_each_container_limit_is_at_most_the_pod_limit() -> None:
    two = ctr(resources={"limits": {"cpu": "2", "memory": "1Gi"}})
    assert texts(limited({"cpu": "2", "memory": "1Gi"}, two, {**two, "name": "b"})) == []  # not summed
    assert texts(limited({"cpu": "1500m"}, two)) == [
        f'{AT}.resources.containers[0][cpu].limits: Invalid value: "2": must be less than or equal to pod limits of 1500m'
    ]
    sidecar = ctr("side", restartPolicy="Always", resources={"limits": {"cpu": "4"}})
    assert texts(limited({"cpu": "2"}, two, initContainers=[sidecar])) == []  # regular containers only
    assert texts(limited({"cpu": "1"}, two), (1, 33)) == []  # dropped unread while PodLevelResources is off


def test_the_pod_hugepages_limit_is_at_least_the_containers_aggregate() -> None:
    def pages(limit: str, name: str = "main", **fields: Any) -> dict[str, Any]:
        return ctr(name, resources={"limits": {"memory": "1Gi", "hugepages-2Mi": limit}}, **fields)

    pod_limits = {"memory": "4Gi", "hugepages-2Mi": "4Mi"}
    assert texts(limited(pod_limits, pages("2Mi"), pages("2Mi", "b"))) == []
    assert (
        texts(limited(pod_limits, pages("2Mi"), initContainers=[pages("4Mi", "init")])) == []
    )  # one at a time
    assert texts(
        limited(pod_limits, pages("4Mi"), initContainers=[pages("2Mi", "side", restartPolicy="Always")])
    ) == [
        (
            f'{AT}.resources.limits[hugepages-2Mi]: Invalid value: "4Mi": must be greater than or equal to aggregate '
            "container limits of 6291456"
        )
    ]


def test_a_templates_pod_level_requests_are_not_defaulted_from_its_limits() -> None:
    one, other = ctr(resources={"limits": {"cpu": "1"}}), ctr("b", resources={"limits": {"cpu": "1"}})
    assert texts(limited({"cpu": "1"}, one, other)) == []
    requested = job({"containers": [one, other], "resources": {"requests": {"cpu": "1"}}})
    assert texts(requested) == []  # the containers request nothing (a Pod's would request their limits)
    asked = [ctr(name, resources={"requests": {"cpu": "1"}}) for name in ("main", "b")]
    assert texts(job({"containers": asked, "resources": {"requests": {"cpu": "1"}}})) == [
        (
            f'{AT}.resources.requests[cpu]: Invalid value: "1": must be greater than or equal to aggregate container '
            "requests of 2"
        )
    ]
