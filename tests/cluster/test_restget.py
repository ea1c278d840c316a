"""tests/cluster/restget.py reads what `kubectl get -o json` prints, or leaves the call to kubectl."""

from __future__ import annotations

import json
from typing import Any

import pytest
import restget
import yaml
from controlplane import Cluster


def kubectl_get(cluster: Cluster, *argv: str) -> Any:
    return json.loads(cluster.kubectl("get", *argv, "-o", "json").stdout)


@pytest.fixture
def reader(cluster: Cluster) -> restget.Reader:
    if not cluster.owned or cluster.ca is None:
        pytest.skip("the reader serves the suite's own control plane (unset MPIGEN_CLUSTER=existing)")
    return restget.Reader(cluster.server, cluster.ca.parent)


@pytest.fixture(scope="module")
def objects(cluster: Cluster) -> str:
    """A namespace of this module's own with a few objects, which the tests only read."""
    namespace = cluster.create_namespace("t-restget")
    documents: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "labels": labels},
            "data": {"k": name},
        }
        for name, labels in (("a", {"team": "x"}), ("b", {"team": "z"}), ("c", {"team": "x", "tier": "1"}))
    ]
    documents.append({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "runner"}})
    documents.append(
        {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": {"name": "js", "labels": {"team": "x"}},
            "spec": {"replicatedJobs": []},
        }
    )
    cluster.kubectl("apply", "-n", namespace, "-f", "-", input=yaml.safe_dump_all(documents))
    return namespace


CALLS = [
    ("configmap", "a", "-n", "{ns}"),
    ("configmaps", "-n", "{ns}"),
    ("cm", "--namespace={ns}", "-l", "team=x"),
    ("configmaps,serviceaccounts", "-n", "{ns}", "--selector", "team in (x,z)"),
    ("serviceaccount", "runner", "--namespace", "{ns}"),
    ("namespace", "{ns}"),
    ("crd", "jobsets.jobset.x-k8s.io"),
    ("jobsets.jobset.x-k8s.io", "-n", "{ns}"),
    ("jobset", "js", "-n", "{ns}"),
    ("vcjob", "-n", "{ns}"),
    ("configmaps", "-A", "-l", "tier=1"),
    ("secrets", "-n", "{ns}", "-l", "none=here"),
]


@pytest.mark.parametrize("call", CALLS, ids=[" ".join(call) for call in CALLS])
def test_the_reader_prints_what_kubectl_prints(
    cluster: Cluster, reader: restget.Reader, objects: str, call: tuple[str, ...]
) -> None:
    argv = tuple(word.format(ns=objects) for word in call)
    # None while discovery is incomplete, as for a moment after the fixture's CRDs are created
    read = cluster.wait_for(f"the reader to read {argv}", lambda: reader.get(argv), timeout=30)
    assert read == kubectl_get(cluster, *argv)
    assert cluster.get(*argv) == read


def test_an_object_that_is_not_there_is_an_error_as_with_kubectl(
    cluster: Cluster, reader: restget.Reader, namespace: str
) -> None:
    with pytest.raises(AssertionError, match=r'Error from server \(NotFound\): configmaps "gone" not found'):
        reader.get(("configmap", "gone", "-n", namespace))
    with pytest.raises(AssertionError, match=r'Error from server \(NotFound\): configmaps "gone" not found'):
        kubectl_get(cluster, "configmap", "gone", "-n", namespace)


def test_a_name_two_groups_serve_is_left_to_kubectl(cluster: Cluster, reader: restget.Reader) -> None:
    crds = {crd["metadata"]["name"] for crd in kubectl_get(cluster, "crd")["items"]}
    assert {"podgroups.scheduling.x-k8s.io", "podgroups.scheduling.volcano.sh"} <= crds
    assert reader.get(("podgroups", "-A")) is None
    assert reader.get(("podgroups.scheduling.volcano.sh", "-A")) is not None


@pytest.mark.parametrize(
    "argv",
    [
        ("pods", "-o", "wide"),
        ("pod/a",),
        ("pods", "a", "b"),
        ("pods,jobs", "a"),
        ("pods", "a", "-A"),
        ("-n",),
        ("pods", "-n"),
        ("nosuchresource",),
    ],
)
def test_what_the_reader_does_not_read_is_left_to_kubectl(
    reader: restget.Reader, argv: tuple[str, ...]
) -> None:
    assert reader.get(argv) is None


@pytest.mark.parametrize("resource", ["configmap", "podgroups.scheduling.volcano.sh", "podgroups"])
def test_find_gives_the_object_or_none(
    cluster: Cluster, reader: restget.Reader, namespace: str, resource: str
) -> None:
    """By the reader, and by kubectl where a name two groups serve leaves it to kubectl (podgroups)."""
    assert cluster.find(resource, "gone", "-n", namespace) is None
    if resource == "configmap":
        cluster.kubectl("create", "configmap", "here", "-n", namespace)
        assert cluster.find(resource, "here", "-n", namespace) == kubectl_get(
            cluster, resource, "here", "-n", namespace
        )
