"""The golden corpus, run through every shell in process (after black's tests/util.py `assert_format`).

A case is `golden/<case>/input.yaml`, optionally `args` (extra `render` arguments, one per line), and
either `expected.yaml` (render's stdout, exit 0; its warnings, if any, in `warnings.txt`) or
`errors.txt` (render's stderr, exit 1, nothing on stdout). `assert_case` runs one case through:

- `render` (the click command, in process): the golden bytes themselves; `--update-golden` rewrites
  them here and nowhere else. Its output rendered again gives the same bytes.
- the Python API (`mpigen.compile`): the same objects, or the issues that end the error lines.
- the kustomize plugin's pure body (`generate`): the same bytes and the same lines.
- the KRM function as transformer (the documents as `items`, with the path and index annotations
  kustomize and kpt put on items) and, for a one-document case, as generator (the MPIJob as the
  `functionConfig`): the same objects once the bookkeeping annotations are removed. An error case
  gives the items back unchanged, and its `results` written as text lines are errors.txt's lines: a
  different problem, message, field path, severity, resource or file fails, and so does another
  document named differently (`input.yaml (document 1)`). A success case's
  results are its warnings. The function run on its own output changes nothing and reports nothing.

Options reach the plugin only as `mpigen.dev/<flag>` annotations on the job, so a case's `args` are
turned into those (a job's own annotation wins over a flag on every path, so one it already has is kept)
for the plugin and the KRM modes above; a success case with `args` also runs through the KRM function
with the args as a ConfigMap `functionConfig` (kpt's `-- key=value`) and the documents as given. A case whose input is not a stream of Kubernetes objects (YAML that cannot be
read, a document that is not a mapping) is render's alone: no ResourceList can carry it, and the
plugin gets its config from kustomize, which reads the YAML first; `RENDER_ONLY` lists those cases.
"""

from __future__ import annotations

import copy
import difflib
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jobs import load, load_all, to_yaml

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if p.is_dir()) if GOLDEN.is_dir() else []
FOREIGN = "is not Kubeflow's API group"
UPDATE = "python -m pytest tests/acceptance/test_golden.py --update-golden"

# Inputs no ResourceList can hold (see the module docstring); test_golden checks this list is exact.
RENDER_ONLY = frozenset(
    {
        "error-duplicate-key",
        "error-invalid-utf8",
        "error-not-a-mapping",
        "error-yaml-alias-bomb",
        "error-yaml-control-character",
        "error-yaml-deeply-nested",
        "error-yaml-integer-outside-64-bits",
        "error-yaml-merge-key-beside-a-duplicate-key",
        "error-yaml-nested-30000-levels",
        "error-yaml-not-a-number",
        "error-yaml-python-tag",
        "error-yaml-syntax",
        "error-yaml-tag-on-the-wrong-node",
        "error-yaml-timestamp-tag",
    }
)

# Cases whose problems are about the stream, not one job: two documents that would write one object.
# The Python API compiles one job at a time and raises nothing for them.
STREAM_PROBLEMS = frozenset({"error-passthrough-collides-with-generated", "error-two-jobs-one-name"})

# What kustomize and kpt put on every item (kyaml kio: the reader's annotations); the KRM function
# carries the path ones over to the objects it makes from an item. Not part of any object.
PATH, INDEX = "internal.config.kubernetes.io/path", "internal.config.kubernetes.io/index"
BOOKKEEPING_PREFIXES = (
    "internal.config.kubernetes.io/",
    "config.kubernetes.io/path",
    "config.kubernetes.io/index",
)
SOURCE = "input.yaml"


@dataclass(frozen=True)
class Case:
    """One golden case, read from its directory."""

    name: str

    @property
    def directory(self) -> Path:
        return GOLDEN / self.name

    def read(self, name: str) -> str | None:
        path = self.directory / name
        return path.read_text() if path.exists() else None

    @cached_property
    def args(self) -> list[str]:
        return [arg for arg in (self.read("args") or "").split("\n") if arg]

    @cached_property
    def documents(self) -> list[Any] | None:
        """The input as mpigen reads it, or None when it is not a stream of objects."""
        from mpigen.yaml.load import InputError, decode, load_documents

        try:
            documents = load_documents(decode((self.directory / SOURCE).read_bytes(), SOURCE), SOURCE)
        except InputError:
            return None
        return documents if all(isinstance(doc.data, dict) for doc in documents) else None

    @property
    def failing(self) -> bool:
        return (self.directory / "errors.txt").exists()

    def lines(self, name: str) -> list[str]:
        return (self.read(name) or "").splitlines()

    @property
    def expected_objects(self) -> list[Any]:
        return [obj for obj in load_all(self.read("expected.yaml") or "") if obj is not None]


def assert_case(name: str, update: bool = False) -> None:
    """Run one golden case through every shell (module docstring); `update` rewrites render's files."""
    case = Case(name)
    check_render(case, update)
    if update:
        pytest.fail(
            f"golden files of {name} rewritten; review the diff and run again without --update-golden"
        )
    if case.documents is None:
        assert name in RENDER_ONLY, f"{name}: the input is not a stream of objects; list it in RENDER_ONLY"
        return
    check_api(case)
    check_plugin(case)
    check_krm(case, Transformer(case))
    if len(case.documents) == 1:
        check_krm(case, Generator(case))
    check_krm_config(case)


# render ---------------------------------------------------------------------------------------------


@contextmanager
def working_directory(path: Path) -> Iterator[None]:
    cwd = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(cwd)


def render(case: Case, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    from mpigen.cli import cli

    with working_directory(case.directory):
        result = CliRunner().invoke(cli, ["render", *case.args, *args], input=stdin, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def check_render(case: Case, update: bool) -> None:
    code, stdout, stderr = render(case, SOURCE)
    if case.failing:
        assert stdout == "", "render: an invalid input must print nothing on stdout"
        assert code == 1, f"render: exit code {code}, stderr:\n{stderr}"
        compare(case.directory / "errors.txt", stderr, update)
        return
    assert code == 0, f"render: exit code {code}, stderr:\n{stderr}"
    compare(case.directory / "expected.yaml", stdout, update)
    compare(case.directory / "warnings.txt", stderr, update)
    if not update:
        again = render(case, "-", stdin=stdout)
        assert again[:2] == (0, stdout), "render: its own output rendered again is not the same bytes"
        # Only another project's MPIJob, passed through, warns again.
        assert again[2].count("\n") == stderr.count(FOREIGN) == again[2].count(FOREIGN), "render: again"


def compare(path: Path, actual: str, update: bool) -> None:
    if update:
        if actual:
            path.write_text(actual)
        elif path.exists():
            path.unlink()
        return
    expected = path.read_text() if path.exists() else ""
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                actual.splitlines(keepends=True),
                f"{path} (expected)",
                f"{path} (actual)",
            )
        )
        pytest.fail(f"render:\n{diff}\nIf the change is right, update with: {UPDATE}")


# options as annotations -----------------------------------------------------------------------------


def option_annotations(args: list[str]) -> dict[str, str]:
    """A case's `render` arguments as the `mpigen.dev/*` annotations that set the same options."""
    from mpigen.inputs.annotations import PREFIX
    from mpigen.options import OPTION_TABLE

    by_flag = {f"--{spec.flag}": spec for spec in OPTION_TABLE} | {
        spec.short: spec for spec in OPTION_TABLE if spec.short
    }
    switches = {f"--no-{spec.flag}": spec for spec in OPTION_TABLE if spec.kind == "switch"}
    annotations: dict[str, str] = {}
    rest = iter(args)
    for arg in rest:
        if arg in switches:
            annotations[PREFIX + switches[arg].flag] = "false"
            continue
        flag, equals, value = arg.partition("=")
        assert flag in by_flag, f"args: {arg!r} is not an option of the option table"
        annotations[PREFIX + by_flag[flag].flag] = value if equals else next(rest)
    return annotations


def with_options(data: Any, annotations: dict[str, str]) -> Any:
    """A copy of a document, an MPIJob with the option annotations it does not set itself added."""
    from mpigen import inputs as api

    if not api.claims(data):
        return copy.deepcopy(data)
    return annotated(data, annotations, replace=False)


def annotated(data: Any, extra: dict[str, str], replace: bool = True) -> Any:
    """A copy of a document with `extra` annotations (`replace` False: its own win). Metadata or
    annotations that are not mappings are left as they are: the job's own mistake to report."""
    data = copy.deepcopy(data)
    meta = data.get("metadata")
    own = meta.get("annotations", {}) if isinstance(meta, dict) else None
    if extra and isinstance(own, dict):
        meta["annotations"] = {**own, **extra} if replace else {**extra, **own}
    return data


def inputs(case: Case) -> list[Any]:
    assert case.documents is not None
    annotations = option_annotations(case.args)
    return [with_options(doc.data, annotations) for doc in case.documents]


# the Python API -----------------------------------------------------------------------------------


def check_api(case: Case) -> None:
    """`mpigen.compile` of each MPIJob (other documents as they are): render's objects, or the issues
    that end render's error lines."""
    import mpigen
    from mpigen import inputs as api

    if case.failing:
        issues = []
        for data in filter(api.claims, inputs(case)):
            try:
                compile_one(data, case)
            except mpigen.CompileError as exc:
                issues += exc.issues
        errors = [line for line in case.lines("errors.txt") if ": warning: " not in line]
        if case.name in STREAM_PROBLEMS:
            assert issues == [], "Python API: a stream's problem raised for one job"
            return
        assert len(issues) == len(errors), f"Python API: {[issue.text() for issue in issues]}"
        for issue, line in zip(issues, errors, strict=True):
            assert line.endswith(": " + issue.text()), f"Python API: {issue.text()!r} is not in {line!r}"
        return
    objects = [
        obj for data in inputs(case) for obj in (compile_one(data, case) if api.claims(data) else [data])
    ]
    assert objects == case.expected_objects, "Python API: not render's objects"


def compile_one(data: dict[str, Any], case: Case) -> list[dict[str, Any]]:
    """`mpigen.compile` of an MPIJob; `compile_job` of a TrainJob, with the case's runtimes (a
    runtime, checked there, gives no objects of its own)."""
    import mpigen
    from mpigen import inputs as api
    from mpigen.compiler import compile_job
    from mpigen.errors import CompileError
    from mpigen.inputs.trainjob import Runtimes, is_runtime, is_trainjob
    from mpigen.options import Options

    if not api.is_trainer(data):
        return mpigen.compile(data)
    runtimes, own = Runtimes(), []
    for doc in filter(is_runtime, inputs(case)):
        found = runtimes.add(doc, Options())
        own += found if doc == data else []
    if own:
        raise CompileError(own, kind=str(data["kind"]), name=str(data["metadata"]["name"]))
    return compile_job(data, runtimes=runtimes).objects if is_trainjob(data) else []


# the kustomize plugin ---------------------------------------------------------------------------------


def check_plugin(case: Case) -> None:
    from mpigen.shells.kustomize_plugin import generate
    from mpigen.yaml.load import Document

    assert case.documents is not None
    documents = [
        Document(doc.index, data, doc.total) for doc, data in zip(case.documents, inputs(case), strict=True)
    ]
    text, outcome = generate(documents, SOURCE)
    if case.failing:
        assert (text, outcome.lines()) == ("", case.lines("errors.txt")), "plugin"
    else:
        assert outcome.lines() == case.lines("warnings.txt"), "plugin"
        assert text == case.read("expected.yaml"), "plugin: not render's bytes"


# the KRM function ------------------------------------------------------------------------------------


@dataclass
class Transformer:
    """The documents as the ResourceList's items, annotated as kustomize and kpt annotate them."""

    case: Case
    name: str = "KRM transformer"
    items: list[Any] = field(init=False)

    def __post_init__(self) -> None:
        assert self.case.documents is not None
        self.items = [
            annotated(data, {PATH: SOURCE, INDEX: str(doc.index - 1)})
            for doc, data in zip(self.case.documents, inputs(self.case), strict=True)
        ]

    def resource_list(self) -> dict[str, Any]:
        return {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": self.items}


@dataclass
class Generator(Transformer):
    """The one document (an MPIJob) as the `functionConfig`, with no items."""

    name: str = "KRM generator"

    def resource_list(self) -> dict[str, Any]:
        [config] = self.items
        return {
            "apiVersion": "config.kubernetes.io/v1",
            "kind": "ResourceList",
            "items": [],
            "functionConfig": config,
        }


def without_bookkeeping(obj: Any) -> Any:
    obj = copy.deepcopy(obj)
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    if isinstance(annotations, dict):
        kept = {k: v for k, v in annotations.items() if not k.startswith(BOOKKEEPING_PREFIXES)}
        if kept:
            meta["annotations"] = kept
        else:
            del meta["annotations"]
    return obj


def as_item_text(document: str) -> str:
    """One YAML document's text as an item of a block sequence."""
    lines = document.rstrip("\n").split("\n")
    return "- " + "\n".join([lines[0], *(f"  {line}" if line else line for line in lines[1:])]) + "\n"


def result_line(result: dict[str, Any], documents: int) -> str:
    """A KRM result written as render writes a problem (mpigen.outcome.Finding.text): the oracle that
    ties `results` to errors.txt."""
    from mpigen.errors import plain_or_shown

    file, ref = result.get("file") or {}, result.get("resourceRef") or {}
    where = f"{plain_or_shown(file['path'], 4096)}: " if file else ""
    if file and documents > 1:
        where += f"document {file['index'] + 1}: "
    kind, name = plain_or_shown(ref.get("kind", "")), plain_or_shown(ref.get("name", ""))
    who = f"{kind}/{name}: " if ref.get("name") else (f"{kind}: " if ref.get("kind") else "")
    label = "warning: " if result["severity"] == "warning" else ""
    path = (result.get("field") or {}).get("path")
    return f"{where}{who}{label}{path + ': ' if path else ''}{result['message']}"


def run_function(text: str) -> tuple[str, Any]:
    from mpigen.krm.protocol import process_resource_list

    return process_resource_list(text.encode())


def check_krm(case: Case, mode: Transformer) -> None:
    assert case.documents is not None
    given = mode.resource_list()
    output_text, outcome = run_function(to_yaml(given))
    output = load(output_text)
    results = output.get("results") or []
    assert {r["severity"] for r in results} <= {"error", "warning"}, mode.name
    # render writes the warnings first, then the errors, each in the order of the jobs
    ordered = [r for r in results if r["severity"] == "warning"] + [
        r for r in results if r["severity"] == "error"
    ]
    lines = [result_line(r, case.documents[0].total) for r in ordered]
    if case.failing:
        assert outcome.exit_code == 1, f"{mode.name}: exit code {outcome.exit_code}"
        expected = case.lines("errors.txt")
        assert lines == expected, f"{mode.name}: results are not render's errors"
        assert output["items"] == given["items"], f"{mode.name}: the items must come back as given"
        assert output.get("functionConfig") == given.get("functionConfig"), mode.name
        return
    assert outcome.exit_code == 0, f"{mode.name}: {outcome.lines()}"
    assert lines == case.lines("warnings.txt"), f"{mode.name}: results are not render's warnings"
    objects = [without_bookkeeping(item) for item in output["items"]]
    assert objects == case.expected_objects, f"{mode.name}: not render's objects"
    assert "functionConfig" not in output, f"{mode.name}: a generator's config must not come back"
    if isinstance(mode, Generator):
        # the objects are written by render's own emitter: its very text, indented as items
        items = "".join(
            as_item_text(doc)
            for doc in re.split(r"^---\n", case.read("expected.yaml") or "", flags=re.MULTILINE)
        )
        head = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + items
        assert output_text.startswith(head), f"{mode.name}: not render's text"
        rest = output_text[len(head) :]
        assert rest.startswith("results:\n") if results else rest == "", f"{mode.name}: after the items"
    else:
        kept = [(item["metadata"]["annotations"][PATH]) for item in output["items"]]
        assert set(kept) == {SOURCE}, f"{mode.name}: objects must be filed where their job was"
    again_text, again = run_function(output_text)
    assert (again_text, again.lines(), again.exit_code) == (output_text, [], 0), (
        f"{mode.name}: a run on its own output must change nothing"
    )


# the KRM function with the options in a ConfigMap functionConfig (kpt's `-- key=value`) -------------------


def check_krm_config(case: Case) -> None:
    """A success case with `args`: the documents as items, as given (no option annotations added), and the
    args as the ConfigMap `functionConfig` kpt makes of `-- key=value` (mpigen.krm.config): render's objects
    and warnings, and the config back as given."""
    from mpigen.inputs.annotations import PREFIX

    assert case.documents is not None
    if not case.args or case.failing:
        return
    data = {key.removeprefix(PREFIX): value for key, value in option_annotations(case.args).items()}
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "function-input"}, "data": data}
    items = [annotated(doc.data, {PATH: SOURCE, INDEX: str(doc.index - 1)}) for doc in case.documents]
    given = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items}
    output_text, outcome = run_function(to_yaml({**given, "functionConfig": config}))
    output = load(output_text)
    assert outcome.exit_code == 0, f"KRM ConfigMap options: {outcome.lines()}"
    lines = [result_line(r, case.documents[0].total) for r in output.get("results") or []]
    assert lines == case.lines("warnings.txt"), "KRM ConfigMap options: results are not render's warnings"
    objects = [without_bookkeeping(item) for item in output["items"]]
    assert objects == case.expected_objects, "KRM ConfigMap options: not render's objects"
    assert output["functionConfig"] == config, "KRM ConfigMap options: the config comes back as given"
