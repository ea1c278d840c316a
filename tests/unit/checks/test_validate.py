"""Tests for mpigen.checks.kube.validator: strict, offline schema checks of the objects mpigen emits."""

from __future__ import annotations

import copy
import json
import subprocess
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mpigen.checks.kube import schemas as kubeschema
from mpigen.checks.kube import validator as validate
from mpigen.checks.kube.validator import validate_object as validate_with_kinds
from mpigen.checks.kube.validator import validate_pod_template
from mpigen.checks.kube.versions import DEFAULT_KUBE_VERSION, SUPPORTED_KUBE_VERSIONS, parse_kube_version
from mpigen.errors import Issue
from mpigen.targets import all_kinds, kind_schemas


def validate_object(obj: Any, version: str | None = None) -> list[Issue]:
    """The validator with every target's own kinds, as a render of that target hands them in."""
    return validate_with_kinds(obj, version, all_kinds())


Obj = dict[str, Any]
LABELS = {"mpi_job_name": "pi"}
META = {"name": "pi", "namespace": "default", "labels": LABELS}


def pod_template(restart_policy: str | None = None) -> Obj:
    spec: Obj = {
        "serviceAccountName": "pi-launcher",
        "containers": [
            {
                "name": "pi",
                "image": "mpioperator/mpi-pi:openmpi",
                "command": ["mpirun", "-np", "4", "/home/mpiuser/pi"],
                "env": [{"name": "OMPI_MCA_plm_rsh_agent", "value": "/etc/mpi/kubexec.sh"}],
                "resources": {"limits": {"nvidia.com/gpu": 1, "cpu": "500m", "memory": "1Gi"}},
                "volumeMounts": [{"name": "mpi-job-config", "mountPath": "/etc/mpi"}],
            }
        ],
        "volumes": [
            {
                "name": "mpi-job-config",
                "configMap": {
                    "name": "pi-config",
                    "items": [
                        {"key": "kubexec.sh", "path": "kubexec.sh", "mode": 365},
                        {"key": "hostfile", "path": "hostfile", "mode": 292},
                    ],
                },
            }
        ],
    }
    if restart_policy:
        spec["restartPolicy"] = restart_policy
    return {"metadata": {"labels": LABELS}, "spec": spec}


def podgroup(api_version: str, **spec: Any) -> Obj:
    return {"apiVersion": api_version, "kind": "PodGroup", "metadata": META, "spec": spec}


def volcano_podgroup() -> Obj:
    return podgroup(
        "scheduling.volcano.sh/v1beta1",
        minMember=3,
        queue="default",
        priorityClassName="high",
        minResources={"nvidia.com/gpu": 2, "cpu": "1500m", "memory": "3Gi"},
        minTaskMember={"launcher": 1, "worker": 2},
        networkTopology={"mode": "hard", "highestTierAllowed": 1},
    )


def plugins_podgroup() -> Obj:
    return podgroup(
        "scheduling.x-k8s.io/v1alpha1", minMember=3, minResources={"cpu": "3"}, scheduleTimeoutSeconds=60
    )


VALID: dict[str, Callable[[], Obj]] = {
    "ServiceAccount": lambda: {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": META},
    "Role": lambda: {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": META,
        "rules": [
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
            {
                "apiGroups": [""],
                "resources": ["pods/exec"],
                "verbs": ["create"],
                "resourceNames": ["pi-worker-0"],
            },
        ],
    },
    "RoleBinding": lambda: {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": META,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pi"},
        "subjects": [{"kind": "ServiceAccount", "name": "pi", "namespace": "default"}],
    },
    "ConfigMap": lambda: {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": META,
        "data": {"hostfile": "pi-worker-0 slots=1\npi-worker-1 slots=1\n", "kubexec.sh": "#!/bin/sh\n"},
    },
    "Service": lambda: {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": META,
        "spec": {"clusterIP": "None", "selector": LABELS, "publishNotReadyAddresses": True},
    },
    "StatefulSet": lambda: {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": META,
        "spec": {
            "podManagementPolicy": "Parallel",
            "replicas": 2,
            "selector": {"matchLabels": LABELS},
            "serviceName": "pi-worker",
            "template": pod_template(),
        },
    },
    "Job": lambda: {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": META,
        "spec": {"backoffLimit": 6, "template": pod_template("OnFailure")},
    },
    "PodDisruptionBudget": lambda: {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": META,
        "spec": {"minAvailable": 3, "selector": {"matchLabels": LABELS}},
    },
    "PodGroup-volcano": volcano_podgroup,
    "PodGroup-scheduler-plugins": plugins_podgroup,
    # The CRD schemas with array and string sizes (maxItems, minItems, maxLength) and defaults.
    "JobSet": lambda: {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": META,
        "spec": {
            "failurePolicy": {"maxRestarts": 3, "restartStrategy": "Recreate"},
            "network": {"enableDNSHostnames": True},
            "replicatedJobs": [
                {
                    "name": "worker",
                    "replicas": 1,
                    "template": {"spec": {"parallelism": 2, "template": pod_template("Never")}},
                },
                {
                    "name": "launcher",
                    "dependsOn": [{"name": "worker", "status": "Ready"}],
                    "template": {"spec": {"template": pod_template("Never")}},
                },
            ],
            "successPolicy": {"operator": "All", "targetReplicatedJobs": ["launcher"]},
        },
    },
    "VolcanoJob": lambda: {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": META,
        "spec": {
            "minAvailable": 3,
            "plugins": {"svc": ["--disable-network-policy"]},
            "tasks": [
                {"name": "launcher", "replicas": 1, "template": pod_template("OnFailure")},
                {"name": "worker", "replicas": 2, "template": pod_template("Always")},
            ],
        },
    },
}
VERSIONS = sorted({"1.25", DEFAULT_KUBE_VERSION})


def valid(name: str) -> Obj:
    """A fresh valid object (deep-copied: the fixtures share META and LABELS)."""
    return copy.deepcopy(VALID[name]())


def parent_of(doc: Any, path: tuple[str | int, ...]) -> Any:
    """The object or list holding `path`, making missing objects on the way."""
    for part in path[:-1]:
        doc = doc.setdefault(part, {}) if isinstance(doc, dict) else doc[part]
    return doc


def with_change(name: str, path: tuple[str | int, ...], value: Any) -> Obj:
    """A valid object of `name` with the value at `path` set (a new key if it is not there)."""
    obj = valid(name)
    parent_of(obj, path)[path[-1]] = value
    return obj


def messages(issues: list[Issue]) -> set[tuple[tuple[str | int, ...], str]]:
    return {(issue.path, issue.message) for issue in issues}


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", VALID)
def test_valid_objects_pass(name: str, version: str) -> None:
    assert validate_object(valid(name), version) == []


def test_supported_versions_are_discovered_and_sorted() -> None:
    assert "1.25" in SUPPORTED_KUBE_VERSIONS
    numeric = [tuple(int(p) for p in v.split(".")) for v in SUPPORTED_KUBE_VERSIONS]
    assert numeric == sorted(set(numeric))
    assert DEFAULT_KUBE_VERSION == SUPPORTED_KUBE_VERSIONS[-1]


@pytest.mark.parametrize(
    ("text", "expected"), [("1.30", "1.30"), ("v1.30", "1.30"), ("1.30.2", "1.30"), (" v1.25.0 ", "1.25")]
)
def test_parse_kube_version_accepts(text: str, expected: str) -> None:
    assert parse_kube_version(text) == expected


@pytest.mark.parametrize("text", ["1.24", "1.99", "2.0", "latest", "1", "1.30.2.1", "v1.x", "", "1.30-rc1"])
def test_parse_kube_version_refuses_with_the_supported_range(text: str) -> None:
    with pytest.raises(ValueError, match=rf"1\.25 to {SUPPORTED_KUBE_VERSIONS[-1]}"):
        parse_kube_version(text)


def test_validate_object_refuses_an_unsupported_version() -> None:
    with pytest.raises(ValueError, match="unsupported Kubernetes version"):
        validate_object(valid("ConfigMap"), "1.10")


@pytest.mark.parametrize("version", VERSIONS)
def test_typo_in_pod_template_is_reported_at_its_path(version: str) -> None:
    obj = valid("StatefulSet")
    obj["spec"]["template"]["spec"]["containers"][0]["resurces"] = {"limits": {"cpu": "1"}}
    assert validate_object(obj, version) == [
        Issue(
            ("spec", "template", "spec", "containers", 0, "resurces"),
            'unknown field "resurces" (did you mean "resources"?)',
        )
    ]


def test_every_error_is_reported_not_only_the_first() -> None:
    obj = valid("Job")
    obj["metdata"] = {"name": "typo"}
    obj["spec"]["backofLimit"] = 3
    obj["spec"]["template"]["spec"]["containers"][0]["image"] = 7
    obj["spec"]["template"]["spec"]["volumes"][0]["configMap"]["items"][1]["mode"] = "0644"
    assert messages(validate_object(obj)) == {
        (("metdata",), 'unknown field "metdata" (did you mean "metadata"?)'),
        (("spec", "backofLimit"), 'unknown field "backofLimit" (did you mean "backoffLimit"?)'),
        (("spec", "template", "spec", "containers", 0, "image"), "expected string, got integer 7"),
        (
            ("spec", "template", "spec", "volumes", 0, "configMap", "items", 1, "mode"),
            'expected integer, got string "0644"',
        ),
    }


@pytest.mark.parametrize(
    ("name", "path", "value", "message"),
    [
        ("StatefulSet", ("spec", "replicas"), "3", 'expected integer, got string "3"'),
        ("StatefulSet", ("spec", "replicas"), True, "expected integer, got boolean true"),
        ("StatefulSet", ("spec", "replicas"), 2**31, "expected int32, got integer 2147483648"),
        ("StatefulSet", ("spec", "template", "spec", "containers"), {}, "expected array, got object"),
        ("ConfigMap", ("data", "hostfile"), ["a"], "expected string, got array"),
        ("Service", ("spec", "publishNotReadyAddresses"), "yes", 'expected boolean, got string "yes"'),
        # IntOrString and Quantity are oneOf unions: one message naming both types, not one per branch.
        ("PodDisruptionBudget", ("spec", "minAvailable"), 1.5, "expected string or integer, got number 1.5"),
        ("PodDisruptionBudget", ("spec", "minAvailable"), None, "expected string or integer, got null"),
        ("PodGroup-volcano", ("spec", "minMember"), -1, "must be >= 0, got integer -1"),
        ("PodGroup-volcano", ("spec", "minMember"), "3", 'expected integer, got string "3"'),
        (
            "PodGroup-volcano",
            ("spec", "minTaskMember", "worker"),
            2**31,
            "expected int32, got integer 2147483648",
        ),
        (
            "PodGroup-volcano",
            ("spec", "networkTopology", "mode"),
            "strict",
            'expected "hard" or "soft", got string "strict"',
        ),
    ],
)
def test_wrong_values_are_reported_once_with_what_was_expected(
    name: str, path: tuple[str | int, ...], value: Any, message: str
) -> None:
    assert validate_object(with_change(name, path, value)) == [Issue(path, message)]


def test_quantity_of_the_wrong_type_names_both_accepted_types() -> None:
    obj = valid("StatefulSet")
    obj["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = True
    [issue] = validate_object(obj)
    assert issue.message == "expected string or number, got boolean true"
    assert issue.text() == (
        'spec.template.spec.containers[0].resources.limits["nvidia.com/gpu"]: '
        "expected string or number, got boolean true"
    )


def test_missing_required_fields_are_reported_at_their_path() -> None:
    binding = valid("RoleBinding")
    del binding["roleRef"]
    job = valid("Job")
    del job["spec"]["template"]["spec"]["containers"][0]["name"]
    assert validate_object(binding) == [Issue(("roleRef",), 'missing required field "roleRef"')]
    assert validate_object(job) == [
        Issue(("spec", "template", "spec", "containers", 0, "name"), 'missing required field "name"')
    ]


def test_schemas_follow_the_kubernetes_version() -> None:
    # Job.spec.backoffLimitPerIndex appeared in Kubernetes 1.28.
    obj = with_change("Job", ("spec", "backoffLimitPerIndex"), 1)
    assert validate_object(obj, "1.28") == []
    assert validate_object(obj, "v1.27.3") == [
        Issue(("spec", "backoffLimitPerIndex"), 'unknown field "backoffLimitPerIndex"')
    ]


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [
        ("example.com/v1", "Widget"),
        ("apps/v1", "statefulset"),  # kinds are case-sensitive
        ("apps/v2", "StatefulSet"),
        ("v1", "Job"),  # a kind in the wrong group
        ("scheduling.volcano.sh/v1alpha1", "PodGroup"),  # not vendored: not mapped onto scheduling.k8s.io
        ("scheduling.sigs.k8s.io/v1alpha1", "PodGroup"),
        ("../../etc/v1", "Passwd"),
    ],
)
def test_unknown_kind_is_one_issue(api_version: str, kind: str) -> None:
    [issue] = validate_object({"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}})
    assert issue.path == ()
    assert issue.message == (
        f"unknown kind: no schema for {kind} in {api_version} (Kubernetes {DEFAULT_KUBE_VERSION})"
    )


def test_missing_kind_and_non_objects_are_reported() -> None:
    assert validate_object({"apiVersion": "v1", "metadata": {}}) == [
        Issue(("kind",), "expected a non-empty string, got null")
    ]
    assert validate_object([]) == [Issue((), "expected object, got array")]  # type: ignore[arg-type]


@pytest.mark.parametrize("version", VERSIONS)
def test_volcano_podgroup_uses_the_vendored_schema(version: str) -> None:
    # The built-in scheduling.k8s.io PodGroup (1.37) has neither minMember nor queue, and 1.25 has none.
    obj = with_change("PodGroup-volcano", ("spec", "minMembr"), 3)
    obj["spec"]["minResources"]["memory"] = "3GB"
    assert messages(validate_object(obj, version)) == {
        (("spec", "minMembr"), 'unknown field "minMembr" (did you mean "minMember"?)'),
        (("spec", "minResources", "memory"), 'expected a quantity such as "500m" or "2Gi", got string "3GB"'),
    }


@pytest.mark.parametrize("filename", sorted({**kubeschema.VENDORED_SCHEMAS, **kind_schemas()}.values()))
def test_vendored_schemas_are_valid_draft_2020_12(filename: str) -> None:
    import importlib.resources

    from jsonschema import Draft202012Validator

    text = importlib.resources.files("mpigen.schemas").joinpath(filename).read_text(encoding="utf-8")
    schema = json.loads(text)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("version", SUPPORTED_KUBE_VERSIONS)
def test_podgroups_are_never_checked_against_built_in_scheduling_kinds(version: str) -> None:
    # Kubernetes 1.35 to 1.37 ship scheduling.k8s.io PodGroups (v1alpha1 to v1beta1); kubernetes-validate's
    # lookup would pick them for any scheduling.*/v1alpha1 or v1beta1 PodGroup and report false errors.
    assert validate_object(valid("PodGroup-volcano"), version) == []
    assert validate_object(valid("PodGroup-scheduler-plugins"), version) == []
    for api_version in ("scheduling.sigs.k8s.io/v1alpha1", "scheduling.volcano.sh/v1alpha1"):
        [issue] = validate_object({"apiVersion": api_version, "kind": "PodGroup", "spec": {}}, version)
        assert issue.message.startswith("unknown kind: no schema for PodGroup")


def test_scheduler_plugins_podgroup_has_its_own_schema() -> None:
    obj = with_change("PodGroup-scheduler-plugins", ("spec", "queue"), "default")  # a Volcano-only field
    obj["metadata"] = {"namespace": "default"}
    assert messages(validate_object(obj)) == {
        (("spec", "queue"), 'unknown field "queue"'),
        (("metadata", "name"), 'missing required field "name"'),
    }


def test_podgroup_metadata_is_kubernetes_object_meta() -> None:
    obj = with_change("PodGroup-volcano", ("metadata", "labels"), {"app": 1})
    obj["metadata"]["nam"] = "x"
    assert messages(validate_object(obj)) == {
        (("metadata", "labels", "app"), "expected string, got integer 1"),
        (("metadata", "nam"), 'unknown field "nam" (did you mean "name"?)'),
    }


def test_pod_template_paths_are_relative_to_the_template() -> None:
    template = pod_template()
    assert validate_pod_template(template, "1.25") == []
    template["spec"]["containers"][0]["resurces"] = {}
    template["metadata"]["label"] = {}
    assert messages(validate_pod_template(template)) == {
        (("spec", "containers", 0, "resurces"), 'unknown field "resurces" (did you mean "resources"?)'),
        (("metadata", "label"), 'unknown field "label" (did you mean "labels"?)'),
    }


@pytest.mark.parametrize("version", SUPPORTED_KUBE_VERSIONS)
def test_every_emitted_kind_gets_a_reference_free_schema_and_a_quick_check(version: str) -> None:
    for name in VALID:
        obj = valid(name)
        own = kind_schemas().get((obj["apiVersion"], obj["kind"]))
        schema = kubeschema.object_schema(version, obj["apiVersion"], obj["kind"], own)
        assert schema is not None
        assert '"$ref"' not in json.dumps(schema)
        assert kubeschema.quick_check(schema) is not None
    assert kubeschema.quick_check(kubeschema.definition_schema(version, kubeschema.POD_TEMPLATE_SPEC))


def test_importing_is_cheap_and_valid_objects_do_not_need_jsonschema(fresh_python: str) -> None:
    code = (
        "import sys, mpigen.checks.kube.validator as v\n"
        "assert not {'jsonschema', 'kubernetes_validate', 'referencing'} & set(sys.modules), 'import'\n"
        "assert v.validate_object({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'a'}}) == []\n"
        "assert 'jsonschema' not in sys.modules, 'valid object'\n"
        "assert v.validate_object({'apiVersion': 'v1', 'kind': 'ConfigMap', 'data': 1})\n"
        "assert 'jsonschema' in sys.modules\n"
    )
    subprocess.run([fresh_python, "-c", code], check=True)


# The quick check must agree with jsonschema on every object, or a bad object could pass unreported.
EDGE_VALUES = [None, True, 0, -1, 1.5, 3.0, 2**31, 2**63, "", "3", "2Gi", "1.5x", [], {}, ["a"], {"a": "b"}]
JSON_VALUES = st.sampled_from(EDGE_VALUES) | st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**64), 2**64)
    | st.floats(allow_nan=False)
    | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=6,
)


def spots(node: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every path inside a document, the document itself included."""
    inner: list[tuple[str | int, ...]] = []
    if isinstance(node, dict | list):
        for key, child in node.items() if isinstance(node, dict) else enumerate(node):
            inner += spots(child, (*path, key))
    return [path, *inner]


def assert_quick_check_agrees(obj: Obj, schema_of: Obj) -> None:
    """The quick check of `schema_of`'s kind says valid exactly when jsonschema finds no error in `obj`."""
    compiled = validate._object_schema(
        DEFAULT_KUBE_VERSION,
        schema_of["apiVersion"],
        schema_of["kind"],
        kind_schemas().get((schema_of["apiVersion"], schema_of["kind"])),
    )
    assert compiled is not None and compiled.quick is not None
    assert compiled.quick(obj) == compiled.full.is_valid(obj), obj
    assert (compiled.issues(obj) == []) == compiled.full.is_valid(obj), obj


@pytest.mark.slow  # every edge value at every place of every kind, through both validators
@pytest.mark.parametrize("name", VALID)
def test_quick_check_agrees_with_jsonschema_on_every_edge_value_everywhere(name: str) -> None:
    for path in spots(valid(name))[1:]:
        for value in EDGE_VALUES:
            obj = with_change(name, path, copy.deepcopy(value))
            assert_quick_check_agrees(obj, valid(name))


@st.composite
def mutated(draw: st.DrawFn) -> Obj:
    """A valid object with 1 to 3 values replaced, keys renamed or added, or keys deleted."""
    obj = valid(draw(st.sampled_from(sorted(VALID))))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from([p for p in spots(obj) if p not in ((), ("apiVersion",), ("kind",))]))
        parent, key = parent_of(obj, path), path[-1]
        if isinstance(key, str):
            key = draw(st.sampled_from([key, key + "x", "name", "spec", "limits", "cpu"]))
        if isinstance(key, str) and key in parent and parent is not obj and draw(st.booleans()):
            del parent[key]
        else:
            parent[key] = copy.deepcopy(draw(JSON_VALUES))  # EDGE_VALUES holds shared lists and dicts
    return obj


@pytest.mark.slow  # 400 generated objects through both validators
@settings(
    max_examples=400,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(mutated())
def test_quick_check_agrees_with_jsonschema(obj: Obj) -> None:
    assert_quick_check_agrees(obj, obj)
