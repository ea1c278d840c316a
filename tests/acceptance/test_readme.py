"""What the documentation promises about deleting a job, held against the golden corpus: the label one-liner
of docs/howto/operator-target.md names every kind mpigen creates, on every run target
(tests/cluster/test_delete.py runs it for real); and every install command in the README and the
documentation is pinned and run by a test."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DELETING = ROOT / "docs" / "howto" / "operator-target.md"


def user_docs() -> str:
    """The README and every documentation page, as one text."""
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return "\n".join(path.read_text() for path in paths)


# How `kubectl delete` names each (group, kind) mpigen creates; `all` holds the workloads and Services.
RESOURCE = {
    ("", "ServiceAccount"): "sa",
    ("rbac.authorization.k8s.io", "Role"): "role",
    ("rbac.authorization.k8s.io", "RoleBinding"): "rolebinding",
    ("", "ConfigMap"): "cm",
    ("", "Secret"): "secret",
    ("", "Service"): "all",
    ("policy", "PodDisruptionBudget"): "pdb",
    ("networking.k8s.io", "NetworkPolicy"): "networkpolicy",
    ("apps", "StatefulSet"): "all",
    ("batch", "Job"): "all",
    ("scheduling.volcano.sh", "PodGroup"): "podgroups.scheduling.volcano.sh",
    ("scheduling.x-k8s.io", "PodGroup"): "podgroups.scheduling.x-k8s.io",
    ("scheduling.k8s.io", "Workload"): "workloads.scheduling.k8s.io",
    ("scheduling.k8s.io", "PodGroup"): "podgroups.scheduling.k8s.io",
    ("jobset.x-k8s.io", "JobSet"): "jobsets.jobset.x-k8s.io",
    ("batch.volcano.sh", "Job"): "jobs.batch.volcano.sh",
}


def created_kinds() -> set[tuple[str, str]]:
    kinds = set()
    for path in ROOT.glob("golden/*/expected.yaml"):
        for obj in yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader):
            if (
                obj
                and obj.get("metadata", {}).get("labels", {}).get("app.kubernetes.io/managed-by") == "mpigen"
            ):
                group = obj["apiVersion"].rpartition("/")[0]
                kinds.add((group, obj["kind"]))
    return kinds


def test_the_delete_one_liner_names_every_kind_mpigen_creates() -> None:
    readme = DELETING.read_text()
    [line] = re.findall(
        r"^kubectl delete (\S+) -n ml -l app\.kubernetes\.io/instance=pi$", readme, re.MULTILINE
    )
    kinds = created_kinds()
    assert {("", "Secret"), ("jobset.x-k8s.io", "JobSet"), ("batch.volcano.sh", "Job")} <= kinds
    unknown = kinds - RESOURCE.keys()
    assert not unknown, f"a kind mpigen creates has no place in the one-liner: {unknown}"
    assert set(line.split(",")) == {RESOURCE[kind] for kind in kinds} | {"all"}


# Every install command the README and the documentation give, and the test that runs it as written.
INSTALLS = {
    "pip install . && mpigen render examples/v1alpha2/tensorflow-benchmarks.yaml": "the README's first command (.ci/run)",
    "pip install -e '.[test]' && python -m pytest": "the README's second command (.ci/run)",
    "apt-get install mmdebstrap umoci": "tests/image (tests/debian.py installs both from Debian)",
    "pip install .": "docs/getting-started.md, as the README's first command (.ci/run)",
    "pip install ./.mpigen": "the GitOps example's CI workflow: the wheel, as tests/test_release.py installs it",
    "go install sigs.k8s.io/kustomize/kustomize/v5@v5.8.2": "tests/acceptance/test_kustomize_examples.py",
}


def test_every_install_command_in_the_docs_is_known_and_pinned() -> None:
    """A new install command needs a test that runs it (listed above); a remote one names a version."""
    workflow = ROOT / "examples" / "gitops" / ".github" / "workflows" / "check-rendered.yml"
    text = user_docs() + workflow.read_text()
    found = re.findall(r"((?:go|pip|npm|apt-get|apt) install [^`\n]*)", text)
    assert sorted(set(found)) == sorted(INSTALLS)
    for command in found:
        assert "@latest" not in command and "git+" not in command, command
        if command.startswith("go install"):
            assert re.search(r"@v\d+\.\d+\.\d+$", command), command


def test_the_readme_is_a_page_that_starts_with_the_two_commands() -> None:
    """A newcomer reads it in minutes (at most 300 lines); its first block is what .ci/run runs."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 300
    first = readme.split("```sh\n", 1)[1].split("```", 1)[0]
    assert first.splitlines() == list(INSTALLS)[:2]
    ci = (ROOT / ".ci" / "run").read_text()
    assert ci.rstrip().endswith(first.splitlines()[1])
