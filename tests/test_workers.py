"""How the whole suite is shared among pytest-xdist workers (tests/conftest.py): every test that uses a
session's control plane, the e2e namespaces or the image is in a group, so one worker sets it up once."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _suite_conftest() -> ModuleType:
    """tests/conftest.py itself: under xdist `import conftest` may find another folder's conftest first."""
    spec = importlib.util.spec_from_file_location("suite_conftest", ROOT / "tests" / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


conftest = _suite_conftest()


def test_every_test_file_of_a_shared_fixture_directory_is_in_a_group() -> None:
    files = sorted(
        str(path.relative_to(ROOT))
        for directory in ("cluster", "e2e", "image")
        for path in (ROOT / "tests" / directory).glob("test_*.py")
    )
    assert files
    assert [f for f in files if conftest.group_of(f"{f}::test_x") is None] == []


@pytest.mark.parametrize(
    ("nodeid", "group"),
    [
        ("tests/cluster/test_jobset.py::test_x", "jobset"),
        ("tests/cluster/test_jobset_target.py::test_x[v1]", "jobset-target"),
        ("tests/cluster/test_volcano_target.py::test_x[v1]", "volcano-target"),
        ("tests/cluster/test_apply.py::test_x[a::b]", "cluster"),
        ("tests/e2e/test_e2e_ssh.py::test_x", "e2e"),
        ("tests/unit/shells/test_cli.py::test_x", None),
        ("tests/acceptance/test_reference.py::test_x[tests/cluster/test_apply.py]", None),
    ],
)
def test_a_test_is_grouped_by_its_file(nodeid: str, group: str | None) -> None:
    assert conftest.group_of(nodeid) == group


def test_the_order_names_only_groups_and_files_that_exist() -> None:
    groups = set(conftest.GROUP_BY_PATH.values())
    for key in conftest.LONGEST_FIRST:
        assert key in groups or (ROOT / key).is_file(), key
    assert groups <= set(conftest.LONGEST_FIRST), "a group missing from LONGEST_FIRST would start last"
    fixture_groups = {group for groups in conftest.GROUPS_BY_FIXTURE.values() for group in groups}
    assert fixture_groups <= groups
