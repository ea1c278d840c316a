"""Every golden output and every example's render, applied for real: the API server accepts all of it in one
`kubectl apply -f -` (client-side and server-side), with no warning, and a second apply changes nothing."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from controlplane import Cluster

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = sorted(ROOT.glob("golden/*/expected.yaml"))
EXAMPLES = sorted(
    path for path in ROOT.glob("examples/**/*.yaml") if re.search(r"^kind: MPIJob$", path.read_text(), re.MULTILINE)
)
CASES = {f"golden/{path.parent.name}": path for path in GOLDEN} | {
    str(path.relative_to(ROOT)): path for path in EXAMPLES
}
NAMESPACE_LINE = re.compile(r"^(\s*(?:- )?namespace: )(['\"]?)([a-z0-9][a-z0-9-]*)\2$", re.MULTILINE)


def render(path: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "mpigen", "render", str(path)], capture_output=True, text=True,
                          check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def manifest(case: str) -> str:
    path = CASES[case]
    return path.read_text() if case.startswith("golden/") else render(path)


def into_fresh_namespaces(cluster: Cluster, text: str, prefix: str) -> tuple[str, list[str]]:
    """The same bytes with every namespace the objects name (in metadata or a RoleBinding subject) moved
    to a fresh one, so cases never meet; and the namespaces used (the first for objects that name none)."""
    fresh: dict[str, str] = {}
    for match in NAMESPACE_LINE.finditer(text):
        fresh.setdefault(match[3], cluster.create_namespace(prefix))
    moved = NAMESPACE_LINE.sub(lambda m: m[1] + fresh[m[3]], text)
    default = fresh.get("default") or cluster.create_namespace(prefix)
    return moved, [default, *(ns for ns in fresh.values() if ns != default)]


def object_count(text: str) -> int:
    return sum(1 for doc in yaml.safe_load_all(text) if doc)


def statuses(stdout: str) -> list[str]:
    return [line.rsplit(" ", 1)[-1] for line in stdout.splitlines() if line.strip()]


@pytest.fixture(params=sorted(CASES))
def case(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_cases_found() -> None:
    assert len(GOLDEN) >= 40 and len(EXAMPLES) >= 4, (len(GOLDEN), EXAMPLES)


def test_client_side_apply_accepts_everything_and_reapplies_unchanged(cluster: Cluster, case: str) -> None:
    text, namespaces = into_fresh_namespaces(cluster, manifest(case), case)
    first = cluster.kubectl("apply", "-n", namespaces[0], "-f", "-", input=text, check=False)
    assert first.returncode == 0, f"the API server refused {case}:\n{first.stderr}"
    assert first.stderr == "", f"warnings applying {case}:\n{first.stderr}"
    assert statuses(first.stdout) == ["created"] * object_count(text), first.stdout
    again = cluster.kubectl("apply", "-n", namespaces[0], "-f", "-", input=text)
    assert statuses(again.stdout) == ["unchanged"] * object_count(text), again.stdout
    diff = cluster.kubectl("diff", "-n", namespaces[0], "-f", "-", input=text, check=False)
    assert (diff.returncode, diff.stdout) == (0, ""), diff.stdout + diff.stderr


def test_server_side_apply_accepts_everything_and_reapplies_without_change(cluster: Cluster, case: str) -> None:
    text, namespaces = into_fresh_namespaces(cluster, manifest(case), case)
    argv = ("apply", "--server-side", "--field-manager=mpigen-test", "-n", namespaces[0], "-f", "-")
    first = cluster.kubectl(*argv, input=text, check=False)
    assert first.returncode == 0, f"the API server refused {case}:\n{first.stderr}"
    assert first.stderr == "", f"warnings applying {case}:\n{first.stderr}"
    assert statuses(first.stdout) == ["serverside-applied"] * object_count(text), first.stdout
    versions = cluster.kubectl("get", "-n", namespaces[0], "-f", "-", "-o",
                               "jsonpath={range .items[*]}{.metadata.resourceVersion}{' '}{end}", input=text).stdout
    cluster.kubectl(*argv, input=text)
    after = cluster.kubectl("get", "-n", namespaces[0], "-f", "-", "-o",
                            "jsonpath={range .items[*]}{.metadata.resourceVersion}{' '}{end}", input=text).stdout
    assert after == versions, "a second server-side apply changed objects"
    diff = cluster.kubectl("diff", "--server-side", "--field-manager=mpigen-test", "-n", namespaces[0], "-f", "-",
                           input=text, check=False)
    assert (diff.returncode, diff.stdout) == (0, ""), diff.stdout + diff.stderr
