"""mpigen.checks.pod's rules of the annotations the server reads on a pod template (seccomp, tolerations,
pod-deletion cost, mirror pod) and of the pod's supplementalGroupsPolicy, seLinuxChangePolicy and
seLinuxOptions: the server's field paths and words, accepted and refused, at the Kubernetes versions where
they changed. tests/cluster/test_pod_rules.py holds the verdicts to a real kube-apiserver's (families
seccomp, podannot, selinux)."""

from __future__ import annotations

from typing import Any

import pytest

from mpigen.checks.pod import check_object, server_path

AT = "spec.template"
SECCOMP_POD = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_MAIN = "container.seccomp.security.alpha.kubernetes.io/main"
TOLERATIONS = "scheduler.alpha.kubernetes.io/tolerations"
COST = "controller.kubernetes.io/pod-deletion-cost"


def job(spec: dict[str, Any] | None = None, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    template: dict[str, Any] = {
        "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}], **(spec or {})}
    }
    if annotations is not None:
        template["metadata"] = {"annotations": annotations}
    return {"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": template}}


def texts(obj: dict[str, Any], version: tuple[int, int] = (1, 37)) -> list[str]:
    return [f"{server_path(v.path)}: {v.body}" for v in check_object(obj, version)]


# seccomp annotations


@pytest.mark.parametrize(
    "value",
    ["runtime/default", "docker/default", "unconfined", "localhost/p.json", "localhost/", "localhost/a/b"],
)
def test_a_seccomp_annotation_holds_a_profile_the_server_reads(value: str) -> None:
    assert texts(job(annotations={SECCOMP_POD: value, SECCOMP_MAIN: value})) == []


@pytest.mark.parametrize(
    ("value", "body"),
    [
        ("bogus", 'Invalid value: "bogus": must be a valid seccomp profile'),
        ("RuntimeDefault", 'Invalid value: "RuntimeDefault": must be a valid seccomp profile'),
        ("", 'Invalid value: "": must be a valid seccomp profile'),
        ("localhost//abs.json", 'Invalid value: "/abs.json": must be a relative path'),
        ("localhost/../up.json", "Invalid value: \"../up.json\": must not contain '..'"),
    ],
)
def test_a_seccomp_annotation_the_server_cannot_read_is_refused_where_it_names_it(
    value: str, body: str
) -> None:
    assert texts(job(annotations={SECCOMP_POD: value})) == [f"{AT}.annotations.{SECCOMP_POD}: {body}"]
    # a container's annotation need not name a container of the pod
    other = "container.seccomp.security.alpha.kubernetes.io/elsewhere"
    assert texts(job(annotations={other: value})) == [f"{AT}.annotations.{other}: {body}"]


def test_seccomp_annotations_agree_with_the_fields_of_their_own_pod_or_container() -> None:
    runtime = {"seccompProfile": {"type": "RuntimeDefault"}}
    local = {"seccompProfile": {"type": "Localhost", "localhostProfile": "p.json"}}
    assert texts(job({"securityContext": runtime}, {SECCOMP_POD: "docker/default"})) == []
    assert texts(job({"securityContext": local}, {SECCOMP_POD: "localhost/p.json"})) == []
    assert texts(job({"securityContext": runtime}, {SECCOMP_POD: "unconfined"})) == [
        f"{AT}.spec.securityContext.seccompProfile.type: Forbidden: seccomp type in annotation and field must match"
    ]
    assert texts(job({"securityContext": local}, {SECCOMP_POD: "localhost/q.json"})) == [
        (
            f"{AT}.spec.securityContext.seccompProfile.localhostProfile: "
            "Forbidden: seccomp profile in annotation and field must match"
        )
    ]
    contained = {"containers": [{"name": "main", "image": "x", "securityContext": local}]}
    assert texts(job(contained, {SECCOMP_MAIN: "runtime/default"})) == [
        (
            f"{AT}.spec.containers[0].securityContext.seccompProfile.type: "
            "Forbidden: seccomp type in annotation and field must match"
        )
    ]
    # the pod's annotation is not compared with a container's field, nor a container's with the pod's
    assert texts(job(contained, {SECCOMP_POD: "unconfined"})) == []
    assert texts(job({"securityContext": local}, {SECCOMP_MAIN: "unconfined"})) == []


# scheduler.alpha.kubernetes.io/tolerations


@pytest.mark.parametrize(
    "value",
    [
        "",
        "null",
        "[]",
        '[{"key": "example.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]',
        '[{"KEY": "a", "Value": "b", "effect": "NoExecute", "tolerationSeconds": 30, "unknown": [1]}]',
    ],
)
def test_a_tolerations_annotation_go_decodes_into_valid_tolerations_is_accepted(value: str) -> None:
    assert texts(job(annotations={TOLERATIONS: value})) == []


@pytest.mark.parametrize(
    ("value", "detail"),
    [
        ("[{", "unexpected end of JSON input"),
        ("not json", "invalid character 'n' looking for beginning of value"),
        ('[{"key": "a"}] x', "invalid character 'x' after top-level value"),
        ("[NaN]", "invalid character 'N' looking for beginning of value"),
        ('{"key": "a"}', "json: cannot unmarshal object into Go value of type []core.Toleration"),
        ('["a"]', "json: cannot unmarshal string into Go value of type core.Toleration"),
        ('[{"key": 1}]', "json: cannot unmarshal number into Go struct field Toleration.Key of type string"),
        (
            '[{"tolerationSeconds": 1.5}]',
            "json: cannot unmarshal number 1.5 into Go struct field Toleration.TolerationSeconds of type int64",
        ),
        (
            '[{"tolerationSeconds": "30"}]',
            "json: cannot unmarshal string into Go struct field Toleration.TolerationSeconds of type int64",
        ),
    ],
)
def test_a_tolerations_annotation_go_cannot_decode_is_refused_at_the_annotations(
    value: str, detail: str
) -> None:
    assert texts(job(annotations={TOLERATIONS: value})) == [
        f'{AT}.annotations: Invalid value: "{TOLERATIONS}": {detail}'
    ]


def test_each_decoded_toleration_is_checked_as_a_spec_toleration_is() -> None:
    # `null` decodes to an empty toleration: no key, and operator "" (Equal)
    assert texts(job(annotations={TOLERATIONS: "[null]"})) == [
        (
            f'{AT}.annotations.{TOLERATIONS}[0].operator: Invalid value: "": operator must be Exists when '
            '`key` is empty, which means "match all values and all keys"'
        )
    ]
    value = (
        '[{"key": "a b"}, {"key": "a", "tolerationSeconds": 5}, {"operator": "Exists", "effect": "Never"}]'
    )
    found = texts(job(annotations={TOLERATIONS: value}))
    assert [line.split(": ", 1)[0] for line in found] == [
        f"{AT}.annotations.{TOLERATIONS}[0].key",
        f"{AT}.annotations.{TOLERATIONS}[1].effect",
        f"{AT}.annotations.{TOLERATIONS}[2].effect",
    ]
    assert found[0].endswith(
        'Invalid value: "a b": name part must consist of alphanumeric characters, '
        "'-', '_' or '.', and must start and end with an alphanumeric character"
    )
    assert found[1].endswith(
        "Invalid value: \"\": effect must be 'NoExecute' when `tolerationSeconds` is set"
    )
    assert found[2].endswith(
        'Unsupported value: "Never": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'
    )
    spec = job({"tolerations": [{"key": "a b"}]}, {TOLERATIONS: '[{"key": "a b"}]'})
    assert [line.split(": ", 1)[1] for line in texts(spec)] == [found[0].split(": ", 1)[1]] * 2


# controller.kubernetes.io/pod-deletion-cost, kubernetes.io/config.mirror


@pytest.mark.parametrize("cost", ["0", "100", "-5", "-0", "-007", "2147483647", "-2147483648"])
def test_a_deletion_cost_is_a_32_bit_integer(cost: str) -> None:
    assert texts(job(annotations={COST: cost})) == []


@pytest.mark.parametrize("cost", ["+1", "007", "", "1.5", " 1", "2147483648", "-2147483649", "1e3", "٣"])
def test_another_deletion_cost_is_refused_at_its_key(cost: str) -> None:
    assert texts(job(annotations={COST: cost})) == [
        f'{AT}.annotations[{COST}]: Invalid value: "{cost}": must be a 32bit integer'
    ]


def test_a_mirror_pod_annotation_needs_a_node_name() -> None:
    mirror = {"kubernetes.io/config.mirror": "m"}
    assert texts(job({"nodeName": "node-1"}, mirror)) == []
    assert texts(job({}, mirror)) == [
        (
            f'{AT}.annotations[kubernetes.io/config.mirror]: Invalid value: "m": '
            "must set spec.nodeName if mirror pod annotation is set"
        )
    ]


# supplementalGroupsPolicy, seLinuxChangePolicy, seLinuxOptions


def _context(**fields: Any) -> dict[str, Any]:
    return job({"securityContext": fields})


def test_supplemental_groups_policy_is_merge_or_strict_from_1_33() -> None:
    assert texts(_context(supplementalGroupsPolicy="Strict")) == []
    assert texts(_context(supplementalGroupsPolicy="merge")) == [
        (
            f'{AT}.spec.securityContext.supplementalGroupsPolicy: Unsupported value: "merge": '
            'supported values: "Merge", "Strict"'
        )
    ]
    assert texts(_context(supplementalGroupsPolicy=""), (1, 33)) != []
    assert texts(_context(supplementalGroupsPolicy="merge"), (1, 32)) == []  # dropped unread


def test_se_linux_change_policy_allows_mount_option_from_1_37() -> None:
    assert texts(_context(seLinuxChangePolicy="Recursive"), (1, 33)) == []
    assert texts(_context(seLinuxChangePolicy="MountOption")) == []
    assert texts(_context(seLinuxChangePolicy="MountOption"), (1, 36)) == [
        (
            f'{AT}.spec.securityContext.seLinuxChangePolicy: Unsupported value: "MountOption": '
            'supported values: "Recursive"'
        )
    ]
    assert texts(_context(seLinuxChangePolicy="Never")) == [
        (
            f'{AT}.spec.securityContext.seLinuxChangePolicy: Unsupported value: "Never": '
            'supported values: "MountOption", "Recursive"'
        )
    ]
    assert texts(_context(seLinuxChangePolicy="Never"), (1, 32)) == []  # dropped unread


def test_se_linux_options_take_any_values() -> None:
    options = {"user": "u" * 300, "role": "", "type": "not a type!", "level": "bogus level"}
    pod = job(
        {
            "securityContext": {"seLinuxOptions": options},
            "containers": [{"name": "main", "image": "x", "securityContext": {"seLinuxOptions": options}}],
        }
    )
    assert texts(pod) == []
