"""Every golden output and every example's render, applied for real: the API server accepts all of it in one
`kubectl apply -f -` (client-side and server-side), with no warning, and a second apply changes nothing
(client-side: kubectl finds nothing to send, or where it always sends a patch the resourceVersions stay;
server-side: the same resourceVersions).

The cases are applied in a few batches of many cases (`Batch`), each case in namespaces of its own; a
batch that fails is checked again case by case, so that a failure names its case."""

from __future__ import annotations

import functools
import itertools
import re
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import pythons
import yaml
from controlplane import Cluster
from jobs import load_all

ROOT = Path(__file__).resolve().parents[2]
# Kubernetes' own gang (scheduling.k8s.io/v1beta1) is served only with the GenericWorkload gate, which this
# cluster keeps off (as a cluster does by default): test_workload_gang.py applies those cases to one with it.
GOLDEN = sorted(
    path
    for path in ROOT.glob("golden/*/expected.yaml")
    if "apiVersion: scheduling.k8s.io/v1beta1\n" not in path.read_text()
)
EXAMPLES = sorted(
    path
    for path in ROOT.glob("examples/**/*.yaml")
    if re.search(r"^kind: MPIJob$", path.read_text(), re.MULTILINE)
)
CASES = {f"golden/{path.parent.name}": path for path in GOLDEN} | {
    str(path.relative_to(ROOT)): path for path in EXAMPLES
}
NAMESPACE_OBJECT = re.compile(r"^(kind: Namespace\nmetadata:\n  name: )([a-z0-9][a-z0-9-]*)$", re.MULTILINE)
NAMESPACE_LINE = re.compile(r"^(\s*(?:- )?namespace: )(['\"]?)([a-z0-9][a-z0-9-]*)\2$", re.MULTILINE)


def render(path: Path) -> str:
    done = subprocess.run(
        [*pythons.mpigen_argv(), "render", str(path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@functools.cache  # an example is rendered once for all the tests here (the render is deterministic)
def manifest(case: str) -> str:
    path = CASES[case]
    return path.read_text() if case.startswith("golden/") else render(path)


class Namespaces:
    """Fresh namespace names, created together in one `kubectl create` (a call per namespace would be a
    third of the calls the checks make). Each name ends in a number of its own in this process."""

    numbers = itertools.count()  # shared: the names of any two instances differ too

    def __init__(self) -> None:
        self.names: list[str] = []  # those to create

    def new(self, prefix: str, create: bool = True) -> str:
        prefix = re.sub(r"[^a-z0-9]+", "-", prefix.lower()).strip("-")[:45].strip("-") or "t"
        name = f"{prefix}-{next(self.numbers)}"
        if create:
            self.names.append(name)
        return name

    def create(self, cluster: Cluster) -> None:
        items = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}} for name in self.names]
        if items:
            cluster.kubectl(
                "create",
                "-f",
                "-",
                "-o",
                "name",
                input=yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}),
            )


def into_fresh_namespaces(namespaces: Namespaces, text: str, prefix: str) -> tuple[str, list[str]]:
    """The same bytes with every namespace the objects name (in metadata or a RoleBinding subject, or a
    Namespace object's own name) moved to a fresh one, so cases never meet; and the namespaces used (the
    first for objects that name none). `namespaces.create` creates them."""
    fresh: dict[str, str] = {}
    # A Namespace the case itself holds gets a new name that nothing has created yet: the apply creates it.
    for match in NAMESPACE_OBJECT.finditer(text):
        fresh[match[2]] = namespaces.new(prefix, create=False) + "-own"
    for match in NAMESPACE_LINE.finditer(text):
        fresh.setdefault(match[3], namespaces.new(prefix))
    moved = NAMESPACE_LINE.sub(lambda m: m[1] + fresh[m[3]], text)
    moved = NAMESPACE_OBJECT.sub(lambda m: m[1] + fresh[m[2]], moved)
    named = {
        doc["metadata"]["namespace"] for doc in load_all(moved) if doc and "namespace" in doc["metadata"]
    }
    assert len(named) <= 1, f"objects in several namespaces: {sorted(named)}"
    target = named.pop() if named else fresh.get("default") or namespaces.new(prefix)
    return moved, [target, *(ns for ns in fresh.values() if ns != target)]


def object_count(text: str) -> int:
    return sum(1 for doc in load_all(text) if doc)


def statuses(stdout: str) -> list[str]:
    return [line.rsplit(" ", 1)[-1] for line in stdout.splitlines() if line.strip()]


def resource_versions(cluster: Cluster, namespace: str, text: str) -> str:
    """kind/name=resourceVersion of every object in `text` (those naming no namespace in `namespace`), but
    a Namespace (pass-through input that the cluster's controllers may touch at any time)."""
    found = versions_by_namespace(cluster, with_namespace(text, namespace))
    return " ".join(found[name] for name in sorted(found))


def numeric_quantities(obj: dict[str, Any]) -> bool:
    """Whether a pod template carries a resource quantity written as a YAML number (`nvidia.com/gpu: 4`,
    as the user wrote it): the API server stores the string "4", so kubectl's three-way patch is never
    empty and it prints `configured`, although nothing changes."""
    templates = [obj.get("spec", {}).get("template", {}).get("spec", {})]
    if obj.get("kind") == "JobSet":  # a pod template in each replicated job's Job template
        templates = [
            job["template"]["spec"]["template"].get("spec", {}) for job in obj["spec"]["replicatedJobs"]
        ]
    containers = [
        c
        for template in templates
        for c in template.get("containers", []) + template.get("initContainers", [])
    ]
    return any(
        not isinstance(value, str)
        for c in containers
        for kind in ("limits", "requests")
        for value in c.get("resources", {}).get(kind, {}).values()
    )


def expected_reapply_statuses(text: str) -> list[str]:
    """`unchanged` for every object, except where kubectl itself always sends a patch: a
    PodDisruptionBudget (its selector's patch strategy is `replace`, so the patch always carries it), a
    JobSet with a replicated job the server defaults into (a custom resource gets a three-way JSON merge
    patch, in which such a `replicatedJobs` differs from the one sent and is sent again whole), and
    objects with numeric quantities. The resourceVersions prove that nothing changes for those either."""
    objects = [obj for obj in load_all(text) if obj]
    return [
        "configured"
        if obj["kind"] == "PodDisruptionBudget" or server_defaulted_jobs(obj) or numeric_quantities(obj)
        else "unchanged"
        for obj in objects
    ]


def server_defaulted_jobs(obj: dict[str, Any]) -> bool:
    """A JobSet with a replicated job the CRD defaults into (`groupName`, `replicas`; jobset v0.12.0's CRD):
    a TrainJob's JobSet carries both (Trainer's runtime CRD defaults them already), so its reapply is empty."""
    jobs = obj.get("spec", {}).get("replicatedJobs", []) if obj.get("kind") == "JobSet" else []
    return any(not {"groupName", "replicas"} <= job.keys() for job in jobs)


@pytest.fixture(params=sorted(CASES))
def case(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_cases_found() -> None:
    assert len(GOLDEN) >= 40 and len(EXAMPLES) >= 4, (len(GOLDEN), EXAMPLES)


def delete_namespaces(cluster: Cluster, namespaces: list[str]) -> None:
    """An existing cluster's namespaces are deleted once checked; the suite's own control plane, which
    runs no controller (the lifecycle tests have one of their own), is thrown away whole."""
    if not cluster.owned:
        cluster.kubectl("delete", "namespace", *namespaces, "--wait=false", "--ignore-not-found", check=False)


def check_client_side_apply(cluster: Cluster, case: str, text: str, namespaces: list[str]) -> None:
    first = cluster.kubectl("apply", "-n", namespaces[0], "-f", "-", input=text, check=False)
    assert first.returncode == 0, f"the API server refused {case}:\n{first.stderr}"
    assert first.stderr == "", f"warnings applying {case}:\n{first.stderr}"
    assert statuses(first.stdout) == ["created"] * object_count(text), first.stdout
    expected = expected_reapply_statuses(text)
    # `unchanged`: kubectl found nothing to send. Where it always sends a patch (`configured`), the
    # resourceVersions show that the patch changed nothing.
    before = resource_versions(cluster, namespaces[0], text) if "configured" in expected else None
    again = cluster.kubectl("apply", *REAPPLY, "-n", namespaces[0], "-f", "-", input=text)
    assert again.stderr == ""
    assert statuses(again.stdout) == expected, again.stdout
    if before is not None:
        assert resource_versions(cluster, namespaces[0], text) == before, "a second apply changed objects"


def check_server_side_apply(cluster: Cluster, case: str, text: str, namespaces: list[str]) -> None:
    argv = ("apply", *SERVER_SIDE, "-n", namespaces[0], "-f", "-")
    first = cluster.kubectl(*argv, input=text, check=False)
    assert first.returncode == 0, f"the API server refused {case}:\n{first.stderr}"
    assert first.stderr == "", f"warnings applying {case}:\n{first.stderr}"
    assert statuses(first.stdout) == ["serverside-applied"] * object_count(text), first.stdout
    versions = resource_versions(cluster, namespaces[0], text)
    cluster.kubectl(*argv, input=text)
    assert resource_versions(cluster, namespaces[0], text) == versions, (
        "a second server-side apply changed objects"
    )


SERVER_SIDE = ("--server-side", "--field-manager=mpigen-test")
# The client-side reapply takes each kind's patch strategies (a list merged by key, replaced, ...) from
# kubectl's compiled-in API types, the Go types the API's OpenAPI documents are generated from, so the
# patch is the same; with the documents kubectl parses its group's whole document for every object (120
# ms of CPU for each ServiceAccount, ConfigMap, Service or Secret: most of this file's CPU). Custom
# resources get a JSON merge patch either way.
REAPPLY = ("--openapi-patch=false",)
CHECKS: dict[str, Callable[[Cluster, str, str, list[str]], None]] = {
    "client-side": check_client_side_apply,
    "server-side": check_server_side_apply,
}


def run_check(mode: str, cluster: Cluster, case: str, text: str, namespaces: list[str]) -> None:
    try:
        CHECKS[mode](cluster, case, text, namespaces)
    finally:
        delete_namespaces(cluster, namespaces)


METADATA = re.compile(r"^metadata:\n((?:  .*\n)*)", re.MULTILINE)
CLUSTER_SCOPED = {"Namespace"}  # the only cluster-scoped kind the cases hold (test_namespaced_kinds_only)


def with_namespace(text: str, namespace: str) -> str:
    """The same bytes with `namespace` written into the metadata of each namespaced object that names
    none: what `kubectl apply -n <namespace>` does for one case, which a stream of many cases cannot ask."""
    documents = re.split(r"^---\n", text, flags=re.MULTILINE)
    out = []
    for document in documents:
        kind = re.search(r"^kind: (\S+)$", document, re.MULTILINE)
        metadata = METADATA.search(document)
        named = metadata and re.search(r"^  namespace: ", metadata[1], re.MULTILINE)
        if kind and metadata and kind[1] not in CLUSTER_SCOPED and not named:
            at = metadata.start(1)
            document = f"{document[:at]}  namespace: {namespace}\n{document[at:]}"
        out.append(document)
    return "---\n".join(out)


def resource_name(api_version: str, kind: str) -> str:
    """`job.batch`, `configmap`: a type by its singular name and group, as kubectl and
    tests/cluster/restget.py read it (`job` alone is Volcano's too)."""
    group = api_version.rpartition("/")[0]
    return f"{kind.lower()}.{group}" if group else kind.lower()


def versions_by_namespace(cluster: Cluster, text: str) -> dict[str, str]:
    """namespace -> kind/name=resourceVersion of its objects in `text` (a Namespace object left out, as
    in `resource_versions`): one list of each kind over all namespaces (`kubectl get -f` would read
    every object on its own), read over HTTPS on the suite's own control plane (Cluster.get: kubectl's
    decoding of these lists, which hold every case's objects, was a third of this file's CPU)."""
    objects = [obj for obj in load_all(text) if obj and obj["kind"] not in CLUSTER_SCOPED]
    wanted = {(obj["metadata"]["namespace"], obj["kind"], obj["metadata"]["name"]) for obj in objects}
    types = sorted({resource_name(obj["apiVersion"], obj["kind"]) for obj in objects})
    found: dict[str, list[str]] = {}
    for item in cluster.get(",".join(types), "-A")["items"]:
        metadata = item["metadata"]
        namespace, kind, name = metadata.get("namespace"), item["kind"], metadata["name"]
        if (namespace, kind, name) in wanted:
            found.setdefault(namespace, []).append(f"{kind}/{name}={metadata['resourceVersion']}")
    assert sum(map(len, found.values())) == len(wanted), "objects missing from the lists"
    return {namespace: " ".join(sorted(items)) for namespace, items in found.items()}


class Batch(NamedTuple):
    """Several cases of one mode applied as one stream, each in namespaces of its own: kubectl reads
    the API's OpenAPI documents once per call, which costs more than most cases' objects (a call per
    case made this file the longest in the suite)."""

    mode: str
    cases: list[str]
    manifests: list[str]  # each case's own bytes
    texts: list[str]  # the same in fresh namespaces, each named in its objects (with_namespace)
    namespaces: list[list[str]]

    @classmethod
    def of(cls, mode: str, manifests: dict[str, str], namespaces: Namespaces) -> Batch:
        prepared = [into_fresh_namespaces(namespaces, text, case) for case, text in manifests.items()]
        return cls(
            mode,
            list(manifests),
            list(manifests.values()),
            [with_namespace(text, names[0]) for text, names in prepared],
            [names for _, names in prepared],
        )


def check_batch(cluster: Cluster, batch: Batch) -> None:
    """The checks of CHECKS for every case of `batch` at once: one apply, one reapply, and the
    resourceVersions before and after. Any difference raises; `run_batch` then finds the case.

    The client-side reapply sends each object once: one that is the same as another of the batch but
    for its namespaces is left out, since what kubectl sends depends on the object and on what the
    server made of it, both the same (kubectl's three-way merge of every object costs more CPU than
    all the rest of this file)."""
    stream = "".join(text if text.startswith("---") else f"---\n{text}" for text in batch.texts)
    argv = ("apply", *(SERVER_SIDE if batch.mode == "server-side" else ()), "-f", "-")
    created = "serverside-applied" if batch.mode == "server-side" else "created"
    first = cluster.kubectl(*argv, input=stream, check=False, timeout=BATCH_TIMEOUT)
    assert first.returncode == 0 and first.stderr == "", first.stderr
    assert statuses(first.stdout) == [created] * object_count(stream), first.stdout
    again_stream = stream if batch.mode == "server-side" else each_object_once(stream)
    if batch.mode == "server-side":
        expected = [created] * object_count(stream)
    else:
        expected = expected_reapply_statuses(again_stream)
    before = versions_by_namespace(cluster, stream)
    again_argv = argv if batch.mode == "server-side" else (*argv, *REAPPLY)
    again = cluster.kubectl(*again_argv, input=again_stream, timeout=BATCH_TIMEOUT)
    assert again.stderr == "", again.stderr
    assert statuses(again.stdout) == expected, again.stdout
    assert versions_by_namespace(cluster, stream) == before, "a second apply changed objects"


NAMESPACE_FIELD = re.compile(r"^\s*(?:- )?namespace: .*\n", re.MULTILINE)


def each_object_once(stream: str) -> str:
    """The documents of `stream`, each the first of those that differ only in their namespaces."""
    seen: set[str] = set()
    kept = []
    for document in re.split(r"^---\n", stream, flags=re.MULTILINE):
        key = NAMESPACE_FIELD.sub("", document)
        if document.strip() and key not in seen:
            seen.add(key)
            kept.append(f"---\n{document}")
    return "".join(kept)


def run_batch(cluster: Cluster, batch: Batch) -> dict[tuple[str, str], BaseException | None]:
    """Each case's outcome: all pass when the batch does; otherwise each case is checked again alone
    (CHECKS, in namespaces of its own) so that a failure names its case, and a batch failure that no
    case repeats alone is every case's."""
    try:
        try:
            check_batch(cluster, batch)
            return {(batch.mode, case): None for case in batch.cases}
        finally:
            delete_namespaces(cluster, [ns for names in batch.namespaces for ns in names])
    except (AssertionError, subprocess.TimeoutExpired) as failure:
        batch_failure = failure
    alone: dict[tuple[str, str], BaseException | None] = {}
    for case, own in zip(batch.cases, batch.manifests, strict=True):
        namespaces = Namespaces()
        text, names = into_fresh_namespaces(namespaces, own, f"alone-{case}")
        namespaces.create(cluster)
        try:
            run_check(batch.mode, cluster, case, text, names)
            alone[(batch.mode, case)] = None
        except AssertionError as failure:
            alone[(batch.mode, case)] = failure
    if all(outcome is None for outcome in alone.values()):
        failure = AssertionError(f"applied with {len(batch.cases) - 1} other cases:\n{batch_failure}")
        return dict.fromkeys(alone, failure)
    return alone


@pytest.fixture(scope="module")
def applied(cluster: Cluster, request: pytest.FixtureRequest) -> dict[tuple[str, str], BaseException | None]:
    """Every check of every case, BATCHES per mode run a few at a time (each case in namespaces of its
    own, so they never meet). Each test below reports its own case's outcome."""
    selected: dict[str, set[str]] = {mode: set() for mode in CHECKS}
    for item in request.session.items:  # only the cases this run selected
        mode = MODE_OF_TEST.get(getattr(item, "originalname", ""))
        if mode:
            selected[mode].add(item.callspec.params["case"])  # type: ignore[attr-defined]
    namespaces = Namespaces()
    manifests = {case: manifest(case) for case in sorted(set().union(*selected.values()))}
    batches = []
    for mode, cases in selected.items():
        ordered = sorted(cases)
        for part in range(BATCHES):
            chosen = {case: manifests[case] for case in ordered[part::BATCHES]}
            if chosen:
                batches.append(Batch.of(mode, chosen, namespaces))
    namespaces.create(cluster)
    with ThreadPoolExecutor(max_workers=BATCHES) as pool:
        outcomes = pool.map(lambda batch: run_batch(cluster, batch), batches)
    return {key: outcome for found in outcomes for key, outcome in found.items()}


BATCHES = 4  # per mode, applied concurrently: kubectl and the API server wait on each other
BATCH_TIMEOUT = 900  # seconds for one kubectl call on a batch (a client-side reapply takes the longest)


MODE_OF_TEST = {
    "test_client_side_apply_accepts_everything_and_reapplies_unchanged": "client-side",
    "test_server_side_apply_accepts_everything_and_reapplies_without_change": "server-side",
}


def outcome_of(applied: dict[tuple[str, str], BaseException | None], mode: str, case: str) -> None:
    failure = applied[(mode, case)]
    if failure is not None:
        raise failure


def test_client_side_apply_accepts_everything_and_reapplies_unchanged(
    applied: dict[tuple[str, str], BaseException | None], case: str
) -> None:
    outcome_of(applied, "client-side", case)


def test_server_side_apply_accepts_everything_and_reapplies_without_change(
    applied: dict[tuple[str, str], BaseException | None], case: str
) -> None:
    outcome_of(applied, "server-side", case)


def test_every_kind_of_the_cases_but_namespace_is_namespaced(cluster: Cluster) -> None:
    """with_namespace writes a namespace into every object but a Namespace: right only while no case
    holds another cluster-scoped kind."""
    listed = cluster.kubectl("api-resources", "--namespaced=false", "-o", "wide", "--no-headers").stdout
    cluster_scoped = {line.split()[-2] for line in listed.splitlines() if line.strip()}
    kinds = {doc["kind"] for case in CASES for doc in load_all(manifest(case)) if doc}
    assert "Namespace" in cluster_scoped and kinds & cluster_scoped == CLUSTER_SCOPED


def test_with_namespace_names_the_namespace_only_where_the_object_names_none() -> None:
    text = (
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    x: y\ndata:\n  k: v\n"
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  namespace: own\n"
        "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: n\n"
    )
    objects = list(load_all(with_namespace(text, "fresh")))
    assert [obj["metadata"].get("namespace") for obj in objects] == ["fresh", "own", None]
    assert objects[0]["metadata"]["labels"] == {"x": "y"} and objects[0]["data"] == {"k": "v"}


BAD = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Not_A_Name\n"


@pytest.mark.parametrize("mode", sorted(CHECKS))
def test_a_failing_batch_names_the_case_that_fails_alone(cluster: Cluster, mode: str) -> None:
    good = "golden/" + GOLDEN[0].parent.name
    manifests = {good: manifest(good), "bad": BAD}
    namespaces = Namespaces()
    batch = Batch.of(mode, manifests, namespaces)
    namespaces.create(cluster)
    outcomes = run_batch(cluster, batch)
    assert outcomes[(mode, good)] is None
    assert "the API server refused bad" in str(outcomes[(mode, "bad")])
    assert "Not_A_Name" in str(outcomes[(mode, "bad")])


def test_each_object_once_keeps_the_first_of_objects_alike_but_for_their_namespaces() -> None:
    one = "kind: ConfigMap\nmetadata:\n  name: a\n  namespace: {ns}\ndata:\n  k: {value}\n"
    stream = "".join(f"---\n{one.format(ns=ns, value=value)}" for ns, value in [("x", 1), ("y", 1), ("y", 2)])
    kept = [(obj["metadata"]["namespace"], obj["data"]["k"]) for obj in load_all(each_object_once(stream))]
    assert kept == [("x", 1), ("y", 2)]
