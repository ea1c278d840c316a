"""The input models' fast check (mpigen/inputs/model.py) agrees with pydantic on every document.

A valid document is parsed without pydantic; the fast check must accept exactly what pydantic's strict,
extra-forbidding model accepts, with the same values, or a broken job would be compiled (or a valid one
sent to pydantic for nothing). Every field of every front's model is set in a full document, then
every place in it gets every edge value, and generated documents get several changes at once.
"""

from __future__ import annotations

import copy
import importlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jobs import V1, V1ALPHA1, V1ALPHA2, V2BETA1, make_job, pod

from mpigen.inputs._fast_model import parse_fast
from mpigen.inputs.model import Strict, _fields, pydantic_model

Doc = dict[str, Any]
META = {
    "name": "pi",
    "namespace": "ml",
    "labels": {"a": "b"},
    "annotations": {"mpigen.dev/wait-timeout": "60"},
    "uid": "u",
    "generation": 3,
    "finalizers": ["f"],
    "ownerReferences": [{"kind": "X"}],
    "creationTimestamp": "2024-01-01T00:00:00Z",
}
RUN_POLICY = {
    "cleanPodPolicy": "Running",
    "ttlSecondsAfterFinished": 60,
    "activeDeadlineSeconds": 600,
    "backoffLimit": 3,
    "schedulingPolicy": {
        "minAvailable": 2,
        "queue": "q",
        "minResources": {"cpu": "4", "nvidia.com/gpu": 2},
        "priorityClass": "high",
        "scheduleTimeoutSeconds": 30,
    },
    "suspend": False,
    "managedBy": "kubeflow.org/mpi-operator",
}


def full(api_version: str) -> Doc:
    """A document of `api_version` with every field of its model set."""
    if api_version == V1ALPHA1:
        spec = {
            "gpus": 16,
            "gpusPerNode": 8,
            "processingResourceType": "cpu",
            "slotsPerWorker": 2,
            "launcherOnMaster": True,
            "backoffLimit": 1,
            "activeDeadlineSeconds": 100,
        }
        doc = make_job(V1ALPHA1, None, **spec)
    elif api_version == V1ALPHA2:
        doc = make_job(
            V1ALPHA2, 2, slotsPerWorker=1, backoffLimit=1, activeDeadlineSeconds=9, cleanPodPolicy="All"
        )
        doc["spec"]["mpiReplicaSpecs"]["Worker"]["restartPolicy"] = "OnFailure"
    else:
        doc = make_job(api_version, 2, slotsPerWorker=1, runPolicy=copy.deepcopy(RUN_POLICY))
        doc["spec"]["mpiReplicaSpecs"]["Launcher"]["restartPolicy"] = "OnFailure"
        extra: Doc = {"mainContainer": "worker", "cleanPodPolicy": "All"}
        if api_version == V2BETA1:
            extra = {
                "runLauncherAsWorker": True,
                "sshAuthMountPath": "/root/.ssh",
                "launcherCreationPolicy": "AtStartup",
            }
            extra["mpiImplementation"] = "Intel"
        doc["spec"].update(extra)
    doc["metadata"] = copy.deepcopy(META)
    doc["status"] = {"anything": [1]}
    return doc


FRONTS = {V1ALPHA1: "v1alpha1", V1ALPHA2: "v1alpha2", V1: "v1", V2BETA1: "v2beta1"}


def model_of(api_version: str) -> type[Strict]:
    model: type[Strict] = importlib.import_module(f"mpigen.inputs.{FRONTS[api_version]}").MPIJob
    return model


def dump(value: Any) -> Any:
    """A fast-checked value as plain data, as pydantic's model_dump gives it (types kept: 1 is not True)."""
    if isinstance(value, Strict):
        return {spec.name: dump(getattr(value, spec.name)) for spec in _fields(type(value))}
    if isinstance(value, dict):
        return {key: dump(item) for key, item in value.items()}
    if isinstance(value, list):
        return [dump(item) for item in value]
    return (type(value).__name__, value)


def assert_agrees(api_version: str, document: Any) -> None:
    model = model_of(api_version)
    fast = parse_fast(model, document)
    try:
        checked = pydantic_model(model).model_validate(document)
    except ValueError:  # pydantic's ValidationError
        checked = None
    assert (fast is None) == (checked is None), document
    if checked is not None:
        assert dump(fast) == dump(checked.model_dump()), document


@pytest.mark.parametrize("api_version", FRONTS)
def test_a_full_document_is_parsed_fast_with_every_field(api_version: str) -> None:
    document = full(api_version)
    parsed = parse_fast(model_of(api_version), document)
    assert parsed is not None
    assert_agrees(api_version, document)


EDGE_VALUES = [
    None,
    True,
    False,
    0,
    -1,
    1,
    3.0,
    1.5,
    2**31,
    2**63,
    "",
    "3",
    "All",
    "all",
    [],
    {},
    ["a"],
    {"a": "b"},
    {1: "a"},
    {"a": 1},
    [{}],
]


def spots(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    inner: list[tuple[Any, ...]] = []
    if isinstance(node, dict | list):
        for key, child in node.items() if isinstance(node, dict) else enumerate(node):
            inner += spots(child, (*path, key))
    return [path, *inner]


def changed(document: Doc, path: tuple[Any, ...], value: Any) -> Doc:
    out = copy.deepcopy(document)
    node: Any = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = copy.deepcopy(value)
    return out


@pytest.mark.parametrize("api_version", FRONTS)
def test_every_edge_value_everywhere(api_version: str) -> None:
    document = full(api_version)
    for path in spots(document)[1:]:
        for value in EDGE_VALUES:
            assert_agrees(api_version, changed(document, path, value))


@pytest.mark.parametrize("api_version", FRONTS)
def test_missing_and_unknown_fields_everywhere(api_version: str) -> None:
    document = full(api_version)
    for path in spots(document)[1:]:
        parent = copy.deepcopy(document)
        node: Any = parent
        for key in path[:-1]:
            node = node[key]
        if isinstance(node, dict):
            del node[path[-1]]
            assert_agrees(api_version, parent)
            assert_agrees(api_version, changed(document, (*path[:-1], f"{path[-1]}x"), 1))
    assert_agrees(api_version, [document])
    assert_agrees(api_version, {**document, 3: "x"})


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, Doc]:
    api_version = draw(st.sampled_from(sorted(FRONTS)))
    document = full(api_version) if draw(st.booleans()) else make_job(api_version, 2, worker=pod("w"))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(spots(document)[1:]))
        document = changed(document, path, draw(st.sampled_from(EDGE_VALUES)))
    return api_version, document


@pytest.mark.slow  # 500 generated documents through both checks
@settings(
    max_examples=500,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(mutated())
def test_the_fast_check_agrees_with_pydantic(case: tuple[str, Doc]) -> None:
    assert_agrees(*case)


def test_a_model_with_defaults_is_constructed_without_arguments() -> None:
    from mpigen.inputs.shared import ObjectMeta

    meta = ObjectMeta()
    assert meta.name is None and meta.labels is None
    with pytest.raises(AttributeError):
        meta.name = "x"  # type: ignore[misc]
