"""mpigen.checks.pod in process: where pod templates are found, rules that depend on the Kubernetes version,
fields the server defaults, and how a refusal reaches the input job's field. The verdicts themselves are
held to a real kube-apiserver's by tests/cluster/test_pod_rules.py."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import V1ALPHA1, V2BETA1, make_job, pod

import mpigen
from mpigen.checks.pod import check_object, pod_templates, server_path
from mpigen.checks.templates import template_paths
from mpigen.targets import all_kinds

# Kubernetes' kinds and every target's own (a render hands the checks its target's).
PATHS = template_paths(all_kinds())

POD = {"spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]}}


def bad(**fields: Any) -> dict[str, Any]:
    return {"spec": {**POD["spec"], **fields}}


def job(spec: dict[str, Any]) -> dict[str, Any]:
    """A Job running a pod of `spec` (restartPolicy Never unless `spec` says otherwise)."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "spec": {"template": {"spec": {"restartPolicy": "Never", **spec}}},
    }


def texts(obj: dict[str, Any], version: tuple[int, int] = (1, 37)) -> list[str]:
    return [f"{server_path(v.path)}: {v.body}" for v in check_object(obj, version, PATHS)]


@pytest.mark.parametrize(
    ("obj", "paths"),
    [
        ({"apiVersion": "apps/v1", "kind": "StatefulSet", "spec": {"template": POD}}, [("spec", "template")]),
        (
            {
                "apiVersion": "batch/v1",
                "kind": "CronJob",
                "spec": {"jobTemplate": {"spec": {"template": POD}}},
            },
            [("spec", "jobTemplate", "spec", "template")],
        ),
        (
            {
                "apiVersion": "jobset.x-k8s.io/v1alpha2",
                "kind": "JobSet",
                "spec": {
                    "replicatedJobs": [
                        {"template": {"spec": {"template": POD}}},
                        {"template": {"spec": {"template": POD}}},
                    ]
                },
            },
            [
                ("spec", "replicatedJobs", 0, "template", "spec", "template"),
                ("spec", "replicatedJobs", 1, "template", "spec", "template"),
            ],
        ),
        (
            {
                "apiVersion": "batch.volcano.sh/v1alpha1",
                "kind": "Job",
                "spec": {"tasks": [{"template": POD}]},
            },
            [("spec", "tasks", 0, "template")],
        ),
        ({"apiVersion": "v1", "kind": "ConfigMap", "data": {"template": "x"}}, []),
    ],
)
def test_pod_templates_are_found_by_kind(obj: dict[str, Any], paths: list[tuple[Any, ...]]) -> None:
    assert [path for path, _ in pod_templates(obj, PATHS)] == paths


def test_a_jobset_template_is_checked_at_its_own_path() -> None:
    template = bad(dnsPolicy="Sometimes")
    obj = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "spec": {
            "replicatedJobs": [
                {"template": {"spec": {"template": POD}}},
                {"template": {"spec": {"template": template}}},
            ]
        },
    }
    expected = (
        'spec.replicatedJobs[1].template.spec.template.spec.dnsPolicy: Unsupported value: "Sometimes": '
        'supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"'
    )
    assert texts(obj) == [expected]


def test_env_names_are_relaxed_from_kubernetes_1_32() -> None:
    obj = job({"containers": [{"name": "main", "image": "x", "env": [{"name": "MY VAR", "value": "1"}]}]})
    assert texts(obj, (1, 32)) == []
    expected = (
        'spec.template.spec.containers[0].env[0].name: Invalid value: "MY VAR": a valid environment '
        "variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit"
    )
    assert texts(obj, (1, 31)) == [expected]


def test_fields_the_server_defaults_are_not_refused_empty() -> None:
    container = {
        "name": "main",
        "image": "x",
        "imagePullPolicy": "",
        "terminationMessagePolicy": "",
        "ports": [{"containerPort": 80, "protocol": ""}],
        "livenessProbe": {"exec": {"command": ["true"]}, "successThreshold": 0},
    }
    obj = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "spec": {"template": {"spec": {"dnsPolicy": "", "restartPolicy": "", "containers": [container]}}},
    }
    assert texts(obj) == []


@pytest.mark.parametrize(
    ("quantity", "refused"),
    [
        ("1", False),
        ("500m", False),
        ("1.G", False),
        (".5", False),
        ("1e3", False),
        ("1E", False),
        (0.25, False),
        ("one", True),
        ("1GB", True),
        ("1K", True),
        ("1e", True),
        ("1Ki5", True),
        ("-1", True),
        ("9" * 5000, False),  # more digits than Python's int() reads at once; the server reads any number
        ("1e" + "9" * 5000, True),  # an exponent beyond what the server's quantities hold
    ],
)
def test_quantities_as_the_server_reads_them(quantity: object, refused: bool) -> None:
    container = {"name": "main", "image": "x", "resources": {"requests": {"memory": quantity}}}
    assert bool(texts(job({"containers": [container]}))) is refused


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            job({**POD["spec"], "restartPolicy": "Always"}),
            ['spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'],
        ),
        (job({**POD["spec"], "activeDeadlineSeconds": 60}), []),
        (
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "spec": {"template": bad(activeDeadlineSeconds=60)},
            },
            [
                "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported"
            ],
        ),
    ],
)
def test_what_each_workload_asks_of_its_template(obj: dict[str, Any], expected: list[str]) -> None:
    assert texts(obj) == expected


def test_a_refusal_is_reported_at_the_input_field_and_names_the_server_field() -> None:
    job = make_job(
        V2BETA1,
        worker=pod(
            "worker", ports=[{"name": "http", "containerPort": 80}, {"name": "http", "containerPort": 81}]
        ),
    )
    with pytest.raises(mpigen.CompileError) as caught:
        mpigen.compile(job)
    (issue,) = caught.value.issues
    assert issue.path == (
        "spec",
        "mpiReplicaSpecs",
        "Worker",
        "template",
        "spec",
        "containers",
        0,
        "ports",
        1,
        "name",
    )
    assert (
        issue.message
        == 'the API server would refuse StatefulSet pi-worker: spec.template.spec.containers[0].ports[1].name: Duplicate value: "http"'
    )


def test_one_template_for_both_roles_is_reported_once() -> None:
    job = make_job(V1ALPHA1, worker=pod("worker", imagePullPolicy="Sometimes"))
    with pytest.raises(mpigen.CompileError) as caught:
        mpigen.compile(job)
    assert [issue.path for issue in caught.value.issues] == [
        ("spec", "template", "spec", "containers", 0, "imagePullPolicy")
    ]


def test_no_validate_skips_the_pod_rules() -> None:
    job = make_job(V2BETA1, worker=bad(dnsPolicy="Sometimes"))
    assert mpigen.compile(job, mpigen.Options(validate=False))


def sleeping(seconds: int, **spec: Any) -> dict[str, Any]:
    hook = {"preStop": {"sleep": {"seconds": seconds}}}
    return job({"containers": [{"name": "main", "image": "x", "lifecycle": hook}], **spec})


def test_a_sleep_handler_follows_the_kubernetes_version_and_the_grace_period() -> None:
    assert texts(sleeping(0), (1, 33)) == []
    assert texts(sleeping(0), (1, 32)) == [
        (
            "spec.template.spec.containers[0].lifecycle.preStop.sleep: Invalid value: 0: must be greater than 0 "
            "and less than terminationGracePeriodSeconds (30)"
        )
    ]
    assert texts(sleeping(0), (1, 29)) == []  # the field is dropped unread before 1.30
    assert texts(sleeping(31)) == [
        (
            "spec.template.spec.containers[0].lifecycle.preStop.sleep: Invalid value: 31: must be non-negative "
            "and less than terminationGracePeriodSeconds (30)"
        )
    ]
    assert texts(sleeping(31, terminationGracePeriodSeconds=60)) == []
    assert texts(sleeping(5, terminationGracePeriodSeconds=0)) != []


def affinity_term(**term: Any) -> dict[str, Any]:
    term = {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "x"}}, **term}
    affinity = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    return job({**POD["spec"], "affinity": affinity})


def test_match_label_keys_of_pod_affinity_are_read_from_kubernetes_1_31() -> None:
    obj = affinity_term(matchLabelKeys=["a b"])
    assert texts(obj, (1, 30)) == []
    assert [t.split(":")[0] for t in texts(obj, (1, 31))] == [
        (
            "spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
            ".matchLabelKeys[0]"
        )
    ]
    assert texts(affinity_term(matchLabelKeys=["app"], mismatchLabelKeys=["app"])) == [
        (
            "spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
            '.matchLabelKeys[0]: Invalid value: "app": exists in both matchLabelKeys and mismatchLabelKeys'
        )
    ]


def test_label_selectors_of_affinity_terms_and_spread_constraints_are_checked() -> None:
    selector = {"matchExpressions": [{"key": "app", "operator": "Exists", "values": ["x"]}]}
    assert texts(affinity_term(labelSelector=selector)) == [
        (
            "spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
            ".labelSelector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is "
            "'Exists' or 'DoesNotExist'"
        )
    ]
    assert texts(affinity_term(namespaces=["Default"]))[0].startswith(
        "spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
        '.namespace: Invalid value: "Default"'
    )
    spread = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
    bad_selector = {**spread, "labelSelector": {"matchLabels": {"app": "a b"}}}
    assert texts(job({**POD["spec"], "topologySpreadConstraints": [bad_selector]}))[0].startswith(
        'spec.template.spec.topologySpreadConstraints[0].labelSelector.matchLabels: Invalid value: "a b"'
    )


def test_match_label_keys_of_topology_spread_follow_the_kubernetes_version() -> None:
    spread = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
    in_selector = job(
        {
            **POD["spec"],
            "topologySpreadConstraints": [
                {**spread, "matchLabelKeys": ["app"], "labelSelector": {"matchLabels": {"app": "x"}}}
            ],
        }
    )
    assert texts(in_selector, (1, 34)) == []
    assert texts(in_selector, (1, 33)) == [
        (
            "spec.template.spec.topologySpreadConstraints[0].matchLabelKeys[0]: Invalid value: "
            '"app": exists in both matchLabelKeys and labelSelector'
        )
    ]
    assert texts(in_selector, (1, 26)) == []
    without = job({**POD["spec"], "topologySpreadConstraints": [{**spread, "matchLabelKeys": ["app"]}]})
    forbidden = (
        "spec.template.spec.topologySpreadConstraints[0].matchLabelKeys: Forbidden: "
        "must not be specified when labelSelector is not set"
    )
    assert texts(without, (1, 37)) == texts(without, (1, 30)) == [forbidden]


def test_host_ports_are_taken_once_by_the_regular_containers_and_once_in_each_init_container() -> None:
    def ctr(name: str, *ports: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "image": "x", "ports": list(ports)}

    http, udp = (
        {"containerPort": 80, "hostPort": 80},
        {"containerPort": 80, "hostPort": 80, "protocol": "UDP"},
    )
    assert texts(job({"containers": [ctr("a", http), ctr("b", {**http, "protocol": "TCP"})]})) == [
        'spec.template.spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//80"'
    ]
    assert texts(job({"containers": [ctr("a", http), ctr("b", udp)]})) == []
    assert texts(job({"containers": [ctr("a", http)], "initContainers": [ctr("i", http)]})) == []
    assert texts(job({"containers": [ctr("a")], "initContainers": [ctr("i", http, http)]})) == [
        'spec.template.spec.initContainers[0].ports[1].hostPort: Duplicate value: "TCP//80"'
    ]


def test_sysctls_of_the_host_namespaces_are_refused_with_them() -> None:
    def sysctls(*names: str, **spec: Any) -> dict[str, Any]:
        context = {"sysctls": [{"name": name, "value": "1"} for name in names]}
        return job({**POD["spec"], "securityContext": context, **spec})

    assert texts(sysctls("net/ipv4/ip_forward", "kernel.shm_rmid_forced")) == []
    assert texts(sysctls("net/ipv4/ip_forward", hostNetwork=True)) == [
        (
            "spec.template.spec.securityContext.sysctls[0].name: Invalid value: "
            "\"net/ipv4/ip_forward\": may not be specified when 'hostNetwork' is true"
        )
    ]
    assert len(texts(sysctls("fs.mqueue.msg_max", "kernel.msgmax", "net.core.x", hostIPC=True))) == 2
    assert [t.split(": ")[1] for t in texts(sysctls("a..b", "", "x", "x"))] == [
        "Invalid value",
        "Required value",
        "Duplicate value",
    ]


def test_resource_claims_are_checked_from_kubernetes_1_34() -> None:
    container = {"name": "main", "image": "x", "resources": {"claims": [{"name": "gpu"}, {"name": "nic"}]}}
    obj = job(
        {"containers": [container], "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]}
    )
    expected = [
        (
            'spec.template.spec.containers[0].resources.claims[1]: Not found: "nic": must be one of the names in '
            "pod.spec.resourceClaims: gpu"
        )
    ]
    assert texts(obj, (1, 34)) == expected
    assert texts(obj, (1, 33)) == []  # dropped unread while DynamicResourceAllocation is off
    both = job({**POD["spec"], "resourceClaims": [{"name": "gpu"}]})
    assert [t.split(": ")[1] for t in texts(both)] == ["Invalid value"]


def test_pod_level_resources_are_checked_from_kubernetes_1_34() -> None:
    obj = job(
        {
            **POD["spec"],
            "resources": {"limits": {"cpu": "2", "ephemeral-storage": "1Gi"}, "requests": {"cpu": "3"}},
        }
    )
    assert texts(obj, (1, 34)) == [
        (
            'spec.template.spec.resources.limits[ephemeral-storage]: Unsupported value: "ephemeral-storage": '
            'supported values: "cpu", "hugepages-", "memory"'
        ),
        'spec.template.spec.resources.requests: Invalid value: "3": must be less than or equal to cpu limit of 2',
    ]
    assert texts(obj, (1, 33)) == []  # dropped unread while PodLevelResources is off
