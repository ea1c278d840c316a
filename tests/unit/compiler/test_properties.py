"""Properties of the compiler over generated MPIJobs of both versions (tests/strategies.py).

Every valid job compiles; every object it gives passes the strict schema of its kind for the oldest and
the newest supported Kubernetes version; the bytes are the same whatever the input's key order; and the
output hangs together: one hostfile line per worker, selectors that select the right pods, one
namespace, references that resolve, and YAML and JSON that read back as the same objects.
"""

from __future__ import annotations

import copy
import io
import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jobs import load_all
from ruamel.yaml import YAML
from strategies import VARIANTS, Case, cases

import mpigen
from mpigen import names
from mpigen.checks.kube.validator import validate_object
from mpigen.checks.kube.versions import DEFAULT_KUBE_VERSION
from mpigen.targets import all_kinds
from mpigen.yaml.dump import FORMATS

Obj = dict[str, Any]

pytestmark = pytest.mark.slow  # hundreds of generated jobs, each compiled and schema-checked twice

# Reproducible in CI: a fixed sequence of examples, nothing remembered between runs, no time limit
# (the first example loads the Kubernetes schemas), and no complaint that drawing a whole job with
# several pod templates is slow on a slow machine.
PROPERTY = settings(
    max_examples=30,
    database=None,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
KUBE_VERSIONS = ("1.25", DEFAULT_KUBE_VERSION)


def compile_case(case: Case) -> list[Obj]:
    return mpigen.compile(case.job, case.options)


def reordered(value: Any) -> Any:
    """A deep copy with every mapping's keys in reverse order (lists keep theirs: it means something)."""
    if isinstance(value, dict):
        return {key: reordered(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [reordered(item) for item in value]
    return value


def exact(value: Any) -> str:
    """A form in which `1 != True != "1"` and key order counts: compares values exactly."""
    return json.dumps(value, ensure_ascii=False)


def by_kind(objects: list[Obj]) -> dict[str, list[Obj]]:
    found: dict[str, list[Obj]] = {}
    for obj in objects:
        found.setdefault(obj["kind"], []).append(obj)
    return found


def one(objects: list[Obj], kind: str, name: str) -> Obj:
    matches = [obj for obj in objects if obj["kind"] == kind and obj["metadata"]["name"] == name]
    assert len(matches) == 1, f"expected one {kind}/{name}, found {len(matches)}"
    return matches[0]


def pod_labels(workload: Obj) -> dict[str, str]:
    labels: dict[str, str] = workload["spec"]["template"]["metadata"]["labels"]
    return labels


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


@pytest.mark.parametrize("variant", VARIANTS)
@PROPERTY
@given(data=st.data())
def test_every_object_passes_the_strict_schemas(variant: str, data: st.DataObject) -> None:
    case = data.draw(cases(variant))
    objects = compile_case(case)
    assert objects
    # Kubernetes' own gang (scheduling.k8s.io/v1beta1) is served, and rendered, from 1.37 on.
    native = case.gang_scheduler == "kubernetes"
    for version in [v for v in KUBE_VERSIONS if not native or tuple(map(int, v.split("."))) >= (1, 37)]:
        problems = [
            f"{obj['kind']}/{obj['metadata']['name']}: {issue.text()}"
            for obj in objects
            for issue in validate_object(obj, version, all_kinds())
        ]
        assert problems == [], f"Kubernetes {version}"


@pytest.mark.parametrize("variant", VARIANTS)
@PROPERTY
@given(data=st.data())
def test_rendering_is_deterministic_and_leaves_the_input_alone(variant: str, data: st.DataObject) -> None:
    case = data.draw(cases(variant))
    original = copy.deepcopy(case.job)
    first = FORMATS["yaml"](compile_case(case))
    assert exact(case.job) == exact(original), "compile changed its input"
    assert FORMATS["yaml"](compile_case(case)) == first
    shuffled = reordered(case.job)
    assert list(shuffled) != list(case.job)
    assert FORMATS["yaml"](mpigen.compile(shuffled, case.options)) == first


@pytest.mark.parametrize("variant", VARIANTS)
@PROPERTY
@given(data=st.data())
def test_output_hangs_together(variant: str, data: st.DataObject) -> None:
    case = data.draw(cases(variant))
    objects = compile_case(case)
    check_workers_hostfile_and_gang(case, objects)
    check_selectors(case, objects)
    check_namespace_names_and_references(case, objects)
    check_read_back(objects)


@settings(PROPERTY, max_examples=20)
@given(cases())
def test_yaml_1_2_readers_read_the_same_objects(case: Case) -> None:
    """Readers of YAML 1.2 (go-yaml v3, ruamel.yaml) see the same values as Kubernetes' YAML 1.1 one:
    0o17, 1_000 or +1 are never left unquoted."""
    objects = compile_case(case)
    text = FORMATS["yaml"](objects)
    assert exact(list(YAML(typ="safe", pure=True).load_all(io.StringIO(text)))) == exact(objects)


def check_read_back(objects: list[Obj]) -> None:
    """The YAML and JSON output read back as exactly the same objects."""
    text = FORMATS["yaml"](objects)
    assert exact(load_all(text)) == exact(objects), "YAML reads back other values"
    listed = json.loads(FORMATS["json"](objects))
    assert (listed["apiVersion"], listed["kind"]) == ("v1", "List")
    assert exact(listed["items"]) == exact(objects)


def check_workers_hostfile_and_gang(case: Case, objects: list[Obj]) -> None:
    """One hostfile line and one Role resourceName per worker; the gang counts every pod."""
    job = case.job["metadata"]["name"]
    workers = one(objects, "StatefulSet", names.worker_set(job))
    assert workers["spec"]["replicas"] == case.workers
    pods = [f"{job}-worker-{index}" for index in range(case.workers)]
    hostfile = one(objects, "ConfigMap", names.config_map(job))["data"]["hostfile"]
    assert hostfile == "".join(f"{pod} slots={case.slots}\n" for pod in pods)
    role = one(objects, "Role", names.launcher(job))
    assert [rule["resourceNames"] for rule in role["rules"]] == [pods, pods]
    kinds = by_kind(objects)
    assert ("PodGroup" in kinds) == (case.gang_scheduler is not None)
    if case.gang_scheduler == "kubernetes":  # Kubernetes' own: a Workload, minCount, no PDB
        assert kinds["PodGroup"][0]["spec"]["schedulingPolicy"]["gang"]["minCount"] == case.workers + 1
        assert "PodDisruptionBudget" not in kinds and len(kinds["Workload"]) == 1
    elif case.gang_scheduler:
        assert kinds["PodGroup"][0]["spec"]["minMember"] == case.workers + 1
        assert one(objects, "PodDisruptionBudget", names.pdb(job))["spec"]["minAvailable"] == case.workers
    assert any(obj["metadata"]["name"] == names.cleanup(job) for obj in kinds["Job"]) == case.cleanup


def check_selectors(case: Case, objects: list[Obj]) -> None:
    """Every selector matches its own pods' labels, and the worker selectors never the launcher's."""
    job = case.job["metadata"]["name"]
    kinds = by_kind(objects)
    workers = one(objects, "StatefulSet", names.worker_set(job))
    launcher = one(objects, "Job", names.launcher(job))
    for workload in kinds["StatefulSet"] + kinds["Job"]:
        selector = workload["spec"].get("selector", {}).get("matchLabels", {})
        assert selects(selector, pod_labels(workload)), workload["metadata"]["name"]
    service = one(objects, "Service", names.worker_set(job))
    assert workers["spec"]["serviceName"] == service["metadata"]["name"]
    assert selects(service["spec"]["selector"], pod_labels(workers))
    assert not selects(service["spec"]["selector"], pod_labels(launcher)), "the Service selects the launcher"
    for pdb in kinds.get("PodDisruptionBudget", []):
        assert selects(pdb["spec"]["selector"]["matchLabels"], pod_labels(workers))
        assert not selects(pdb["spec"]["selector"]["matchLabels"], pod_labels(launcher))
    instance = {"app.kubernetes.io/instance": job}
    assert all(selects(instance, obj["metadata"]["labels"]) for obj in objects)


def check_namespace_names_and_references(case: Case, objects: list[Obj]) -> None:
    """One namespace for all; names unique per kind; every name an object refers to is emitted."""
    assert {obj["metadata"].get("namespace") for obj in objects} == {case.namespace}
    names_per_kind = Counter((obj["kind"], obj["metadata"]["name"]) for obj in objects)
    assert [key for key, count in names_per_kind.items() if count > 1] == []
    kinds = by_kind(objects)
    accounts = {obj["metadata"]["name"] for obj in kinds["ServiceAccount"]}
    roles = {obj["metadata"]["name"] for obj in kinds["Role"]}
    config = kinds["ConfigMap"][0]
    for binding in kinds["RoleBinding"]:
        assert binding["roleRef"]["name"] in roles
        # No namespace on the subject means the binding's own (Kubernetes' rule for RoleBindings).
        subjects = [(s["name"], s.get("namespace")) for s in binding["subjects"]]
        assert subjects == [(binding["metadata"]["name"], case.namespace)]
        assert binding["metadata"]["name"] in accounts
    for job in kinds["Job"]:
        assert job["spec"]["template"]["spec"]["serviceAccountName"] in accounts
    for workload in kinds["StatefulSet"] + kinds["Job"]:
        for volume in workload["spec"]["template"]["spec"]["volumes"]:
            if volume.get("configMap", {}).get("name") == config["metadata"]["name"]:
                assert {item["key"] for item in volume["configMap"]["items"]} <= set(config["data"])
