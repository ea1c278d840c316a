"""The KRM function (`mpigen krm`, and `mpigen` with no arguments): ResourceList in, ResourceList out."""

from __future__ import annotations

import io
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from jobs import COMMAND, job_yaml, load, load_all, pod

import mpigen
from mpigen.krm import NotAResourceList, protocol, yamltext
from mpigen.krm import items as reading
from mpigen.shells.krm import run_function
from mpigen.yaml.dump import to_yaml
from tools import function_executable

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = ROOT / "golden"

# What kustomize and kpt send: kyaml's layout, reader annotations on every item, comments kept.
PASS_THROUGH = """\
# the namespace comes first
- apiVersion: v1
  kind: Namespace
  metadata:
    name: ml # where the jobs run
    annotations:
      config.kubernetes.io/index: '0'
      config.kubernetes.io/path: 'jobs/train.yaml'
      internal.config.kubernetes.io/index: '0'
      internal.config.kubernetes.io/path: 'jobs/train.yaml'
      config.k8s.io/id: '1'
      internal.config.kubernetes.io/id: '1'
      internal.config.kubernetes.io/seqindent: 'compact'
"""
AFTER = """\
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: settings
    namespace: ml
    annotations:
      config.kubernetes.io/index: '2'
      config.kubernetes.io/path: 'jobs/train.yaml'
      internal.config.kubernetes.io/index: '2'
      internal.config.kubernetes.io/path: 'jobs/train.yaml'
      config.k8s.io/id: '3'
      internal.config.kubernetes.io/id: '3'
  data:
    # values a YAML 1.1 reader would not take as strings, unless quoted
    enabled: 'yes'
    mode: "0123"
    script: |
      echo "hello"
    empty: null
"""


def job(
    name: str = "train", replicas: int = 2, annotations: dict[str, str] | None = None, **fields: Any
) -> str:
    return job_yaml(workers=replicas, name=name, annotations=annotations, **fields)


def as_item(document: str, annotations: dict[str, str] | None = None) -> str:
    """A YAML document as an item of `items:` in kyaml's layout, with reader annotations."""
    data = load(document)
    if annotations:
        data["metadata"].setdefault("annotations", {}).update(annotations)
    text = to_yaml([data])
    lines = text.rstrip("\n").split("\n")
    return "- " + "\n".join([lines[0], *(f"  {line}" for line in lines[1:])]) + "\n"


def reader_annotations(path: str, index: int, ident: int) -> dict[str, str]:
    return {
        "config.kubernetes.io/index": str(index),
        "config.kubernetes.io/path": path,
        "internal.config.kubernetes.io/index": str(index),
        "internal.config.kubernetes.io/path": path,
        "config.k8s.io/id": str(ident),
        "internal.config.kubernetes.io/id": str(ident),
        "internal.config.kubernetes.io/seqindent": "compact",
    }


def resource_list(items: str, function_config: str | None = None) -> str:
    text = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n" + (
        f"items:\n{items}" if items else "items: []\n"
    )
    if function_config is not None:
        config = to_yaml([load(function_config)])
        text += "functionConfig:\n" + "".join(f"  {line}\n" for line in config.splitlines())
    return text


@dataclass(frozen=True)
class Run:
    """What the function writes: the ResourceList on stdout, its exit code, the lines on stderr."""

    output: str
    code: int
    messages: list[str]


def run(text: str) -> Run:
    try:
        output, outcome = protocol.process_resource_list(text.encode())
    except NotAResourceList as exc:
        return Run("", 1, [str(exc)])
    return Run(output, outcome.exit_code, outcome.lines())


def items_of(output: str) -> list[Any]:
    items: list[Any] = load(output)["items"]
    return items


def without_bookkeeping(obj: dict[str, Any]) -> dict[str, Any]:
    meta = dict(obj["metadata"])
    kept = {
        k: v for k, v in (meta.pop("annotations", None) or {}).items() if "config.kubernetes.io/" not in k
    }
    if kept:
        meta["annotations"] = kept
    return {**obj, "metadata": meta}


def compiled(document: str) -> list[dict[str, Any]]:
    return mpigen.compile(load(document))


# The shells, as kustomize and kpt run them -------------------------------------------------------


# Nine levels of ten aliases each: a billion values once expanded, from a few hundred bytes.
ALIAS_BOMB = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 10)}]\n" for n in range(1, 9)
)


Shell = Callable[[list[str], bytes], "subprocess.CompletedProcess[bytes]"]


@pytest.fixture
def shell(mpigen_command: list[str]) -> Shell:
    """`shell(args, stdin)`: `mpigen ARGS` run in a new process, as kustomize and kpt run it."""

    def run(args: list[str], stdin: bytes) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([*mpigen_command, *args], input=stdin, capture_output=True, check=False)

    return run


@pytest.mark.parametrize("args", [["krm"], []], ids=["mpigen krm", "mpigen"])
def test_generator_through_the_shells(args: list[str], shell: Shell) -> None:
    local = {"config.kubernetes.io/local-config": "true"}
    config = job(annotations=local)
    # kustomize passes a generator's config both as functionConfig and, marked local-config, as an item.
    text = resource_list(as_item(config), function_config=config)
    done = shell(args, text.encode())
    assert done.returncode == 0, done.stderr.decode()
    assert done.stderr == b""
    output = load(done.stdout)
    assert "functionConfig" not in output
    assert output["items"][0] == load(config)  # the local-config copy, for kustomize to drop
    assert output["items"][1:] == compiled(config)
    assert "Traceback" not in done.stderr.decode()


def test_empty_stdin_says_what_to_pipe_in(shell: Shell) -> None:
    for args in ([], ["krm"]):
        done = shell(args, b"")
        assert (done.returncode, done.stdout) == (1, b"")
        err = done.stderr.decode()
        assert "`mpigen` with no arguments" in err and "reads a KRM ResourceList on stdin" in err
        assert "mpigen --help" in err


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        (
            "apiVersion: v1\nkind: List\nitems: []\n",
            'not a KRM ResourceList (apiVersion config.kubernetes.io/v1, kind ResourceList): found kind "List"',
        ),
        (job(), 'found kind "MPIJob"'),
        (
            "apiVersion: config.kubernetes.io/v9\nkind: ResourceList\nitems: []\n",
            'unsupported ResourceList apiVersion "config.kubernetes.io/v9"',
        ),
        ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: {a: 1}\n", "items must be a list"),
        ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: [\n", "<stdin>: line 4, column 1:"),
        (
            resource_list("- {}\n") + "---\n" + resource_list("- {}\n"),
            "expected one ResourceList, found 2 YAML documents",
        ),
        (ALIAS_BOMB, "too large (more than 1000000 values once YAML aliases are expanded)"),
    ],
    ids=[
        "a List",
        "a bare MPIJob",
        "unknown apiVersion",
        "items not a list",
        "YAML error",
        "two documents",
        "alias bomb",
    ],
)
def test_input_that_is_not_a_resource_list_exits_1_with_a_message(
    stdin: str, message: str, shell: Shell
) -> None:
    done = shell([], stdin.encode())
    assert (done.returncode, done.stdout) == (1, b""), done.stderr.decode()
    err = done.stderr.decode()
    assert message in err
    assert "Traceback" not in err and len(err.splitlines()) == 1


def test_invalid_job_writes_the_list_back_with_results_and_exits_1(shell: Shell) -> None:
    annotations = reader_annotations("jobs/train.yaml", 1, 2)
    text = resource_list(PASS_THROUGH + as_item(job(replicas=0), annotations) + AFTER)
    done = shell(["krm"], text.encode())
    assert done.returncode == 1
    output = load(done.stdout)
    assert output["items"] == load(text)["items"]  # unchanged: nothing half-generated
    assert done.stdout.decode().startswith(text)  # pass-through text and comments as given
    assert output["results"] == [
        {
            "message": "must be >= 1, got 0",
            "severity": "error",
            "resourceRef": {
                "apiVersion": "kubeflow.org/v1alpha2",
                "kind": "MPIJob",
                "name": "train",
                "namespace": "ml",
            },
            "field": {"path": "spec.mpiReplicaSpecs.Worker.replicas"},
            "file": {"path": "jobs/train.yaml", "index": 1},
        }
    ]
    # the second document of jobs/train.yaml (index 1), named as render names it
    assert (
        done.stderr.decode()
        == "jobs/train.yaml: document 2: MPIJob/train: spec.mpiReplicaSpecs.Worker.replicas: must be >= 1, got 0\n"
    )


# Transformer ---------------------------------------------------------------------------------------


def test_transformer_replaces_each_job_in_place_and_keeps_other_items_byte_for_byte() -> None:
    annotations = reader_annotations("jobs/train.yaml", 1, 2)
    text = resource_list(PASS_THROUGH + as_item(job(), annotations) + AFTER)
    outcome = run(text)
    assert (outcome.code, outcome.messages) == (0, [])
    assert outcome.output.startswith(resource_list(PASS_THROUGH))  # comments, quoting, annotations
    assert outcome.output.endswith(AFTER)
    items = items_of(outcome.output)
    generated = items[1:-1]
    assert [without_bookkeeping(obj) for obj in generated] == compiled(job())
    assert items[0] == load(PASS_THROUGH)[0] and items[-1] == load(AFTER)[0]


def test_generated_objects_are_filed_with_the_job_under_fresh_indices() -> None:
    first = reader_annotations("jobs/train.yaml", 1, 2)
    second = reader_annotations("jobs/train.yaml", 3, 4)
    text = resource_list(PASS_THROUGH + as_item(job(), first) + AFTER + as_item(job("eval"), second))
    items = items_of(run(text).output)
    generated = [item for item in items if item["metadata"]["name"].startswith(("train", "eval"))]
    assert len(generated) == 2 * len(compiled(job()))
    for obj in generated:
        annotations = obj["metadata"]["annotations"]
        assert (
            annotations["config.kubernetes.io/path"]
            == annotations["internal.config.kubernetes.io/path"]
            == "jobs/train.yaml"
        )
        assert annotations["internal.config.kubernetes.io/seqindent"] == "compact"
        assert annotations["config.kubernetes.io/index"] == annotations["internal.config.kubernetes.io/index"]
        # never the orchestrator's ids (they map outputs back to inputs) nor the job's local settings
        assert not {"config.k8s.io/id", "internal.config.kubernetes.io/id"} & set(annotations)
    # kpt refuses two items with the same path and index
    places = [
        (
            i["metadata"]["annotations"]["config.kubernetes.io/path"],
            i["metadata"]["annotations"]["config.kubernetes.io/index"],
        )
        for i in items
    ]
    assert len(places) == len(set(places))
    assert [int(index) for _, index in places[1:-1]][:3] == [4, 5, 6]  # after the highest index in the file


def test_jobs_without_path_annotations_give_objects_without_bookkeeping() -> None:
    text = resource_list(as_item(job(), {"config.kubernetes.io/index": "0", "config.k8s.io/id": "1"}))
    items = items_of(run(text).output)
    assert items == compiled(job())


def test_local_config_items_are_never_compiled() -> None:
    text = resource_list(as_item(job(), {"config.kubernetes.io/local-config": "true"}))
    outcome = run(text)
    assert (outcome.code, outcome.output) == (0, text)


def test_other_function_configs_are_kept() -> None:
    # A ConfigMap config sets options (test_krm_config.py); it comes back as given all the same.
    config = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fn-config}\ndata: {gang-scheduler: volcano}\n"
    text = resource_list(as_item(job()), function_config=config)
    output = load(run(text).output)
    assert output["items"] == mpigen.compile(load(job()), mpigen.Options(gang_scheduler="volcano"))
    assert output["functionConfig"] == load(config)


def test_a_function_config_that_is_also_an_item_is_compiled_once_and_dropped() -> None:
    text = resource_list(as_item(job()), function_config=job())
    output = run(text).output
    assert items_of(output) == compiled(job())
    assert "functionConfig" not in load(output)  # else a second run compiles it again
    assert run(output) == Run(output, 0, [])


def test_options_are_read_from_mpigen_annotations() -> None:
    annotated = job(annotations={"mpigen.dev/gang-scheduler": "volcano", "mpigen.dev/wait-timeout": "300"})
    items = items_of(run(resource_list(as_item(annotated))).output)
    assert "PodGroup" in [item["kind"] for item in items]
    assert items == mpigen.compile(load(annotated))
    assert all(
        "annotations" not in item["metadata"]
        or not any(k.startswith("mpigen.dev/") for k in item["metadata"]["annotations"])
        for item in items
    )


def test_running_on_its_own_output_changes_nothing() -> None:
    annotations = reader_annotations("jobs/train.yaml", 1, 2)
    for text in (
        resource_list(PASS_THROUGH + as_item(job(), annotations) + AFTER),
        resource_list("", function_config=job()),
        resource_list(
            as_item(job(annotations={"config.kubernetes.io/local-config": "true"})), function_config=job()
        ),
    ):
        first = run(text)
        assert first.code == 0
        second = run(first.output)
        assert (second.code, second.output) == (0, first.output)


def test_a_list_without_jobs_comes_back_byte_for_byte() -> None:
    text = resource_list(PASS_THROUGH + AFTER).replace("'0'", '"0"') + "# the end\n"
    assert run(text) == Run(text, 0, [])


def test_generated_strings_stay_strings_for_yaml_1_1_and_1_2_readers() -> None:
    from ruamel.yaml import YAML

    tricky = [
        "yes",
        "on",
        "off",
        "y",
        "n",
        "0123",
        "1e3",
        "null",
        "~",
        "0o17",
        "0x1F",
        "1:30",
        "true",
        "2001-12-14",
        "",
    ]
    env = [{"name": f"V{i}", "value": value} for i, value in enumerate(tricky)]
    document = job(launcher=pod("launcher", command=COMMAND, env=env))
    output = run(resource_list(as_item(document))).output
    expected = compiled(document)
    assert items_of(output) == expected  # YAML 1.1 (PyYAML; tests/test_goyaml.py holds kubectl's reading)
    assert YAML(typ="safe", pure=True).load(output)["items"] == expected  # YAML 1.2 (as kyaml reads)
    launcher = next(
        obj for obj in expected if obj["kind"] == "Job" and obj["metadata"]["name"] == "train-launcher"
    )
    values = [
        e.get("value") for c in launcher["spec"]["template"]["spec"]["containers"] for e in c.get("env", [])
    ]
    assert set(tricky) <= set(values)


# Results ---------------------------------------------------------------------------------------------


def test_warnings_are_results_and_do_not_fail() -> None:
    document = job(worker_fields={"restartPolicy": "OnFailure"})
    outcome = run(resource_list(as_item(document)))
    assert outcome.code == 0
    output = load(outcome.output)
    assert output["items"] == compiled(document)
    [result] = output["results"]
    path = "spec.mpiReplicaSpecs.Worker.restartPolicy"
    assert result["severity"] == "warning" and result["field"] == {"path": path}
    assert result["resourceRef"] == {
        "apiVersion": "kubeflow.org/v1alpha2",
        "kind": "MPIJob",
        "name": "train",
        "namespace": "ml",
    }
    assert "file" not in result
    assert outcome.messages == [f"items[0]: MPIJob/train: warning: {path}: {result['message']}"]


def test_every_problem_of_every_job_is_a_result() -> None:
    bad = job("bad", replicas=0, annotations={"mpigen.dev/gang-schedular": "volcano"})
    text = resource_list(as_item(job("good")) + as_item(bad))
    outcome = run(text)
    assert outcome.code == 1
    output = load(outcome.output)
    assert output["items"] == load(text)["items"]
    paths = [result["field"]["path"] for result in output["results"]]
    assert paths == [
        'metadata.annotations["mpigen.dev/gang-schedular"]',
        "spec.mpiReplicaSpecs.Worker.replicas",
    ]
    assert {result["resourceRef"]["name"] for result in output["results"]} == {"bad"}
    assert len(outcome.messages) == 2 and all(
        line.startswith("items[1]: MPIJob/bad: ") for line in outcome.messages
    )


def test_results_already_present_are_kept() -> None:
    text = (
        resource_list(as_item(job(worker_fields={"restartPolicy": "OnFailure"})))
        + "results:\n- message: earlier\n  severity: info\n"
    )
    results = load(run(text).output)["results"]
    assert [result["message"] for result in results][:1] == ["earlier"] and len(results) == 2


def test_invalid_output_is_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import mpigen.compiler

    real = mpigen.compiler.build_objects

    def with_a_bug(plan: Any, options: Any) -> list[dict[str, Any]]:
        objects = real(plan, options)
        for obj in objects:
            if obj["kind"] == "Service":
                obj["spec"]["clusterIp"] = "None"  # a typo in mpigen itself
        return objects

    monkeypatch.setattr(mpigen.compiler, "build_objects", with_a_bug)
    text = resource_list(as_item(job()))
    outcome = run(text)
    assert outcome.code == 3
    output = load(outcome.output)
    assert output["items"] == load(text)["items"]
    [result] = output["results"]
    assert result["severity"] == "error" and "internal error" in result["message"]
    assert 'Service/train-worker: spec.clusterIp: unknown field "clusterIp"' in result["message"]
    assert "internal error: the output fails Kubernetes' schemas" in outcome.messages[0]


@pytest.mark.parametrize("where", ["_compile", "_items_text"])
def test_unexpected_failures_exit_3_with_the_list_echoed(where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object) -> None:
        raise RuntimeError("kaboom")

    monkeypatch.setattr(protocol if where == "_compile" else yamltext, where, boom)
    text = resource_list(as_item(job()))
    stdout, stderr = io.BytesIO(), io.StringIO()
    assert run_function(io.BytesIO(text.encode()), stdout, stderr) == 3
    output = load(stdout.getvalue())
    assert output["items"] == load(text)["items"]
    assert output["results"] == [
        {"message": "mpigen: internal error: RuntimeError: kaboom (please report this)", "severity": "error"}
    ]
    assert stderr.getvalue() == "mpigen: internal error: RuntimeError: kaboom (please report this)\n"


def test_comment_lines_above_an_item_stay_with_it_when_a_job_before_it_is_replaced() -> None:
    settings = "# the job's settings\n# (two lines)\n" + AFTER
    text = resource_list(as_item(job()) + settings) + "# after the last item\n"
    output = run(text).output
    assert output.endswith(settings + "# after the last item\n")
    assert items_of(output)[:-1] == compiled(job())


def test_comments_around_the_items_stay_once() -> None:
    text = resource_list(PASS_THROUGH + "# after the last item\n", function_config=job()) + "# the end\n"
    text = text.replace("functionConfig:", "# before the config\nfunctionConfig:")
    output = run(text).output
    for comment in (
        "# the namespace comes first",
        "# where the jobs run",
        "# after the last item",
        "# before the config",
    ):
        assert output.count(comment) == 1, comment
    assert "functionConfig" not in output
    assert items_of(output)[1:] == compiled(job())


def test_other_layouts_keep_their_data_and_comments() -> None:
    # Wide sequences are cut at their own indentation; an alias from one item to an anchor in another:
    # no item is cut out of the text, the whole list goes through ruamel's round trip.
    items = (
        as_item(job("one"))
        + PASS_THROUGH
        + as_item(job("two"))
        + AFTER.replace("settings", "settings # kept")
    )
    wide = resource_list("".join(f"  {line}\n" for line in items.splitlines()))
    aliased = resource_list(
        "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a, labels: &labels {team: ml}}\n"
        + as_item(job("one"))
        + "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b, labels: *labels}  # shares a's labels\n"
    )
    for text, comment in ((wide, "# kept"), (aliased, "# shares a's labels")):
        listing = reading.read_resource_list(text.encode())
        listing.items()  # an item that does not read on its own (the alias) sends the list to be read whole
        if text is wide:
            assert listing.cut is not None and listing.cut.indent == 2
        else:
            assert listing.cut is None  # the whole-list path
        outcome = run(text)
        assert outcome.code == 0, outcome.messages
        source = load(text)["items"]
        expected = [obj for item in source for obj in (mpigen.compile(item) if is_job(item) else [item])]
        assert [without_bookkeeping(item) for item in items_of(outcome.output)] == [
            without_bookkeeping(item) for item in expected
        ]
        assert outcome.output.count(comment) == 1
        assert run(outcome.output).output == outcome.output


def _with_comments(items: str, indent: int, note: str) -> str:
    """Items moved right by `indent`, with 300 comment lines under each line inside an item."""
    return "".join(
        f"{' ' * indent}{line}\n"
        + ("" if line.startswith(("-", "#")) else f"{' ' * (indent + 2)}# {note} {n}\n" * 300)
        for n, line in enumerate(items.splitlines())
    )


@pytest.mark.parametrize("indent", [0, 2, 4])
def test_a_list_dense_with_comments_is_cut_and_keeps_every_comment(indent: int) -> None:
    # kyaml's layout and the wider ones other writers use (go-yaml v3: 4): never the whole-list round trip,
    # whose time grows with every comment line (benchmarks/bench_krm.py: 200,000 of them)
    kept = _with_comments(PASS_THROUGH, indent, "kept")
    text = (
        resource_list(
            _with_comments(as_item(job("one")), indent, "job")
            + kept
            + _with_comments(as_item(job("two")), indent, "job")
        )
        + "# the end\n"
    )
    listing = reading.read_resource_list(text.encode())
    assert listing.cut is not None and listing.cut.indent == indent
    outcome = run(text)
    assert outcome.code == 0, outcome.messages
    source = load(text)["items"]
    expected = [obj for item in source for obj in (mpigen.compile(item) if is_job(item) else [item])]
    assert [without_bookkeeping(item) for item in items_of(outcome.output)] == [
        without_bookkeeping(item) for item in expected
    ]
    assert kept in outcome.output  # the passed-through item byte for byte, its comments with it
    assert outcome.output.endswith("# the end\n") and run(outcome.output).output == outcome.output


def test_an_index_annotation_int_refuses_is_no_index() -> None:
    for index in ("²", "٣", "9" * 4301, "-1", " 1"):
        item = as_item(job(), {"config.kubernetes.io/path": "job.yaml", "config.kubernetes.io/index": index})
        outcome = run(resource_list(item))
        assert outcome.code == 0, (index[:10], outcome.messages)


def test_a_line_break_other_than_newline_is_cut_only_where_no_line_starts_at_column_0() -> None:
    quoted = (
        "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: ls\n  data:\n    a: 'x\u2028    y'\n"
    )
    text = resource_list(quoted + as_item(job()))
    assert reading.read_resource_list(text.encode()).cut is not None
    assert run(text).output.startswith(resource_list(quoted))  # byte for byte
    hidden = resource_list(
        as_item(job())
        + "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: ls\n  data:\n    a: 'x\u2028- y'\n"
    )
    assert reading.read_resource_list(hidden.encode()).cut is None  # YAML reads a line there: read whole
    assert items_of(run(hidden).output)[-1]["data"] == {"a": "x\u2028- y"}


def test_aliases_between_items_pass_through_as_they_came_in_a_list_without_jobs() -> None:
    text = resource_list(
        "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a, labels: &labels {team: ml}}\n"
        "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b, labels: *labels}  # shares a's labels\n"
    )
    assert run(text) == Run(text, 0, [])


def test_a_json_resource_list_is_answered_in_yaml() -> None:
    import json

    document = {
        "apiVersion": "config.kubernetes.io/v1",
        "kind": "ResourceList",
        "items": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}},
            load(job()),
        ],
    }
    outcome = run(json.dumps(document, indent=2))
    assert outcome.code == 0
    assert items_of(outcome.output) == [document["items"][0], *compiled(job())]
    assert reading.PLACEHOLDER not in outcome.output


def test_a_list_with_no_comment_is_written_from_its_data_without_the_round_trip(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A list read whole with no `#` anywhere (JSON, flow YAML) has no comment to keep: render's emitter
    writes it (ruamel's round trip of 30,000 JSON items took 16 s), and its own output reads back the same."""
    import json

    def refuse(text: str) -> Any:
        raise AssertionError("the round trip ran")

    monkeypatch.setattr(yamltext, "round_trip_load", refuse)
    passed = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}, "data": {"k": "yes"}}
        for i in range(3)
    ]
    document = {
        "apiVersion": "config.kubernetes.io/v1",
        "kind": "ResourceList",
        "items": [*passed, load(job())],
        "results": [{"message": "earlier", "severity": "info"}],
    }
    outcome = run(json.dumps(document))
    assert outcome.code == 0, outcome.messages
    assert items_of(outcome.output) == [*passed, *compiled(job())]
    assert load(outcome.output)["results"] == document["results"]
    assert run(outcome.output) == Run(outcome.output, 0, [])


def test_loading_the_module_stays_cheap(fresh_python: str) -> None:
    code = "import sys, mpigen.krm; print(sorted(m for m in ('ruamel.yaml', 'pydantic', 'jsonschema') if m in sys.modules))"
    done = subprocess.run([fresh_python, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n"


def test_older_resource_list_versions_are_read() -> None:
    text = resource_list(as_item(job())).replace(
        "config.kubernetes.io/v1\n", "config.kubernetes.io/v1alpha1\n"
    )
    output = load(run(text).output)
    assert output["apiVersion"] == "config.kubernetes.io/v1alpha1"
    assert output["items"] == compiled(job())


# Same objects on every path ----------------------------------------------------------------------------


def is_job(document: dict[str, Any]) -> bool:
    return document.get("kind") == "MPIJob"


def split_stream(text: str) -> list[str]:
    return re.split(r"^---\n", text, flags=re.MULTILINE)


def as_item_text(document: str) -> str:
    lines = document.rstrip("\n").split("\n")
    return "- " + "\n".join([lines[0], *(f"  {line}" if line else line for line in lines[1:])]) + "\n"


def test_generated_text_is_renders_text() -> None:
    outcome = run(resource_list(as_item(job())))
    expected = to_yaml(compiled(job()))
    assert outcome.output == resource_list("".join(as_item_text(doc) for doc in split_stream(expected)))


def test_other_kubeflow_kinds_pass_through_and_near_misses_are_errors() -> None:
    tfjob = "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata:\n  name: tf\nspec: {}\n"
    outcome = run(resource_list(as_item(tfjob) + as_item(job())))
    assert outcome.code == 0, outcome.messages
    assert items_of(outcome.output)[0] == load(tfjob)
    near = job().replace("apiVersion: kubeflow.org/v1alpha2", "apiVersion: kubeflow/v1alpha2")
    outcome = run(resource_list(as_item(near, reader_annotations("jobs/train.yaml", 0, 0))))
    assert outcome.code == 1
    assert outcome.messages == [
        'jobs/train.yaml: MPIJob/train: apiVersion: "kubeflow/v1alpha2" is not a Kubeflow apiVersion (did you mean "kubeflow.org/v1alpha2"?)'
    ]


def test_an_item_that_is_also_generated_is_refused_naming_both_files() -> None:
    account = "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: train-launcher\n  namespace: ml\n"
    text = resource_list(
        as_item(job(), reader_annotations("jobs/train.yaml", 0, 0))
        + as_item(account, reader_annotations("sa.yaml", 0, 1))
    )
    outcome = run(text)
    assert outcome.code == 1
    [result] = load(outcome.output)["results"]
    assert result["file"] == {"path": "sa.yaml", "index": 0}
    assert "is also generated for MPIJob/train at jobs/train.yaml" in result["message"]
    assert items_of(outcome.output) == items_of(text)  # nothing half-generated


# Limits: the function accepts every list it writes ----------------------------------------------------


def test_the_function_reads_back_an_output_at_its_size_limit_and_refuses_a_larger_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mpigen.krm import readback as limits

    text = resource_list(PASS_THROUGH + as_item(job(), reader_annotations("jobs/train.yaml", 1, 2)) + AFTER)
    output = run(text).output
    for module in (limits, reading):
        monkeypatch.setattr(module, "MAX_LIST_BYTES", len(output.encode()))
    assert run(text).output == output
    assert run(output) == Run(output, 0, [])
    for module in (limits, reading):
        monkeypatch.setattr(module, "MAX_LIST_BYTES", len(output.encode()) - 1)
    refused = run(text)
    assert refused.code == 1
    assert refused.messages == [
        f"mpigen: <stdin>: the output ResourceList would be {len(output.encode()) / 2**20:,.1f} MiB, over the 0 MiB the function reads; compile fewer jobs at once"
    ]
    assert items_of(refused.output) == items_of(text)  # items as given
    assert load(refused.output)["results"][0]["message"] == refused.messages[0]


def test_a_list_read_whole_may_not_grow_past_the_values_it_is_read_with(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import json

    from mpigen.krm import readback as limits

    monkeypatch.setattr(limits, "MAX_VALUES", 100)  # one job's objects hold more
    as_json = json.dumps(
        {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": [load(job())]}
    )
    refused = run(as_json)
    assert refused.code == 1 and "more than 100 values where it is read whole" in refused.messages[0]
    cut = run(resource_list(as_item(job())))  # read back item by item: each within the limit
    assert cut.code == 0


def test_lists_over_renders_16_mib_are_read_and_come_back_byte_for_byte() -> None:
    from mpigen.yaml.load import MAX_INPUT_BYTES

    count = MAX_INPUT_BYTES // len(AFTER) + 100
    text = resource_list("".join(AFTER.replace("settings", f"settings-{n}") for n in range(count)))
    assert len(text) > MAX_INPUT_BYTES
    stdout, stderr = io.BytesIO(), io.StringIO()
    assert run_function(io.BytesIO(text.encode()), stdout, stderr) == 0, stderr.getvalue()
    assert stdout.getvalue() == text.encode()


# kustomize, end to end -----------------------------------------------------------------------------


FUNCTION = "config.kubernetes.io/function"
Build = Callable[..., "subprocess.CompletedProcess[str]"]


@pytest.fixture
def build(kustomize_binary: str) -> Build:
    """`build(directory)`: `kustomize build --enable-alpha-plugins --enable-exec DIRECTORY`."""

    def run(directory: Path, timeout: int = 120) -> subprocess.CompletedProcess[str]:
        argv = [kustomize_binary, "build", "--enable-alpha-plugins", "--enable-exec", str(directory)]
        return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=timeout)

    return run


def by_identity(objects: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(obj["kind"], obj["metadata"]["name"]): obj for obj in objects}


def test_kustomize_runs_it_as_a_generator(tmp_path: Path, build: Build) -> None:
    annotated = job(annotations={"mpigen.dev/gang-scheduler": "volcano"})
    data = load(annotated)
    data["metadata"]["annotations"][FUNCTION] = f"exec:\n  path: {function_executable(tmp_path)}\n"
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(data))
    (tmp_path / "kustomization.yaml").write_text("generators:\n- job.yaml\n")
    done = build(tmp_path)
    assert done.returncode == 0, done.stderr
    assert by_identity(load_all(done.stdout)) == by_identity(mpigen.compile(load(annotated)))


def test_kustomize_runs_it_as_a_transformer(tmp_path: Path, build: Build) -> None:
    (tmp_path / "job.yaml").write_text(job())
    (tmp_path / "other.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\ndata:\n  a: 'yes'\n"
    )
    config = {
        "apiVersion": "mpigen.dev/v1",
        "kind": "Compile",
        "metadata": {
            "name": "mpigen",
            "annotations": {FUNCTION: f"exec:\n  path: {function_executable(tmp_path)}\n"},
        },
    }
    (tmp_path / "mpigen.yaml").write_text(yaml.safe_dump(config))
    (tmp_path / "kustomization.yaml").write_text(
        "resources:\n- job.yaml\n- other.yaml\ntransformers:\n- mpigen.yaml\n"
    )
    done = build(tmp_path)
    assert done.returncode == 0, done.stderr
    other = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other"}, "data": {"a": "yes"}}
    expected = by_identity([*compiled(job()), other])
    assert by_identity(load_all(done.stdout)) == expected
    (tmp_path / "job.yaml").write_text(job(replicas=0))
    failed = build(tmp_path)
    assert failed.returncode != 0
    assert "MPIJob/train: spec.mpiReplicaSpecs.Worker.replicas: must be >= 1" in failed.stderr


# kustomize's own handling of a function's output grows faster than the list (minutes for 300 jobs on
# two shared cores, the function a few seconds of that): 100 jobs, 1,300 objects, is large enough.
LARGE = 100


def commented_settings(index: int) -> str:
    return (
        f"# settings of train-{index}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings-{index} # for the job\n"
        "  namespace: ml\ndata:\n  # quoted: YAML 1.1 would read a boolean\n  enabled: 'yes'\n"
    )


def test_kustomize_runs_it_twice_on_a_large_list(tmp_path: Path, build: Build) -> None:
    """A chain of two mpigen transformers over a hundred jobs and ConfigMaps: the first compiles, the
    second gets the first's output (as kustomize hands it on, in its own order) and changes nothing.
    (kustomize drops the comments of resource files when it loads them; kpt keeps them: test_kpt.py.)"""
    resources = []
    for index in range(LARGE):
        (tmp_path / f"train-{index}.yaml").write_text(job(f"train-{index}"))
        (tmp_path / f"settings-{index}.yaml").write_text(commented_settings(index))
        resources += [f"train-{index}.yaml", f"settings-{index}.yaml"]
    for name in ("mpigen", "again"):
        config = {
            "apiVersion": "mpigen.dev/v1",
            "kind": "Compile",
            "metadata": {
                "name": name,
                "annotations": {FUNCTION: f"exec:\n  path: {function_executable(tmp_path)}\n"},
            },
        }
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(config))
    kustomization = {
        "resources": resources,
        "transformers": ["mpigen.yaml", "again.yaml"],
        "sortOptions": {"order": "fifo"},
    }
    (tmp_path / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
    done = build(tmp_path, timeout=900)
    assert done.returncode == 0, done.stderr
    expected = [
        obj
        for index in range(LARGE)
        for obj in [*compiled(job(f"train-{index}")), load(commented_settings(index))]
    ]
    output = load_all(done.stdout)
    assert len(output) == len(expected)
    assert by_identity(output) == by_identity(expected)


# Where a message names an item: its file and document, as render names them, else items[N] -----------

ANNOTATION_STYLES = {
    "kustomize and kpt": ("internal.config.kubernetes.io/path", "internal.config.kubernetes.io/index"),
    "legacy": ("config.kubernetes.io/path", "config.kubernetes.io/index"),
    "none": None,
}
SA = "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: train-launcher, namespace: ml}\n"


def _stream_lines(documents: list[str], style: str) -> tuple[list[str], list[str], list[dict[str, Any]]]:
    """The same documents as render reads them (one file, input.yaml) and as the KRM function gets them
    (items annotated in `style`): render's stderr lines, the function's, and its results."""
    from mpigen.options import Options
    from mpigen.pipeline import process
    from mpigen.yaml.load import Document

    datas = [load(document) for document in documents]
    total = len(datas)
    rendered = process(
        [("input.yaml", [Document(i + 1, data, total) for i, data in enumerate(datas)])], Options()
    ).lines()
    keys = ANNOTATION_STYLES[style]
    items = "".join(
        as_item(document, dict(zip(keys, ("input.yaml", str(i)), strict=True)) if keys else None)
        for i, document in enumerate(documents)
    )
    output, outcome = protocol.process_resource_list(resource_list(items).encode())
    return rendered, outcome.lines(), load(output).get("results") or []


RENDERED_DOCUMENT = re.compile(r"input\.yaml: document (\d+)(?=:)|input\.yaml \(document (\d+)\)")


def _named(style: str, lines: list[str]) -> list[str]:
    """render's lines as the function writes them for items with no path annotation: items[N]."""
    if ANNOTATION_STYLES[style]:
        return lines
    return [
        RENDERED_DOCUMENT.sub(lambda m: f"items[{int(m.group(1) or m.group(2)) - 1}]", line) for line in lines
    ]


@pytest.mark.parametrize("style", list(ANNOTATION_STYLES))
@pytest.mark.parametrize(
    "documents",
    [
        [
            CONFIG := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: ml}\n",
            job(replicas=0),
        ],
        [CONFIG, job(worker_fields={"restartPolicy": "OnFailure"})],
        [job(), job()],
        [job(), SA],
        [SA, job()],
    ],
    ids=[
        "a job's error",
        "a warning",
        "two jobs, one name",
        "an item a job also generates",
        "a job that generates an item",
    ],
)
def test_every_message_names_the_item_as_render_names_the_document(documents: list[str], style: str) -> None:
    rendered, lines, results = _stream_lines(documents, style)
    assert rendered and all(line.startswith("input.yaml: document ") for line in rendered)
    assert lines == _named(style, rendered)
    for result in results:
        assert ("file" in result) == (style != "none")


@pytest.mark.parametrize("style", list(ANNOTATION_STYLES))
def test_a_collision_names_the_other_item_precisely(style: str) -> None:
    _, lines, results = _stream_lines([job(), SA, job()], style)
    named = ("input.yaml: document 3: ", "input.yaml: document 2: ", "input.yaml (document 1)")
    third, second, first = ("items[2]: ", "items[1]: ", "items[0]") if style == "none" else named
    assert lines == [
        f'{third}MPIJob/train: metadata.name: another MPIJob "train" in namespace "ml" is at {first}: both would create the same objects; rename one',
        f'{second}ServiceAccount/train-launcher: metadata.name: ServiceAccount "train-launcher" in namespace "ml" is also generated for MPIJob/train at {first}: kubectl apply would merge the two; rename one',
    ]
    assert [result.get("file") for result in results] == (
        [None, None]
        if style == "none"
        else [{"path": "input.yaml", "index": 2}, {"path": "input.yaml", "index": 1}]
    )


def test_items_of_different_files_are_named_by_file_alone() -> None:
    items = as_item(job(), reader_annotations("jobs/a.yaml", 0, 1)) + as_item(
        job(), reader_annotations("jobs/b.yaml", 0, 2)
    )
    _, outcome = protocol.process_resource_list(resource_list(items).encode())
    assert outcome.lines() == [
        'jobs/b.yaml: MPIJob/train: metadata.name: another MPIJob "train" in namespace "ml" is at jobs/a.yaml: both would create the same objects; rename one'
    ]


def test_a_bug_in_the_output_names_the_items_file(monkeypatch: pytest.MonkeyPatch) -> None:
    import mpigen.checks.kube.validator
    from mpigen.errors import Issue

    def broken(obj: dict[str, Any], version: str, kinds: object = ()) -> list[Issue]:
        return [Issue(("spec", "replicas"), "expected integer")] if obj["kind"] == "StatefulSet" else []

    monkeypatch.setattr(mpigen.checks.kube.validator, "validate_object", broken)
    items = PASS_THROUGH + as_item(job(), reader_annotations("jobs/train.yaml", 1, 2))
    _, outcome = protocol.process_resource_list(resource_list(items).encode())
    assert outcome.exit_code == 3
    assert outcome.lines()[1:] == [
        "jobs/train.yaml: document 2: StatefulSet/train-worker: spec.replicas: expected integer"
    ]


@pytest.mark.parametrize(
    ("origin", "named"),
    [
        ("path: jobs/pi.yaml\n", "jobs/pi.yaml"),
        ("path: 'jobs/it''s.yaml'\n", "jobs/it's.yaml"),
        ('path: "jobs/\\u00e9.yaml"\nrepo: https://example.com/r\nref: main\n', "jobs/é.yaml"),
    ],
)
def test_under_kustomize_a_job_is_named_by_its_origin_file(origin: str, named: str) -> None:
    """kustomize gives an exec function no path annotation; with `buildMetadata: [originAnnotations]` it
    writes the file into `config.kubernetes.io/origin` (and the index annotations, all 0 here)."""
    bad = job().replace("replicas: 2", "replicas: 0")
    annotations = {
        "config.kubernetes.io/origin": origin,
        "config.kubernetes.io/index": "0",
        "internal.config.kubernetes.io/index": "0",
    }
    result = run(resource_list(as_item(bad, annotations)))
    assert result.code == 1
    assert result.messages == [
        f"{named}: MPIJob/train: spec.mpiReplicaSpecs.Worker.replicas: must be >= 1, got 0"
    ]
    [entry] = load(result.output)["results"]
    assert entry["file"] == {"path": named, "index": 0}


def test_without_a_path_or_origin_a_job_is_named_by_its_place_in_the_list() -> None:
    bad = job().replace("replicas: 2", "replicas: 0")
    result = run(resource_list(as_item(bad, {"kustomize.config.k8s.io/id": "kind: MPIJob\n"})))
    assert result.messages == [
        "items[0]: MPIJob/train: spec.mpiReplicaSpecs.Worker.replicas: must be >= 1, got 0"
    ]
