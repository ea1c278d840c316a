"""Every golden output and every example's render, applied for real: the API server accepts all of it in one
`kubectl apply -f -` (client-side and server-side), with no warning, and a second apply changes nothing
(client-side: kubectl finds nothing to send, or where it always sends a patch the resourceVersions stay;
server-side: the same resourceVersions)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml
from controlplane import Cluster

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = sorted(ROOT.glob("golden/*/expected.yaml"))
EXAMPLES = sorted(
    path
    for path in ROOT.glob("examples/**/*.yaml")
    if re.search(r"^kind: MPIJob$", path.read_text(), re.MULTILINE)
)
CASES = {f"golden/{path.parent.name}": path for path in GOLDEN} | {
    str(path.relative_to(ROOT)): path for path in EXAMPLES
}
CONCURRENT_CASES = 4
NAMESPACE_OBJECT = re.compile(r"^(kind: Namespace\nmetadata:\n  name: )([a-z0-9][a-z0-9-]*)$", re.MULTILINE)
NAMESPACE_LINE = re.compile(r"^(\s*(?:- )?namespace: )(['\"]?)([a-z0-9][a-z0-9-]*)\2$", re.MULTILINE)


def render(path: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "mpigen", "render", str(path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def manifest(case: str) -> str:
    path = CASES[case]
    return path.read_text() if case.startswith("golden/") else render(path)


class Namespaces:
    """Fresh namespace names, created together in one `kubectl create` (a call per namespace would be a
    third of the calls the checks make)."""

    def __init__(self) -> None:
        self.taken = 0  # names handed out: each ends in its own number
        self.names: list[str] = []  # those to create

    def new(self, prefix: str, create: bool = True) -> str:
        prefix = re.sub(r"[^a-z0-9]+", "-", prefix.lower()).strip("-")[:45].strip("-") or "t"
        name = f"{prefix}-{self.taken}"
        self.taken += 1
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
        doc["metadata"]["namespace"]
        for doc in yaml.safe_load_all(moved)
        if doc and "namespace" in doc["metadata"]
    }
    assert len(named) <= 1, f"objects in several namespaces: {sorted(named)}"
    target = named.pop() if named else fresh.get("default") or namespaces.new(prefix)
    return moved, [target, *(ns for ns in fresh.values() if ns != target)]


def object_count(text: str) -> int:
    return sum(1 for doc in yaml.safe_load_all(text) if doc)


def statuses(stdout: str) -> list[str]:
    return [line.rsplit(" ", 1)[-1] for line in stdout.splitlines() if line.strip()]


def resource_versions(cluster: Cluster, namespace: str, text: str) -> str:
    """kind/name=resourceVersion of every object in `text`, but a Namespace (pass-through input that the
    cluster's controllers may touch at any time)."""
    jsonpath = "jsonpath={range .items[*]}{.kind}/{.metadata.name}={.metadata.resourceVersion}{' '}{end}"
    listed = cluster.kubectl("get", "-n", namespace, "-f", "-", "-o", jsonpath, input=text).stdout
    return " ".join(item for item in listed.split() if not item.startswith("Namespace/"))


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
    JobSet (a custom resource gets a three-way JSON merge patch, in which a list the server defaulted
    into, such as `replicatedJobs`, differs from the one sent and is sent again whole), and objects with
    numeric quantities. The resourceVersions prove that nothing changes for those either."""
    objects = [obj for obj in yaml.safe_load_all(text) if obj]
    always_patched = ("PodDisruptionBudget", "JobSet")
    return [
        "configured" if obj["kind"] in always_patched or numeric_quantities(obj) else "unchanged"
        for obj in objects
    ]


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
    again = cluster.kubectl("apply", "-n", namespaces[0], "-f", "-", input=text)
    assert again.stderr == ""
    assert statuses(again.stdout) == expected, again.stdout
    if before is not None:
        assert resource_versions(cluster, namespaces[0], text) == before, "a second apply changed objects"


def check_server_side_apply(cluster: Cluster, case: str, text: str, namespaces: list[str]) -> None:
    argv = ("apply", "--server-side", "--field-manager=mpigen-test", "-n", namespaces[0], "-f", "-")
    first = cluster.kubectl(*argv, input=text, check=False)
    assert first.returncode == 0, f"the API server refused {case}:\n{first.stderr}"
    assert first.stderr == "", f"warnings applying {case}:\n{first.stderr}"
    assert statuses(first.stdout) == ["serverside-applied"] * object_count(text), first.stdout
    versions = resource_versions(cluster, namespaces[0], text)
    cluster.kubectl(*argv, input=text)
    assert resource_versions(cluster, namespaces[0], text) == versions, (
        "a second server-side apply changed objects"
    )


CHECKS: dict[str, Callable[[Cluster, str, str, list[str]], None]] = {
    "client-side": check_client_side_apply,
    "server-side": check_server_side_apply,
}


def run_check(mode: str, cluster: Cluster, case: str, text: str, namespaces: list[str]) -> None:
    try:
        CHECKS[mode](cluster, case, text, namespaces)
    finally:
        delete_namespaces(cluster, namespaces)


@pytest.fixture(scope="module")
def applied(cluster: Cluster, request: pytest.FixtureRequest) -> dict[tuple[str, str], BaseException | None]:
    """Every check of every case, run a few at a time (each case in namespaces of its own, so they never
    meet): kubectl and the API server wait on each other, and the cases together take minutes one by one.
    Each test below reports its own case's outcome."""
    selected: dict[str, set[str]] = {mode: set() for mode in CHECKS}
    for item in request.session.items:  # only the cases this run selected
        mode = MODE_OF_TEST.get(getattr(item, "originalname", ""))
        if mode:
            selected[mode].add(item.callspec.params["case"])  # type: ignore[attr-defined]
    namespaces = Namespaces()
    manifests = {case: manifest(case) for case in sorted(set().union(*selected.values()))}
    prepared = {
        (mode, case): into_fresh_namespaces(namespaces, manifests[case], case)
        for mode, cases in selected.items()
        for case in sorted(cases)
    }
    namespaces.create(cluster)
    with ThreadPoolExecutor(max_workers=CONCURRENT_CASES) as pool:
        futures = {key: pool.submit(run_check, key[0], cluster, key[1], *prepared[key]) for key in prepared}
    return {key: future.exception() for key, future in futures.items()}


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
