"""The TrainJob front's pieces (mpigen.inputs.trainjob, trainer_merge, trainer_rules): the CRDs' defaults,
the strategic merge of runtimePatches (its list order: apimachinery's `mergeSlice` without
`$setElementOrder`; the replicated jobs kept in the runtime's order) and of resourcesPerNode, the slots
from a GPU count, the runtimes of one input and where a TrainJob looks its runtime up, and `mpigen schema
--kind` for the Trainer kinds. Trainer's own code judges the
whole compile in tests/oracles/test_trainjob_differential.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from mpigen.cli import cli
from mpigen.errors import CompileError
from mpigen.inputs.trainer_merge import apply_defaults, merge_pod_spec, merge_resources, merge_runtime_patch
from mpigen.inputs.trainjob import Runtimes, to_plan
from mpigen.options import Options
from mpigen.pipeline import process
from mpigen.yaml.load import Document

ROOT = Path(__file__).resolve().parents[3]


def test_runtime_defaults_fill_the_mpi_policy_and_the_template() -> None:
    spec = {
        "mlPolicy": {"mpi": {}},
        "podGroupPolicy": {"coscheduling": {}},
        "template": {
            "spec": {
                "replicatedJobs": [
                    {
                        "name": "node",
                        "template": {
                            "spec": {
                                "template": {
                                    "spec": {
                                        "containers": [{"name": "node", "ports": [{"containerPort": 22}]}]
                                    }
                                }
                            }
                        },
                    }
                ]
            }
        },
    }
    found = apply_defaults("ClusterTrainingRuntime", spec)
    assert found["mlPolicy"]["mpi"] == {
        "numProcPerNode": 1,
        "mpiImplementation": "OpenMPI",
        "sshAuthMountPath": "/root/.ssh",
        "runLauncherAsNode": False,
    }
    assert found["podGroupPolicy"] == {"coscheduling": {"scheduleTimeoutSeconds": 60}}
    [job] = found["template"]["spec"]["replicatedJobs"]
    assert job["replicas"] == 1
    assert job["template"]["spec"]["template"]["spec"]["containers"][0]["ports"] == [
        {"containerPort": 22, "protocol": "TCP"}
    ]
    assert spec["mlPolicy"] == {"mpi": {}}, "the input is not changed"


def test_trainjob_defaults() -> None:
    found = apply_defaults("TrainJob", {"runtimeRef": {"name": "x"}})
    assert found == {
        "runtimeRef": {"name": "x", "apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime"},
        "suspend": False,
        "managedBy": "trainer.kubeflow.org/trainjob-controller",
    }


def names(items: list[dict[str, Any]], key: str = "name") -> list[Any]:
    return [item[key] for item in items]


@pytest.mark.parametrize(
    ("original", "patch", "merged"),
    [
        (["a"], ["b"], ["b", "a"]),  # a new item comes before the original's others
        (["a", "b"], ["b", "a"], ["b", "a"]),  # the patch's order wins
        (
            ["a", "b", "c"],
            ["c"],
            ["a", "b", "c"],
        ),  # an original item standing before a patched one stays before
        (["a", "b", "c"], ["b", "x"], ["a", "b", "x", "c"]),
        ([], ["x", "y"], ["x", "y"]),
    ],
)
def test_override_lists_merge_in_apimachinery_order(
    original: list[str], patch: list[str], merged: list[str]
) -> None:
    pod = {"volumes": [{"name": n, "emptyDir": {}} for n in original]}
    override = {"volumes": [{"name": n, "emptyDir": {}} for n in patch]}
    assert names(merge_pod_spec(pod, override)["volumes"]) == merged


def test_override_merges_fields_by_their_keys() -> None:
    pod = {
        "nodeSelector": {"pool": "cpu"},
        "tolerations": [{"key": "old", "operator": "Exists"}],
        "containers": [
            {
                "name": "node",
                "image": "i",
                "env": [{"name": "A", "value": "1"}],
                "volumeMounts": [{"name": "d", "mountPath": "/d"}],
            }
        ],
        "volumes": [{"name": "d", "configMap": {"name": "one", "defaultMode": 420}}],
    }
    override = {
        "nodeSelector": {"zone": "a"},
        "tolerations": [{"key": "new", "operator": "Exists"}],
        "containers": [
            {
                "name": "node",
                "env": [{"name": "A", "value": "2"}, {"name": "B", "value": "3"}],
                "volumeMounts": [{"name": "e", "mountPath": "/d"}],
            }
        ],
        "volumes": [{"name": "d", "configMap": {"name": "two"}}],
    }
    merged = merge_pod_spec(pod, override)
    assert merged["nodeSelector"] == {"pool": "cpu", "zone": "a"}
    assert merged["tolerations"] == [{"key": "new", "operator": "Exists"}]
    [container] = merged["containers"]
    assert container["image"] == "i" and container["env"] == [
        {"name": "A", "value": "2"},
        {"name": "B", "value": "3"},
    ]
    assert container["volumeMounts"] == [{"name": "e", "mountPath": "/d"}]
    assert merged["volumes"] == [{"name": "d", "configMap": {"name": "two", "defaultMode": 420}}]


def _job(name: str, **pod: Any) -> dict[str, Any]:
    return {"name": name, "template": {"spec": {"template": {"spec": pod}}}}


def test_runtime_patch_merges_jobs_by_name_and_keeps_the_runtime_order() -> None:
    spec = {"replicatedJobs": [_job("node", nodeSelector={"a": "1"}), _job("launcher")]}
    patch = {
        "replicatedJobs": [
            {"name": "launcher", "template": {"metadata": {"labels": {"x": "y"}}}},
            {"name": "node", "template": {"spec": {"template": {"spec": {"nodeSelector": {"b": "2"}}}}}},
        ]
    }
    merged = merge_runtime_patch(spec, patch)
    assert names(merged["replicatedJobs"]) == ["node", "launcher"]
    assert merged["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["nodeSelector"] == {
        "a": "1",
        "b": "2",
    }
    assert merged["replicatedJobs"][1]["template"]["metadata"] == {"labels": {"x": "y"}}
    assert spec["replicatedJobs"][1]["template"] == {"spec": {"template": {"spec": {}}}}, "input unchanged"


def test_resources_per_node_merge_into_the_runtime_resources() -> None:
    base = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "2Gi"}}
    wanted = {"requests": {"cpu": "4"}, "limits": {"nvidia.com/gpu": "2"}}
    assert merge_resources(base, wanted) == {
        "requests": {"cpu": "4", "memory": "1Gi"},
        "limits": {"memory": "2Gi", "nvidia.com/gpu": "2"},
    }


def _plan_of(trainjob_spec: dict[str, Any], runtime: dict[str, Any] | None = None) -> Any:
    runtimes = Runtimes()
    assert runtimes.add(runtime or RUNTIME, Options()) == []
    document = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "t"},
        "spec": {"runtimeRef": {"name": "r"}, **trainjob_spec},
    }
    return to_plan(document, runtimes, Options())


@pytest.mark.parametrize(
    ("trainer", "slots"),
    [
        ({}, 1),
        ({"resourcesPerNode": {"limits": {"nvidia.com/gpu": 4}}}, 4),
        ({"resourcesPerNode": {"requests": {"amd.com/GPU": "2"}, "limits": {"nvidia.com/gpu": 8}}}, 2),
        ({"resourcesPerNode": {"limits": {"nvidia.com/gpu": 1}}}, 1),
        ({"numProcPerNode": 3, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 4}}}, 3),
    ],
)
def test_slots_come_from_the_gpu_count_when_the_runtime_says_one(trainer: dict[str, Any], slots: int) -> None:
    """Trainer v2.3.0 MPI plugin: numProcPerNode 1 (the default) gives way to a GPU count above 1."""
    assert _plan_of({"trainer": trainer}).slots == slots


def test_runtime_gpus_count_when_the_trainjob_gives_no_resources() -> None:
    runtime = json.loads(json.dumps(RUNTIME))
    container = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"][
        "spec"
    ]["containers"][0]
    container["resources"] = {"limits": {"nvidia.com/gpu": 2}}
    assert _plan_of({}, runtime).slots == 2
    plan = _plan_of({"trainer": {"resourcesPerNode": {"requests": {"cpu": "2"}}}}, runtime)
    assert plan.slots == 1, "the TrainJob's resources are read, not the merged ones (Trainer's order)"


def test_a_trainjob_without_namespace_is_told_where_its_runtime_is() -> None:
    runtime = {**RUNTIME, "kind": "TrainingRuntime", "metadata": {"name": "r", "namespace": "team"}}
    runtimes = Runtimes()
    assert runtimes.add(runtime, Options()) == []
    document = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "t"},
        "spec": {"runtimeRef": {"name": "r", "kind": "TrainingRuntime"}},
    }
    with pytest.raises(CompileError) as raised:
        to_plan(document, runtimes, Options())
    [issue] = raised.value.issues
    assert issue.path == ("spec", "runtimeRef", "name")
    assert 'is given in namespace "team", but this TrainJob has no namespace' in issue.message
    assert "set metadata.namespace: team (or --namespace team)" in issue.message
    assert to_plan(document, runtimes, Options(namespace="team")).namespace == "team"


@pytest.mark.parametrize(
    ("manager", "refused"),
    [
        ("example.com/team", False),
        ("kueue.x-k8s.io/multikueue", False),
        ("example.com/a/b:c", False),
        ("no-slash", True),
        ("/path", True),
        ("Example.com/x", True),
        ("example.com/with space", True),
    ],
)
def test_a_patch_manager_is_a_domain_prefixed_path(manager: str, refused: bool) -> None:
    """apimachinery IsDomainPrefixedPath, as Trainer's JobSet plugin checks it."""
    spec = {"runtimePatches": [{"manager": manager}]}
    if not refused:
        _plan_of(spec)
        return
    with pytest.raises(CompileError) as raised:
        _plan_of(spec)
    assert [issue.path for issue in raised.value.issues] == [("spec", "runtimePatches", 0, "manager")]


RUNTIME: dict[str, Any] = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "ClusterTrainingRuntime",
    "metadata": {"name": "r"},
    "spec": {
        "mlPolicy": {"mpi": {}},
        "template": {
            "spec": {
                "replicatedJobs": [
                    {
                        "name": "launcher",
                        "template": {
                            "metadata": {
                                "labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}
                            },
                            "spec": {"template": {"spec": {"containers": [{"name": "node", "image": "i"}]}}},
                        },
                    }
                ]
            }
        },
    },
}


def test_a_runtime_given_twice_is_refused() -> None:
    runtimes = Runtimes()
    assert runtimes.add(RUNTIME, Options()) == []
    [issue] = runtimes.add(RUNTIME, Options())
    assert issue.message == 'ClusterTrainingRuntime "r" is given twice in the input; keep one'


def test_a_runtime_alone_renders_nothing_and_is_checked() -> None:
    outcome = process([("r.yaml", [Document(1, RUNTIME, 1)])], Options())
    assert (outcome.objects, outcome.errors) == ([], [])
    broken = json.loads(json.dumps(RUNTIME))
    broken["spec"]["mlPolicy"]["mpi"]["numProcsPerNode"] = 2
    outcome = process([("r.yaml", [Document(1, broken, 1)])], Options())
    assert [finding.text() for finding in outcome.errors] == [
        'r.yaml: ClusterTrainingRuntime/r: spec.mlPolicy.mpi.numProcsPerNode: unknown field "numProcsPerNode" (did you mean "numProcPerNode"?)'
    ]


@pytest.mark.parametrize("kind", ["TrainJob", "ClusterTrainingRuntime", "TrainingRuntime"])
def test_schema_command_prints_the_trainer_kinds(kind: str) -> None:
    done = CliRunner().invoke(cli, ["schema", "--kind", kind])
    assert done.exit_code == 0, done.stderr
    schema = json.loads(done.stdout)
    validator = jsonschema.Draft202012Validator(schema)
    found = 0
    for path in sorted(ROOT.glob("golden/trainjob-*/input.yaml")):
        if (path.parent / "errors.txt").exists():
            continue
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc["kind"] == kind:
                assert list(validator.iter_errors(doc)) == [], path
                found += 1
    assert found >= (1 if kind == "TrainingRuntime" else 3)
    typo = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": kind,
        "metadata": {"name": "x"},
        "spec": {"sped": 1},
    }
    assert not validator.is_valid(typo)


def test_validate_checks_a_trainjob_with_the_runtimes_of_every_input(tmp_path: Path) -> None:
    """`mpigen validate` of a runtime and a TrainJob in two files: valid (the runtime is found across files)."""
    source = ROOT / "golden" / "trainjob-mpi-runtime" / "input.yaml"
    runtime, job = [doc for doc in yaml.safe_load_all(source.read_text()) if doc]
    (tmp_path / "runtime.yaml").write_text(yaml.safe_dump(runtime))
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(job))
    done = CliRunner().invoke(cli, ["validate", "-o", "json", str(tmp_path)])
    assert done.exit_code == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["summary"]["invalid"] == 0 and report["summary"]["errors"] == 0
    assert {r["kind"] for r in report["resources"]} >= {"TrainJob", "ClusterTrainingRuntime", "JobSet"}
    (tmp_path / "runtime.yaml").unlink()
    done = CliRunner().invoke(cli, ["validate", str(tmp_path)])
    assert (
        done.exit_code == 1
        and 'ClusterTrainingRuntime "openmpi" is not in the input' in done.stdout + done.stderr
    )


def test_nulls_in_a_runtime_are_pruned_as_the_api_server_prunes_them() -> None:
    """A custom resource's nulls are dropped on create (structural schema pruning), and Trainer reads typed
    objects: none of a runtime's pod template (whose schema, Kubernetes' own, admits them) reaches the
    JobSet, which server-side apply would refuse."""
    runtime = json.loads(json.dumps(RUNTIME))
    pod = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod["containers"][0]["workingDir"] = None
    pod["nodeSelector"] = None
    plan = _plan_of({"trainer": {"image": "x"}}, runtime)
    pod = plan.jobset_spec["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert "nodeSelector" not in pod and "workingDir" not in pod["containers"][0]
