"""The real-world-shaped corpus (tests/acceptance/realworld/): each manifest renders, or is refused, as
its header says, with exactly the warnings and errors it names, through render and the KRM function."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from mpigen.cli import cli
from mpigen.krm.protocol import process_resource_list
from mpigen.yaml.load import load_documents

CORPUS = Path(__file__).resolve().parent / "realworld"
FILES = sorted(CORPUS.glob("*.yaml"))
_EXPECT = re.compile(r"^# expect: (exit|warning|error) (.+)$", re.MULTILINE)


def expectations(path: Path) -> tuple[int, list[tuple[str, str]]]:
    found = _EXPECT.findall(path.read_text())
    codes = [int(text) for kind, text in found if kind == "exit"]
    assert len(codes) == 1, f"{path.name}: one `# expect: exit N` line"
    return codes[0], [(kind, text) for kind, text in found if kind != "exit"]


def test_the_corpus_is_there() -> None:
    assert len(FILES) >= 12
    outcomes = {expectations(path)[0] for path in FILES}
    assert outcomes == {0, 1}, "both renders and refusals"


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_render_does_what_the_header_says(path: Path) -> None:
    code, expected = expectations(path)
    result = CliRunner().invoke(cli, ["render", str(path)], catch_exceptions=False)
    assert result.exit_code == code, result.stderr
    assert (result.stdout == "") == (code != 0)
    lines = result.stderr.splitlines()
    for kind, text in expected:
        matching = [
            line for line in lines if text in line and ((": warning: " in line) == (kind == "warning"))
        ]
        assert len(matching) == 1, f"{kind} {text!r} in {lines}"
        lines.remove(matching[0])
    assert lines == [], "stderr lines no header expects"


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_the_krm_function_reports_the_same(path: Path) -> None:
    code, expected = expectations(path)
    items = [doc.data for doc in load_documents(path.read_text(), str(path))]
    listing = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items}
    _, outcome = process_resource_list(json.dumps(listing).encode())
    assert outcome.exit_code == code
    found = [(f.issue.severity, f.issue.text()) for f in outcome.errors + outcome.warnings]
    assert sorted(kind for kind, _ in expected) == sorted(severity for severity, _ in found)
    for kind, text in expected:
        assert any(severity == kind and text in line for severity, line in found), (kind, text)
