"""Input JSON Schemas (schemas/mpijob-*.json) and `mpigen schema`.

The schemas are generated from the input models and checked in; they must be current, accept every
job mpigen compiles, and refuse what the fronts refuse wherever JSON Schema can say so.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from click.testing import CliRunner
from jobs import make_job, pod
from jsonschema import Draft202012Validator

from mpigen import inputs as api
from mpigen.cli import cli
from mpigen.compiler import compile_job
from mpigen.errors import CompileError
from mpigen.inputs import api_versions, schema_file
from mpigen.options import Options
from mpigen.shells.flags import make_options
from mpigen.shells.render import command as render_command
from mpigen.yaml.load import InputError, decode, load_documents


def _load_schemagen() -> ModuleType:
    """tools/schemagen.py, the developer tool that writes schemas/ (not part of the installed package)."""
    spec = importlib.util.spec_from_file_location(
        "schemagen", Path(__file__).resolve().parents[3] / "tools" / "schemagen.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


schemagen = _load_schemagen()

ROOT = Path(__file__).resolve().parents[3]
SCHEMAS = ROOT / "schemas"
GOLDEN = ROOT / "golden"
V1ALPHA1, V1ALPHA2 = "kubeflow.org/v1alpha1", "kubeflow.org/v1alpha2"
V1 = "kubeflow.org/v1"
V2BETA1 = "kubeflow.org/v2beta1"
DELETE = object()

JOBS: dict[str, dict[str, Any]] = {
    V1ALPHA1: make_job(V1ALPHA1, namespace=None, worker=pod()),
    V1ALPHA2: make_job(V1ALPHA2, namespace=None, launcher=pod(), worker=pod()),
    V1: make_job(V1, namespace=None, launcher=pod(), worker=pod()),
}
WORKER = ("spec", "mpiReplicaSpecs", "Worker")
LAUNCHER = ("spec", "mpiReplicaSpecs", "Launcher")


def load_schema(api_version: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SCHEMAS / schema_file(api_version, "MPIJob")).read_text())
    return schema


def schema_errors(document: dict[str, Any]) -> list[str]:
    validator = Draft202012Validator(load_schema(document["apiVersion"]))
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(document)]


def front_errors(document: dict[str, Any], options: Options | None = None) -> list[str]:
    """The front's errors, and the unknown fields it leaves out with a warning (v1alpha1, v1alpha2: the
    schema flags those, so that an editor shows a typo as it is typed)."""
    try:
        compilation = compile_job(document, options or Options())
    except CompileError as exc:
        return [issue.text() for issue in exc.issues]
    return [issue.text() for issue in compilation.warnings if issue.message.startswith("unknown field")]


def changed(api_version: str, *edits: tuple[tuple[str | int, ...], Any]) -> dict[str, Any]:
    """The valid job of `api_version` with each (path, value) set, or removed when value is DELETE (an
    object on the way that the job does not have, such as `runPolicy`, is added)."""
    job = copy.deepcopy(JOBS[api_version])
    for path, value in edits:
        parent = job
        for key in path[:-1]:
            parent = parent.setdefault(key, {}) if isinstance(key, str) else parent[key]
        if value is DELETE:
            del parent[path[-1]]
        else:
            parent[path[-1]] = value
    return job


# --- generation ----------------------------------------------------------------------------------


def test_checked_in_schemas_are_current() -> None:
    generated = schemagen.generate()
    assert sorted(generated) == [
        "mpijob-kubeflow-v1.json",
        "mpijob-kubeflow-v1alpha1.json",
        "mpijob-kubeflow-v1alpha2.json",
        "mpijob-kubeflow-v2beta1.json",
    ]
    stale = [
        name
        for name, text in generated.items()
        if not (SCHEMAS / name).is_file() or (SCHEMAS / name).read_text() != text
    ]
    assert not stale, f"stale input schemas {stale}; regenerate with: {schemagen.REGENERATE}"


def test_generation_is_deterministic_and_formatted() -> None:
    first, second = schemagen.generate(), schemagen.generate()
    assert first == second
    for text in first.values():
        assert text.endswith("}\n") and not text.endswith("\n\n")
        assert text == json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_check_mode_names_stale_and_missing_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(schemagen, "schemas_dir", lambda: tmp_path)
    assert schemagen.main([]) == 0
    assert schemagen.main(["--check"]) == 0
    (tmp_path / "mpijob-kubeflow-v1alpha1.json").write_text("{}\n")
    (tmp_path / "mpijob-kubeflow-v1alpha2.json").unlink()
    capsys.readouterr()
    assert schemagen.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert "mpijob-kubeflow-v1alpha1.json: stale" in err and "mpijob-kubeflow-v1alpha2.json: stale" in err
    assert schemagen.REGENERATE in err
    assert schemagen.main(["--bogus"]) == 2


@pytest.mark.parametrize("api_version", [V1ALPHA1, V1ALPHA2])
def test_schema_is_a_valid_draft_2020_12_schema(api_version: str) -> None:
    schema = load_schema(api_version)
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].endswith(schema_file(api_version, "MPIJob"))
    assert schema["properties"]["apiVersion"] == {"const": api_version}
    assert schema["properties"]["kind"] == {"const": "MPIJob"}
    assert api_version in schema["title"] and schema["description"]


def test_every_front_has_a_schema() -> None:
    assert {schema_file(v, k) for v, k in api.FRONTS} == set(schemagen.generate())
    assert api_versions() == [V1ALPHA1, V1ALPHA2, V1, V2BETA1]


# --- golden inputs --------------------------------------------------------------------------------


def golden_jobs() -> Iterator[tuple[str, int, dict[str, Any], Options]]:
    for case in sorted(p for p in GOLDEN.iterdir() if (p / "input.yaml").is_file()):
        try:
            documents = load_documents(decode((case / "input.yaml").read_bytes(), "input.yaml"), "input.yaml")
        except InputError:  # error-yaml-syntax and the like hold no job to check
            continue
        args_file = case / "args"
        args = [a for a in args_file.read_text().split("\n") if a] if args_file.exists() else []
        params = dict(render_command().make_context("render", [*args, "input.yaml"]).params)
        del params["paths"], params["output"]
        options = make_options(**params)
        for document in documents:
            data = document.data
            if isinstance(data, dict) and api.front_for(data) is not None:
                yield case.name, document.index, data, options


def test_every_golden_job_that_compiles_validates() -> None:
    checked = 0
    for case, index, job, options in golden_jobs():
        if front_errors(job, options):
            continue
        assert schema_errors(job) == [], f"golden/{case}/input.yaml document {index}"
        checked += 1
    assert checked >= 40, f"only {checked} golden jobs compiled"


# --- agreement: the fronts and the schemas refuse the same mistakes -------------------------------

BAD = [
    pytest.param(changed(V1ALPHA2, (("spec", "slotPerWorker"), 2)), id="v1alpha2-spec-typo-slotPerWorker"),
    pytest.param(changed(V1ALPHA1, (("spec", "slotPerWorker"), 2)), id="v1alpha1-spec-typo-slotPerWorker"),
    pytest.param(
        changed(V1ALPHA2, (("spec", "mpiReplicaSpecs", "Workers"), {"replicas": 1})), id="replica-specs-typo"
    ),
    pytest.param(changed(V1ALPHA2, ((*WORKER, "replica"), 3)), id="worker-typo"),
    pytest.param(changed(V1ALPHA2, (("metadata", "lables"), {"a": "b"})), id="metadata-typo"),
    pytest.param(changed(V1ALPHA1, (("specs",), {})), id="top-level-typo"),
    pytest.param(changed(V1ALPHA2, ((*WORKER, "replicas"), "2")), id="replicas-as-string"),
    pytest.param(changed(V1ALPHA2, (("spec", "slotsPerWorker"), True)), id="slots-as-boolean"),
    pytest.param(changed(V1ALPHA1, (("spec", "launcherOnMaster"), "yes")), id="launcher-on-master-as-string"),
    pytest.param(changed(V1ALPHA2, (("metadata", "labels"), {"team": 7})), id="label-value-as-number"),
    pytest.param(changed(V1ALPHA2, (("spec", "mpiReplicaSpecs"), [])), id="replica-specs-as-list"),
    pytest.param(changed(V1ALPHA2, (("spec", "cleanPodPolicy"), "Some")), id="unknown-clean-pod-policy"),
    pytest.param(changed(V1ALPHA2, ((*WORKER, "restartPolicy"), "Sometimes")), id="unknown-restart-policy"),
    pytest.param(changed(V1ALPHA1, (("spec", "processingResourceType"), "tpu")), id="unknown-resource-type"),
    pytest.param(changed(V1ALPHA2, ((*WORKER, "replicas"), 0)), id="v1alpha2-zero-workers"),
    pytest.param(changed(V1ALPHA2, ((*WORKER, "replicas"), -3)), id="v1alpha2-negative-workers"),
    pytest.param(changed(V1ALPHA2, ((*WORKER, "replicas"), DELETE)), id="v1alpha2-workers-missing"),
    pytest.param(changed(V1ALPHA2, ((*LAUNCHER, "replicas"), 2)), id="v1alpha2-two-launchers"),
    pytest.param(changed(V1ALPHA2, ((*LAUNCHER, "replicas"), 0)), id="v1alpha2-zero-launchers"),
    pytest.param(changed(V1ALPHA2, (LAUNCHER, DELETE)), id="v1alpha2-no-launcher"),
    pytest.param(changed(V1ALPHA2, (WORKER, None)), id="v1alpha2-null-worker"),
    pytest.param(changed(V1ALPHA2, ((*WORKER, "template"), DELETE)), id="v1alpha2-worker-template-missing"),
    pytest.param(
        changed(V1ALPHA2, ((*LAUNCHER, "template"), {"spec": {"containers": []}})),
        id="v1alpha2-no-containers",
    ),
    pytest.param(
        changed(V1ALPHA2, ((*LAUNCHER, "template"), {"metadata": {}})), id="v1alpha2-template-without-spec"
    ),
    pytest.param(changed(V1ALPHA2, (("spec", "slotsPerWorker"), 0)), id="v1alpha2-zero-slots"),
    pytest.param(changed(V1ALPHA2, (("spec", "backoffLimit"), -1)), id="negative-backoff-limit"),
    pytest.param(changed(V1ALPHA2, (("spec", "activeDeadlineSeconds"), 0)), id="zero-deadline"),
    pytest.param(changed(V1ALPHA1, (("spec", "replicas"), 0)), id="v1alpha1-zero-replicas"),
    pytest.param(changed(V1ALPHA1, (("spec", "slotsPerWorker"), 0)), id="v1alpha1-zero-slots"),
    pytest.param(
        changed(V1ALPHA1, (("spec", "replicas"), DELETE), (("spec", "gpus"), -8)), id="v1alpha1-negative-gpus"
    ),
    pytest.param(changed(V1ALPHA1, (("spec", "gpusPerNode"), 0)), id="v1alpha1-zero-gpus-per-node"),
    pytest.param(changed(V1ALPHA1, (("spec", "replicas"), 2**31)), id="v1alpha1-replicas-over-int32"),
    pytest.param(changed(V1ALPHA1, (("spec", "replicas"), DELETE)), id="v1alpha1-no-sizing"),
    pytest.param(changed(V1ALPHA1, (("spec", "replicas"), None)), id="v1alpha1-null-sizing"),
    pytest.param(changed(V1ALPHA1, (("spec", "gpus"), 8)), id="v1alpha1-gpus-and-replicas"),
    pytest.param(
        changed(
            V1ALPHA1, (("spec", "replicas"), DELETE), (("spec", "gpus"), 8), (("spec", "processingUnits"), 8)
        ),
        id="v1alpha1-gpus-and-processing-units",
    ),
    pytest.param(
        changed(V1ALPHA1, (("spec", "replicas"), DELETE), (("spec", "gpus"), 12)),
        id="v1alpha1-gpus-not-allowed-by-crd",
    ),
    pytest.param(
        changed(V1ALPHA1, (("spec", "replicas"), DELETE), (("spec", "processingUnits"), 3)),
        id="v1alpha1-processing-units-not-allowed-by-crd",
    ),
    pytest.param(changed(V1ALPHA1, (("spec", "template"), DELETE)), id="v1alpha1-template-missing"),
    pytest.param(
        changed(V1ALPHA1, (("spec", "template"), {"spec": {"containers": ["main"]}})),
        id="container-not-a-mapping",
    ),
    pytest.param(changed(V1ALPHA1, (("metadata",), DELETE)), id="metadata-missing"),
    pytest.param(
        changed(V1ALPHA2, (("metadata", "name"), DELETE), (("metadata", "generateName"), "pi-")),
        id="generate-name",
    ),
    pytest.param(changed(V1ALPHA2, (("metadata", "name"), "Pi")), id="name-upper-case"),
    pytest.param(changed(V1ALPHA2, (("metadata", "name"), "1pi")), id="name-starts-with-digit"),
    pytest.param(changed(V1ALPHA2, (("metadata", "name"), "pi-")), id="name-ends-with-dash"),
    pytest.param(changed(V1ALPHA2, (("metadata", "name"), "a" * 46)), id="name-too-long-for-derived-names"),
    pytest.param(changed(V1ALPHA2, (("metadata", "namespace"), "ML")), id="namespace-invalid"),
    pytest.param(
        changed(V1ALPHA2, (("metadata", "annotations"), {"mpigen.dev/gang-schedular": "volcano"})),
        id="unknown-option-annotation",
    ),
    pytest.param(
        changed(V1ALPHA2, (("metadata", "annotations"), {"mpigen.dev/gang-scheduler": "kube"})),
        id="bad-gang-scheduler",
    ),
    pytest.param(
        changed(V1ALPHA2, (("metadata", "annotations"), {"mpigen.dev/wait-timeout": "0"})),
        id="zero-wait-timeout",
    ),
    pytest.param(
        changed(V1ALPHA2, (("metadata", "annotations"), {"mpigen.dev/wait-timeout": "10s"})),
        id="wait-timeout-with-unit",
    ),
    pytest.param(
        changed(V1ALPHA2, (("metadata", "annotations"), {"mpigen.dev/validate": "no"})),
        id="bad-validate-option",
    ),
    pytest.param(
        changed(V1ALPHA2, (("metadata", "annotations"), {"mpigen.dev/namespace": "a_b"})),
        id="bad-namespace-option",
    ),
    pytest.param(
        changed(V1ALPHA2, (("metadata", "annotations"), {"mpigen.dev/kube-version": "latest"})),
        id="bad-kube-version-option",
    ),
    pytest.param(
        changed(V1ALPHA2, (("metadata", "annotations"), {"mpigen.dev/scheduler-name": " "})),
        id="blank-scheduler-name",
    ),
    pytest.param(
        changed(
            V1ALPHA2,
            (
                ("metadata", "annotations"),
                {"mpigen.dev/gang-scheduler": "volcano", "mpigen.dev/scheduler-name": "My Scheduler"},
            ),
        ),
        id="scheduler-name-not-a-dns-subdomain",
    ),
    pytest.param(
        changed(V1ALPHA2, (("metadata", "annotations"), {"mpigen.dev/kubectl-delivery-image": "alpine\nid"})),
        id="image-with-a-newline",
    ),
    pytest.param(
        changed(V1ALPHA2, (("metadata", "annotations"), {"mpigen.dev/wait-timeout": "1000000000"})),
        id="wait-timeout-too-large",
    ),
    pytest.param(
        changed(V1ALPHA2, (("metadata", "annotations"), {"mpigen.dev/wait-timeout": "\u0663\u0660\u0660"})),
        id="wait-timeout-in-arabic-indic-digits",
    ),
    pytest.param(changed(V1ALPHA2, (("kind",), "MPIJobs")), id="wrong-kind"),
    pytest.param(changed(V1, ((*LAUNCHER, "restartPolicy"), "Always")), id="v1-launcher-always-restarts"),
    pytest.param(changed(V1, ((*LAUNCHER, "replicas"), 2)), id="v1-two-launchers"),
    pytest.param(changed(V1, (("spec", "mpiReplicaSpecs", "Launcher"), DELETE)), id="v1-no-launcher"),
    pytest.param(changed(V1, ((*WORKER, "replicas"), -1)), id="v1-negative-workers"),
    pytest.param(
        changed(V1, ((*WORKER, "template", "spec", "containers", 0, "image"), DELETE)),
        id="v1-container-without-image",
    ),
    pytest.param(
        changed(V1, (("spec", "runPolicy"), {"managedBy": "kubeflow.org/mpi-operator"})),
        id="v1-managed-by-other-operator",
    ),
    pytest.param(changed(V1, (("spec", "runPolicy"), {"activeDeadlineSeconds": 0})), id="v1-deadline-zero"),
    pytest.param(changed(V1, (("spec", "sshAuthMountPath"), "/root/.ssh")), id="v1-field-of-v2beta1"),
    pytest.param(changed(V1, (("spec", "backoffLimit"), 3)), id="v1-backoff-limit-outside-run-policy"),
]


@pytest.mark.parametrize("document", BAD)
def test_front_and_schema_both_refuse(document: dict[str, Any]) -> None:
    assert front_errors(document), "the front accepts it"
    schema = load_schema(document["apiVersion"])
    assert list(Draft202012Validator(schema).iter_errors(document)), "the schema accepts it"


GOOD = [
    pytest.param(JOBS[V1ALPHA1], id="v1alpha1-replicas"),
    pytest.param(JOBS[V1ALPHA2], id="v1alpha2"),
    pytest.param(JOBS[V1], id="v1"),
    pytest.param(
        changed(V1, ((*WORKER, "replicas"), DELETE), (("spec", "cleanPodPolicy"), "All")),
        id="v1-no-worker-replicas-deprecated-clean-pod-policy",
    ),
    pytest.param(
        changed(V1ALPHA1, (("spec", "replicas"), DELETE), (("spec", "gpus"), 16)), id="v1alpha1-gpus"
    ),
    pytest.param(
        changed(V1ALPHA1, (("spec", "replicas"), DELETE), (("spec", "gpus"), 4)),
        id="v1alpha1-gpus-below-per-node",
    ),
    pytest.param(
        changed(
            V1ALPHA1,
            (("spec", "replicas"), DELETE),
            (("spec", "processingUnits"), 2),
            (("spec", "gpus"), None),
        ),
        id="v1alpha1-processing-units-with-null-gpus",
    ),
    pytest.param(
        changed(V1ALPHA1, (("spec", "processingResourceType"), None), (("status",), {"x": 1})),
        id="nulls-and-status",
    ),
    pytest.param(
        changed(V1ALPHA2, ((*LAUNCHER, "replicas"), 1), ((*WORKER, "restartPolicy"), "OnFailure")),
        id="launcher-replicas-1",
    ),
    pytest.param(
        changed(V1ALPHA2, ((*LAUNCHER, "replicas"), None), (("spec", "cleanPodPolicy"), None)),
        id="v1alpha2-nulls",
    ),
    pytest.param(changed(V1ALPHA2, (("metadata", "name"), "a" * 45)), id="name-at-its-longest"),
    pytest.param(
        changed(
            V1ALPHA2,
            (("metadata",), {"name": "pi", "namespace": "ml", "uid": "u", "generation": 3, "labels": None}),
        ),
        id="cluster-metadata",
    ),
    pytest.param(
        changed(
            V1ALPHA2,
            (
                ("metadata", "annotations"),
                {
                    "mpigen.dev/gang-scheduler": "volcano",
                    "mpigen.dev/scheduler-name": "my-scheduler",
                    "mpigen.dev/wait-timeout": "0120",
                    "mpigen.dev/kube-version": "v1.30.2",
                    "mpigen.dev/validate": "false",
                    "mpigen.dev/namespace": "ml",
                    "mpigen.devices/other": "anything",
                    "example.com/note": "kept",
                },
            ),
        ),
        id="option-annotations",
    ),
]


@pytest.mark.parametrize("document", GOOD)
def test_front_and_schema_both_accept(document: dict[str, Any]) -> None:
    assert front_errors(document) == []
    assert schema_errors(document) == []


def object_paths(schema: dict[str, Any], path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Paths of every object the schema closes to unknown fields."""
    if schema.get("additionalProperties") is False:
        yield path
    for name, child in (schema.get("properties") or {}).items():
        yield from object_paths(child, (*path, name))


@pytest.mark.parametrize("api_version", [V1ALPHA1, V1ALPHA2])
def test_unknown_fields_are_refused_in_every_closed_object(api_version: str) -> None:
    paths = list(object_paths(load_schema(api_version)))
    assert {(), ("metadata",), ("spec",)} <= set(paths)
    for path in paths:
        document = changed(api_version, ((*path, "unknownField"), 1))
        assert front_errors(document), path
        assert schema_errors(document), path


# --- mpigen schema -------------------------------------------------------------------------------


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["schema", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("api_version", [V1ALPHA1, V1ALPHA2, V2BETA1])
def test_schema_command_prints_the_checked_in_file(api_version: str) -> None:
    code, out, _ = invoke("--api-version", api_version)
    assert code == 0
    assert out == (SCHEMAS / schema_file(api_version, "MPIJob")).read_text()
    assert json.loads(out)["properties"]["apiVersion"]["const"] == api_version


def test_schema_command_defaults_to_the_newest_version() -> None:
    code, out, _ = invoke()
    assert code == 0
    assert json.loads(out)["properties"]["apiVersion"]["const"] == V2BETA1


def test_schema_command_lists_supported_versions() -> None:
    assert invoke("--list") == (0, f"{V1ALPHA1}\n{V1ALPHA2}\n{V1}\n{V2BETA1}\n", "")


def test_schema_command_refuses_an_unknown_version() -> None:
    code, out, err = invoke("--api-version", "kubeflow.org/v2")
    assert (code, out) == (2, "")
    assert "kubeflow.org/v2" in err and V1ALPHA1 in err and V1ALPHA2 in err and V1 in err


def test_schema_command_help_shows_editor_use() -> None:
    code, out, _ = invoke("--help")
    assert code == 0
    assert "# yaml-language-server: $schema=" in out and "--api-version" in out


def test_schema_command_does_not_import_pydantic_or_jsonschema(fresh_python: str) -> None:
    script = (
        "import sys; from click.testing import CliRunner; from mpigen.cli import cli; "
        "r = CliRunner().invoke(cli, ['schema']); assert r.exit_code == 0, r.output; "
        "print(sorted(m for m in ('pydantic', 'jsonschema') if m in sys.modules))"
    )
    result = subprocess.run([fresh_python, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout == "[]\n"


def test_the_readme_states_the_schema_commands_default_and_shipped_files() -> None:
    import importlib.resources
    import re

    from mpigen.shells.schema import schema

    readme = (Path(__file__).resolve().parents[3] / "docs" / "howto" / "ci.md").read_text()
    [stated] = re.findall(r"\(`--api-version`, default `([^`]+)`", readme)
    [option] = [param for param in schema.params if param.name == "api_version"]
    assert stated == option.default
    shipped = sorted(
        p.name for p in importlib.resources.files("mpigen.schemas").iterdir() if p.name.startswith("mpijob-")
    )
    assert "`mpigen/schemas/mpijob-kubeflow-<version>.json`" in readme
    assert shipped == [
        f"mpijob-kubeflow-{v.split('/')[1]}.json"
        for v in ("kubeflow.org/v1", "kubeflow.org/v1alpha1", "kubeflow.org/v1alpha2", "kubeflow.org/v2beta1")
    ]
