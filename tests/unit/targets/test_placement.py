"""`--topology` (mpigen.placement): the grammar, and what each target writes and refuses. Where the
schedulers put the pods is proven in tests/cluster/test_topology.py and test_topology_kueue.py."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import V1ALPHA2, V2BETA1, make_job, pod

import mpigen
from mpigen.errors import CompileError
from mpigen.options import Options
from mpigen.placement import Placement, parse

RACK = "topology.example.com/rack"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("required:rack", Placement(mode="required", key="rack")),
        (f"preferred:{RACK}", Placement(mode="preferred", key=RACK)),
        (f"slice:{RACK}:4", Placement(mode="slice", key=RACK, size=4)),
        ("required:A.b_c-9", Placement(mode="required", key="A.b_c-9")),
    ],
)
def test_values_parse(value: str, expected: Placement) -> None:
    assert parse(value) == expected
    assert str(parse(value)) == value


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("rack", "must be required:<node-label-key>"),
        ("required:", "must be required:<node-label-key>"),
        ("together:rack", "must be required:<node-label-key>"),
        ("required:-rack", "its name must consist of"),
        ("required:Example.com/rack", "its prefix before '/' must be a DNS subdomain"),
        ("required:/rack", "its prefix before '/' is empty"),
        ("required:a/b/c", "its prefix before '/' must be a DNS subdomain"),
        ("required:" + "r" * 64, "at most 63 characters"),
        ("required:rack:4", "its name must consist of"),
        ("slice:rack", "slice takes a node-label key and the ranks per domain"),
        ("slice:rack:0", "slice takes a node-label key and the ranks per domain"),
        ("slice:rack:2147483648", "slice takes a node-label key and the ranks per domain"),
        ("slice::4", "slice takes a node-label key and the ranks per domain"),
    ],
)
def test_bad_values_say_why(value: str, says: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse(value)
    assert says in str(caught.value)


def compiled(options: Options, **job: Any) -> list[dict[str, Any]]:
    return mpigen.compile(make_job(V1ALPHA2, 3, **job), options)


def templates(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each pod template by object name, or `<JobSet>-<replicated job>`."""
    found = {}
    for obj in objects:
        spec, name = obj.get("spec", {}), obj["metadata"]["name"]
        if "template" in spec:
            found[name] = spec["template"]
        for job in spec.get("replicatedJobs", []):
            found[f"{name}-{job['name']}"] = job["template"]["spec"]["template"]
    return found


def test_nothing_changes_without_the_option() -> None:
    assert compiled(Options()) == compiled(Options(topology=None))
    for target in ("operator", "jobset", "volcano"):
        plain = mpigen.compile(make_job(V2BETA1, 2), Options(target=target))
        assert "affinity" not in str(plain) and "networkTopology" not in str(plain)


@pytest.mark.parametrize("mode", ["required", "preferred"])
def test_operator_target_adds_pod_affinity_to_launcher_and_workers_only(mode: str) -> None:
    own = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "zone"}]}}
    worker = pod()
    worker["spec"]["affinity"] = own
    objects = mpigen.compile(
        make_job(V1ALPHA2, 3, worker=worker, cleanPodPolicy="All"), Options(topology=f"{mode}:{RACK}")
    )
    found = templates(objects)
    assert set(found) == {"pi-worker", "pi-launcher", "pi-cleanup"}
    assert "affinity" not in found["pi-cleanup"]["spec"]
    selector = {"matchLabels": {"group_name": "kubeflow.org", "mpi_job_name": "pi"}}
    term = {"labelSelector": selector, "topologyKey": RACK}
    for name in ("pi-worker", "pi-launcher"):
        affinity = found[name]["spec"]["affinity"]["podAffinity"]
        if mode == "required":
            assert affinity["requiredDuringSchedulingIgnoredDuringExecution"][-1] == term
        else:
            assert affinity["preferredDuringSchedulingIgnoredDuringExecution"] == [
                {"weight": 100, "podAffinityTerm": term}
            ]
    # the template's own term is kept, before the job's, and the input is not changed
    worker_terms = found["pi-worker"]["spec"]["affinity"]["podAffinity"]
    if mode == "required":
        assert worker_terms["requiredDuringSchedulingIgnoredDuringExecution"] == [
            {"topologyKey": "zone"},
            term,
        ]
    assert own == {
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "zone"}]}
    }


def annotations(objects: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    return {name: t.get("metadata", {}).get("annotations", {}) for name, t in templates(objects).items()}


def test_jobset_target_groups_launcher_and_workers_for_kueue() -> None:
    found = annotations(compiled(Options(target="jobset", queue="q", topology=f"required:{RACK}")))
    group = {"kueue.x-k8s.io/podset-required-topology": RACK, "kueue.x-k8s.io/podset-group-name": "mpi-job"}
    assert found["pi-launcher"] == group
    assert found["pi-worker"] == {**group, "kueue.x-k8s.io/pod-index-offset": "-1"}


def test_jobset_target_slices_the_workers_only() -> None:
    found = annotations(compiled(Options(target="jobset", queue="q", topology=f"slice:{RACK}:3")))
    assert found["pi-launcher"] == {}
    assert found["pi-worker"] == {
        "kueue.x-k8s.io/podset-slice-required-topology": RACK,
        "kueue.x-k8s.io/podset-slice-size": "3",
    }


def test_a_launcher_alone_is_no_group() -> None:
    job = make_job(V2BETA1, 1, runLauncherAsWorker=True)
    del job["spec"]["mpiReplicaSpecs"]["Worker"]
    found = annotations(
        mpigen.compile(job, Options(target="jobset", queue="q", topology=f"preferred:{RACK}"))
    )
    assert found["pi-launcher"] == {"kueue.x-k8s.io/podset-preferred-topology": RACK}


def refusals(job: dict[str, Any], options: Options) -> list[str]:
    with pytest.raises(CompileError) as caught:
        mpigen.compile(job, options)
    return [issue.message for issue in caught.value.issues]


def test_kueue_rules_on_the_templates_own_annotations() -> None:
    worker = pod()
    worker["metadata"] = {"annotations": {"kueue.x-k8s.io/podset-group-name": "42"}}
    found = refusals(make_job(V1ALPHA2, 2, worker=worker), Options(target="jobset", queue="q"))
    assert any("must not be a number" in message for message in found), found
    assert any("may not be set without" in message for message in found), found
    # without Kueue (no --queue), nothing reads them: no refusal
    mpigen.compile(make_job(V1ALPHA2, 2, worker=worker), Options(target="jobset"))


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (Options(topology=f"slice:{RACK}:2"), "refused on the operator target"),
        (Options(target="volcano", topology=f"slice:{RACK}:2"), "refused on the volcano target"),
        (Options(target="jobset", queue="q", topology=f"slice:{RACK}:4"), "must not be greater than"),
        (Options(target="jobset", topology=f"required:{RACK}"), "needs --queue"),
        (Options(topology="required:Bad Key"), "is not a valid node-label key"),
    ],
)
def test_refusals_name_the_option(options: Options, says: str) -> None:
    found = refusals(make_job(V1ALPHA2, 3), options)
    assert len(found) == 1 and says in found[0], found
