"""Cross-check with kubeconform: a second, independent validator must agree with mpigen's verdicts.

kubeconform is a Go binary that no registry this project installs from (PyPI, Debian, npm) carries: the
suite builds it from its Go module (tests/cluster/gotools.py) unless one is on PATH, and skips, saying why,
where `go` is missing. It runs offline: every
`-schema-location` is a local path template, filled from the schemas kubernetes-validate ships (for
built-in kinds) and the PodGroup schemas vendored in `mpigen.schemas`.

kubeconform cannot read kubernetes-validate's files as they are: their `$ref`s point at
`/api/_definitions.json` (the vendored ones at `https://kubernetes.io/api/_definitions.json`), which a
JSON Schema reader resolves against the file's own location. The schemas handed to kubeconform are
copies whose references name the installed `_definitions.json` by its `file://` URI, so nothing is
fetched. The PodGroup location comes first: kubeconform takes the first location that has a file, and
its Kubernetes location, which only knows the first label of a group, would find Kubernetes' own
`scheduling.k8s.io` PodGroup for a Volcano one.

The tests that check those locations against the installed files run without kubeconform.
"""

from __future__ import annotations

import copy
import importlib.resources
import importlib.util
import json
import re
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest
from jobs import load_all
from test_golden import without_newer_fields

from mpigen.checks.kube import schemas as kubeschema
from mpigen.checks.kube.validator import validate_object
from mpigen.checks.kube.versions import DEFAULT_KUBE_VERSION
from mpigen.targets import all_kinds, kind_schemas
from mpigen.yaml.dump import FORMATS

Obj = dict[str, Any]


GOLDEN = Path(__file__).resolve().parents[2] / "golden"
EXPECTED = sorted(GOLDEN.glob("*/expected.yaml"))
KUBE_VERSIONS = ("1.25", DEFAULT_KUBE_VERSION)

# kubernetes-validate's layout: kubernetes-json-schema/v1.37.0-local-strict/statefulset-apps-v1.json.
KUBE_DIRECTORY = "{{ .NormalizedKubernetesVersion }}-local{{ .StrictSuffix }}"
KIND_FILE = "{{ .ResourceKind }}{{ .KindSuffix }}.json"
KUBE_LOCATION = f"{KUBE_DIRECTORY}/{KIND_FILE}"
DEFINITIONS_LOCATION = f"{KUBE_DIRECTORY}/_definitions.json"
# CRD schemas by full group, so Volcano's and scheduler-plugins' PodGroups never meet a built-in kind.
CRD_LOCATION = "crds/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json"

_PLACEHOLDER = re.compile(r"\{\{\s*\.(\w+)\s*\}\}")


def schema_path(template: str, kind: str, api_version: str, kube_version: str, strict: bool = True) -> str:
    """`template` filled in as kubeconform fills a `-schema-location` (pkg/registry/registry.go,
    `schemaPath`); `kube_version` is kubeconform's `-kubernetes-version` ("1.37.0" or "master")."""
    group_and_version = api_version.split("/")
    kind_suffix = "-" + group_and_version[0].split(".")[0].lower()
    if len(group_and_version) > 1:
        kind_suffix += "-" + group_and_version[1].lower()
    values = {
        "NormalizedKubernetesVersion": kube_version if kube_version == "master" else "v" + kube_version,
        "StrictSuffix": "-strict" if strict else "",
        "ResourceKind": kind.lower(),
        "ResourceAPIVersion": group_and_version[-1],
        "Group": group_and_version[0],
        "KindSuffix": kind_suffix,
    }
    return _PLACEHOLDER.sub(lambda match: values[match[1]], template)


def kube_schema_root() -> Path:
    """Where kubernetes-validate keeps its schemas: one folder per version, one file per kind."""
    spec = importlib.util.find_spec("kubernetes_validate")
    assert spec is not None and spec.submodule_search_locations, "kubernetes-validate is not installed"
    root = Path(next(iter(spec.submodule_search_locations))) / "kubernetes-json-schema"
    assert root.is_dir(), f"kubernetes-validate's schemas are not at {root}"
    return root


def full_version(version: str) -> str:
    return f"{version}.0"  # kubeconform's -kubernetes-version wants x.y.z


def pin_references(node: Any, definitions_uri: str) -> Any:
    """A copy of a schema whose references into any `_definitions.json` name `definitions_uri`."""
    if isinstance(node, list):
        return [pin_references(item, definitions_uri) for item in node]
    if not isinstance(node, dict):
        return node
    pinned = {key: pin_references(value, definitions_uri) for key, value in node.items()}
    ref = node.get("$ref")
    if isinstance(ref, str):
        document, _, fragment = ref.partition("#")
        if document.endswith("/_definitions.json"):
            pinned["$ref"] = f"{definitions_uri}#{fragment}"
    return pinned


def source_schema(api_version: str, kind: str, version: str) -> tuple[str, Obj]:
    """(the location template kubeconform finds it under, the schema) for one emitted kind."""
    vendored = {**kubeschema.VENDORED_SCHEMAS, **kind_schemas()}.get((api_version, kind))
    if vendored:
        text = importlib.resources.files("mpigen.schemas").joinpath(vendored).read_text(encoding="utf-8")
        return CRD_LOCATION, json.loads(text)
    path = kube_schema_root() / schema_path(KUBE_LOCATION, kind, api_version, full_version(version))
    return KUBE_LOCATION, json.loads(path.read_text(encoding="utf-8"))


def build_schema_tree(root: Path, version: str, kinds: Iterable[tuple[str, str]]) -> list[str]:
    """Write the schemas of `kinds` ((apiVersion, kind) pairs) for Kubernetes `version` under `root`,
    laid out as the location templates say; return kubeconform's `-schema-location` values, in order."""
    definitions = kube_schema_root() / schema_path(DEFINITIONS_LOCATION, "", "v1", full_version(version))
    for api_version, kind in sorted(set(kinds)):
        location, schema = source_schema(api_version, kind, version)
        target = root / schema_path(location, kind, api_version, full_version(version))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(pin_references(schema, definitions.as_uri())), encoding="utf-8")
    return [str(root / CRD_LOCATION), str(root / KUBE_LOCATION)]


def first_schema_file(locations: list[str], kind: str, api_version: str, version: str) -> Path | None:
    """The file kubeconform reads for a kind: that of the first location that has one."""
    for location in locations:
        path = Path(schema_path(location, kind, api_version, full_version(version)))
        if path.is_file():
            return path
    return None


def references(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from references(value)
    elif isinstance(node, list):
        for item in node:
            yield from references(item)


def golden_objects(version: str | None = None) -> list[Obj]:
    """Every golden object with a Kubernetes schema (other Kubeflow kinds and other projects' MPIJobs pass
    through: none ships); for an older `version`, without the fields mpigen emits only for newer ones."""
    texts = [path.read_text() for path in EXPECTED]
    if version is not None and tuple(map(int, version.split("."))) < (1, 37):
        # --gang-scheduler kubernetes (scheduling.k8s.io/v1beta1, spec.schedulingGroup) is refused before 1.37.
        texts = [text for text in texts if "apiVersion: scheduling.k8s.io/v1beta1\n" not in text]
    objects = [obj for text in texts for obj in load_all(text) if obj]
    from mpigen.inputs import foreign_mpijob  # another project's MPIJob passes through too

    objects = [
        obj
        for obj in objects
        if not obj["apiVersion"].startswith("kubeflow.org/") and not foreign_mpijob(obj)
    ]
    return objects if version is None else [without_newer_fields(obj, version) for obj in objects]


def broken_objects(objects: list[Obj]) -> list[Obj]:
    """Copies of golden objects broken on purpose: an unknown field, a wrong type, a negative minMember."""
    workers = next(obj for obj in objects if obj["kind"] == "StatefulSet")
    unknown_field = copy.deepcopy(workers)
    unknown_field["metadata"]["name"] = "unknown-field"
    unknown_field["spec"]["replicaz"] = 3
    wrong_type = copy.deepcopy(workers)
    wrong_type["metadata"]["name"] = "wrong-type"
    wrong_type["spec"]["replicas"] = "three"
    gang = copy.deepcopy(next(obj for obj in objects if obj["apiVersion"] == "scheduling.volcano.sh/v1beta1"))
    gang["metadata"]["name"] = "negative-gang"
    gang["spec"]["minMember"] = -1
    return [unknown_field, wrong_type, gang]


def kinds_of(objects: Iterable[Obj]) -> set[tuple[str, str]]:
    return {(obj["apiVersion"], obj["kind"]) for obj in objects}


def names_schema(schema: Obj, api_version: str, kind: str) -> bool:
    """Whether a schema is the one of exactly this apiVersion and kind: Kubernetes' files say so in
    `x-kubernetes-group-version-kind`, the vendored CRD schemas in their apiVersion and kind enums."""
    group, _, version = api_version.rpartition("/")
    if {"group": group, "version": version, "kind": kind} in schema.get(
        "x-kubernetes-group-version-kind", []
    ):
        return True
    properties = schema.get("properties", {})
    enums = [properties.get(field, {}).get("enum") for field in ("apiVersion", "kind")]
    return enums == [[api_version], [kind]]


# ---- the location templates, checked against the installed files (no kubeconform needed) -------------


def test_schema_path_fills_templates_as_kubeconform_does() -> None:
    # kubeconform's own examples (pkg/registry/registry_test.go, Readme.md).
    default = "https://x/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/" + KIND_FILE
    assert (
        schema_path(default, "Deployment", "apps/v1", "1.16.0")
        == "https://x/v1.16.0-standalone-strict/deployment-apps-v1.json"
    )
    assert (
        schema_path(default, "Deployment", "apps/v1", "1.16.0", strict=False)
        == "https://x/v1.16.0-standalone/deployment-apps-v1.json"
    )
    assert (
        schema_path(default, "Service", "v1", "master", strict=False)
        == "https://x/master-standalone/service-v1.json"
    )
    crd = schema_path(CRD_LOCATION, "PodGroup", "scheduling.volcano.sh/v1beta1", "1.37.0")
    assert crd == "crds/scheduling.volcano.sh/podgroup_v1beta1.json"


@pytest.mark.parametrize("version", KUBE_VERSIONS)
@pytest.mark.parametrize(
    ("api_version", "kind"),
    [
        ("v1", "ConfigMap"),
        ("v1", "Service"),
        ("v1", "ServiceAccount"),
        ("apps/v1", "StatefulSet"),
        ("apps/v1", "Deployment"),
        ("batch/v1", "Job"),
        ("rbac.authorization.k8s.io/v1", "Role"),
        ("rbac.authorization.k8s.io/v1", "RoleBinding"),
        ("policy/v1", "PodDisruptionBudget"),
    ],
)
def test_kube_location_names_installed_schema_files(api_version: str, kind: str, version: str) -> None:
    path = kube_schema_root() / schema_path(KUBE_LOCATION, kind, api_version, full_version(version))
    assert path.is_file(), (
        f"{path} does not exist: KUBE_LOCATION no longer matches kubernetes-validate's layout"
    )
    assert names_schema(json.loads(path.read_text(encoding="utf-8")), api_version, kind)
    definitions = kube_schema_root() / schema_path(
        DEFINITIONS_LOCATION, kind, api_version, full_version(version)
    )
    assert definitions.is_file()


@pytest.mark.slow  # builds kubeconform's schema tree of every emitted kind, per version
@pytest.mark.parametrize("version", KUBE_VERSIONS)
def test_schema_tree_resolves_every_emitted_kind_offline(version: str, tmp_path: Path) -> None:
    """Every kind mpigen emits resolves, first location first as kubeconform looks, to the schema of
    exactly that kind, and every reference in it names an installed file: kubeconform fetches nothing."""
    kinds = kinds_of(golden_objects(version))
    assert ("scheduling.volcano.sh/v1beta1", "PodGroup") in kinds
    locations = build_schema_tree(tmp_path, version, kinds)
    for api_version, kind in kinds:
        found = first_schema_file(locations, kind, api_version, version)
        assert found is not None, f"no schema for {api_version} {kind}"
        schema = json.loads(found.read_text(encoding="utf-8"))
        assert names_schema(schema, api_version, kind), f"{found} is not the schema of {api_version} {kind}"
        documents = {ref.partition("#")[0] for ref in references(schema)} - {""}
        assert documents, f"{found}: no reference to Kubernetes' definitions"
        for document in documents:
            url = urlparse(document)
            assert url.scheme == "file" and Path(unquote(url.path)).is_file(), (
                f"{found}: {document} is not a local file"
            )


def plain_validator(schema_file: Path) -> Any:
    """A JSON Schema 2020-12 validator for one file of the tree, reading its references from local files
    only, as kubeconform's loader does: a check of the tree that needs no kubeconform."""
    import jsonschema
    from referencing import Registry, Resource

    def retrieve(uri: str) -> Resource[Any]:
        url = urlparse(uri)
        if url.scheme != "file":
            raise ValueError(f"not a local file: {uri}")  # never a download
        return Resource.from_contents(json.loads(Path(unquote(url.path)).read_text(encoding="utf-8")))

    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    registry: Registry[Any] = Registry(retrieve=retrieve)  # type: ignore[call-arg]
    return jsonschema.Draft202012Validator(schema, registry=registry)


@pytest.mark.slow  # the tree through jsonschema, every golden kind and broken object, per version
@pytest.mark.parametrize("version", KUBE_VERSIONS)
def test_schema_tree_agrees_with_mpigen_on_golden_and_broken_objects(version: str, tmp_path: Path) -> None:
    """Through a plain JSON Schema reader, the tree kubeconform is given accepts one golden object of
    every kind and rejects the broken ones, as mpigen does."""
    samples = list({(obj["apiVersion"], obj["kind"]): obj for obj in golden_objects(version)}.values())
    objects = samples + broken_objects(samples)
    locations = build_schema_tree(tmp_path, version, kinds_of(objects))
    for obj in objects:
        found = first_schema_file(locations, obj["kind"], obj["apiVersion"], version)
        assert found is not None
        tree_valid = plain_validator(found).is_valid(obj)
        assert tree_valid == (validate_object(obj, version, all_kinds()) == []), (
            f"{obj['kind']}/{obj['metadata']['name']}"
        )
        assert tree_valid == (obj in samples)


# ---- the cross-check -------------------------------------------------------------------------------


def run_kubeconform(kubeconform: str, files: list[Path], version: str, schema_root: Path) -> dict[str, Any]:
    kinds = kinds_of(obj for path in files for obj in load_all(path.read_text()) if obj)
    locations = build_schema_tree(schema_root, version, kinds)
    command = [kubeconform, "-strict", "-summary", "-verbose", "-output", "json"]
    command += ["-kubernetes-version", full_version(version)]
    for location in locations:
        command += ["-schema-location", location]
    result = subprocess.run(
        [*command, *map(str, files)], capture_output=True, text=True, timeout=300, check=False
    )
    assert result.stdout, f"kubeconform printed nothing (exit {result.returncode}): {result.stderr}"
    report: dict[str, Any] = json.loads(result.stdout)
    report["exit_code"] = result.returncode
    return report


def verdicts(report: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {(res["kind"], res["name"]): res["status"] for res in report["resources"]}


@pytest.mark.parametrize("version", KUBE_VERSIONS)
def test_kubeconform_accepts_every_golden_output(
    kubeconform_binary: str, version: str, tmp_path: Path
) -> None:
    objects = golden_objects(version)
    assert objects
    assert [obj for obj in objects if validate_object(obj, version, all_kinds())] == [], (
        "mpigen rejects a golden object"
    )
    manifest = tmp_path / "golden.yaml"
    manifest.write_text(FORMATS["yaml"](objects))
    report = run_kubeconform(kubeconform_binary, [manifest], version, tmp_path / "schemas")
    problems = [res for res in report["resources"] if res["status"] != "statusValid"]
    assert problems == [], json.dumps(problems, indent=2)
    assert report["summary"] == {"valid": len(objects), "invalid": 0, "errors": 0, "skipped": 0}
    assert report["exit_code"] == 0


@pytest.mark.parametrize("version", KUBE_VERSIONS)
def test_kubeconform_and_mpigen_reject_the_same_broken_objects(
    kubeconform_binary: str, version: str, tmp_path: Path
) -> None:
    """The cross-check can fail: objects broken on purpose are invalid for both validators."""
    objects = golden_objects(version)
    workers = next(obj for obj in objects if obj["kind"] == "StatefulSet")
    broken = broken_objects(objects)
    manifest = tmp_path / "broken.yaml"
    manifest.write_text(FORMATS["yaml"]([workers, *broken]))
    report = run_kubeconform(kubeconform_binary, [manifest], version, tmp_path / "schemas")
    expected = {(obj["kind"], obj["metadata"]["name"]): "statusInvalid" for obj in broken}
    expected[(workers["kind"], workers["metadata"]["name"])] = "statusValid"
    assert verdicts(report) == expected, json.dumps(report["resources"], indent=2)
    mpigen_verdicts = {
        (obj["kind"], obj["metadata"]["name"]): "statusInvalid"
        if validate_object(obj, version, all_kinds())
        else "statusValid"
        for obj in [workers, *broken]
    }
    assert mpigen_verdicts == expected
    assert report["exit_code"] == 1
