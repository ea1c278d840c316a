"""`mpigen validate`: reports for every resource, kubeconform's JSON shape, exit codes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jobs import V2BETA1, job_yaml

from mpigen.cli import cli

GOOD = job_yaml(name="good")
# v2beta1: an unknown field is an error there (v1alpha1 and v1alpha2 leave it out with a warning)
BAD = job_yaml(V2BETA1, workers="two", name="bad", slotPerWorker=2)
CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n"


def invoke(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["validate", *args], input=stdin, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def report(*args: str, stdin: str | None = None) -> tuple[int, dict[str, Any]]:
    code, out, _ = invoke("-o", "json", *args, stdin=stdin)
    return code, json.loads(out)


def test_a_valid_job_reports_itself_and_every_object_it_would_produce() -> None:
    code, data = report(stdin=GOOD)
    assert code == 0
    kinds = [(r["kind"], r["name"], r["status"]) for r in data["resources"]]
    assert kinds[0] == ("MPIJob", "good", "statusValid")
    assert ("StatefulSet", "good-worker", "statusValid") in kinds
    assert ("Job", "good-launcher", "statusValid") in kinds
    assert data["summary"] == {"valid": len(kinds), "invalid": 0, "errors": 0, "skipped": 0}
    for resource in data["resources"]:
        assert set(resource) == {"filename", "kind", "name", "version", "status", "msg"}
        assert resource["filename"] == "<stdin>"


def test_an_invalid_job_lists_every_problem_with_json_pointer_paths() -> None:
    code, data = report(stdin=BAD)
    assert code == 1
    [job] = data["resources"]
    assert (job["kind"], job["name"], job["version"], job["status"]) == (
        "MPIJob",
        "bad",
        "kubeflow.org/v2beta1",
        "statusInvalid",
    )
    paths = {error["path"] for error in job["validationErrors"]}
    assert paths == {"/spec/slotPerWorker", "/spec/mpiReplicaSpecs/Worker/replicas"}
    assert "slotPerWorker" in job["msg"] and "replicas" in job["msg"]
    assert data["summary"]["invalid"] == 1


def test_one_bad_job_among_good_ones_is_reported_and_fails_the_run(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(GOOD)
    (tmp_path / "b.yaml").write_text(BAD)
    (tmp_path / "c.yaml").write_text(CONFIG_MAP)
    code, data = report(str(tmp_path))
    assert code == 1
    statuses = {(Path(r["filename"]).name, r["kind"], r["status"]) for r in data["resources"]}
    assert ("a.yaml", "MPIJob", "statusValid") in statuses
    assert ("b.yaml", "MPIJob", "statusInvalid") in statuses
    assert ("c.yaml", "ConfigMap", "statusSkipped") in statuses
    assert data["summary"]["skipped"] == 1 and data["summary"]["invalid"] == 1


def test_unreadable_inputs_are_errors(tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text("kind: MPIJob\na: [1, 2\n")
    code, data = report(str(tmp_path / "broken.yaml"), str(tmp_path / "missing.yaml"))
    assert code == 1
    assert [r["status"] for r in data["resources"]] == ["statusError", "statusError"]
    assert data["summary"]["errors"] == 2
    # The file is the resource's filename, not repeated in its message.
    assert data["resources"][1]["filename"].endswith("missing.yaml")
    assert data["resources"][1]["msg"] == "cannot read: No such file or directory"
    assert data["resources"][0]["msg"].startswith("line 3, column 1: ")


@pytest.mark.parametrize("output", ["text", "tap", "json", "junit"])
def test_a_yaml_syntax_error_names_its_file_once(tmp_path: Path, output: str) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: a\n")
    result = CliRunner().invoke(cli, ["validate", "-o", output, str(path)], catch_exceptions=False)
    assert result.exit_code == 1
    [line] = [line for line in result.stdout.splitlines() if "did not find expected" in line]
    assert line.count("broken.yaml") == (1 if output in ("text", "tap") else 0), line
    assert str(path) in result.stdout


# Files a pre-commit hook sees in a repository that also keeps MPIJobs; none of them names one.
FOREIGN_FILES = {
    # `on:` is a YAML 1.1 boolean: the key is not a string.
    ".github/workflows/ci.yaml": "name: ci\non: [push]\njobs:\n  test: {runs-on: ubuntu-latest, steps: []}\n",
    "chart/templates/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n{{- if .Values.x }}\nspec: {}\n{{- end }}\n",
    "config/duplicate.yaml": "a: 1\na: 2\n",
    "config/settings.json": '{"a": [1}',
}


def test_files_that_name_no_mpijob_are_skipped_even_when_they_are_not_plain_yaml(tmp_path: Path) -> None:
    for name, text in FOREIGN_FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "good.yaml").write_text(GOOD)
    files = [str(tmp_path / name) for name in FOREIGN_FILES] + [str(tmp_path / "jobs" / "good.yaml")]
    code, out, err = invoke(*files)
    assert (code, out, err) == (0, "", "")
    code, data = report(*files)
    assert code == 0
    skipped = [r for r in data["resources"] if r["status"] == "statusSkipped"]
    assert [r["filename"] for r in skipped] == [str(tmp_path / name) for name in FOREIGN_FILES]
    assert all("names no MPIJob: skipped" in r["msg"] for r in skipped)


@pytest.mark.parametrize("kind", ["MPIJob", "mpijob", '"MPIJob"'])
def test_an_unreadable_file_that_names_an_mpijob_is_still_an_error(tmp_path: Path, kind: str) -> None:
    (tmp_path / "job.yaml").write_text(f"kind: {kind}\nmetadata: {{name: {{{{ .Release.Name }}}}}}\n")
    code, data = report(str(tmp_path / "job.yaml"))
    assert code == 1
    assert [r["status"] for r in data["resources"]] == ["statusError"]


def test_render_still_refuses_an_unreadable_file_it_cannot_pass_through(tmp_path: Path) -> None:
    (tmp_path / "dup.yaml").write_text(FOREIGN_FILES["config/duplicate.yaml"])
    result = CliRunner().invoke(cli, ["render", str(tmp_path / "dup.yaml")])
    assert result.exit_code == 1 and 'duplicate key "a"' in result.stderr


TFJOB = "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: tf, namespace: ml}\nspec: {}\n"


def test_other_kubeflow_kinds_are_skipped_not_refused() -> None:
    code, data = report(stdin=TFJOB + "---\n" + GOOD)
    assert code == 0
    assert (data["resources"][0]["kind"], data["resources"][0]["status"]) == ("TFJob", "statusSkipped")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ("apiVersion: kubeflow.org/v1alpha2", "apiVersion: kubeflow/v1alpha2"),
            'apiVersion: "kubeflow/v1alpha2" is not a Kubeflow apiVersion (did you mean "kubeflow.org/v1alpha2"?)',
        ),
        (
            ("apiVersion: kubeflow.org/v1alpha2\n", ""),
            'apiVersion: missing (did you mean "kubeflow.org/v2beta1"?)',
        ),
        (("kind: MPIJob", "kind: MPIjob"), 'kind: unknown kind "MPIjob" (did you mean "MPIJob"?)'),
        (
            ("apiVersion: kubeflow.org/v1alpha2\nkind: MPIJob", "apiVersion: Kubeflow.org/v1\nkind: TFJob"),
            'apiVersion: "Kubeflow.org/v1" is not a Kubeflow apiVersion (did you mean "kubeflow.org/v1"?)',
        ),
    ],
)
def test_near_misses_are_errors_with_did_you_mean(change: tuple[str, str], message: str) -> None:
    code, out, _ = invoke(stdin=GOOD.replace(*change))
    assert code == 1
    assert out.splitlines()[0].endswith(message)


def test_two_jobs_with_one_name_are_refused_naming_both_files(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(GOOD)
    (tmp_path / "b.yaml").write_text(GOOD)
    (tmp_path / "c.yaml").write_text(
        "apiVersion: v1\nkind: Service\nmetadata: {name: good-worker, namespace: ml}\nspec: {}\n"
    )
    code, out, _ = invoke(str(tmp_path))
    assert code == 1
    a, b, c = (str(tmp_path / name) for name in ("a.yaml", "b.yaml", "c.yaml"))
    assert out.splitlines() == [
        f'{b}: MPIJob/good: metadata.name: another MPIJob "good" in namespace "ml" is at {a}: both would create the same objects; rename one',
        f'{c}: Service/good-worker: metadata.name: Service "good-worker" in namespace "ml" is also generated for MPIJob/good at {a}: kubectl apply would merge the two; rename one',
    ]
    code, data = report(str(tmp_path))
    statuses = [
        (Path(r["filename"]).name, r["kind"], r["status"])
        for r in data["resources"]
        if r["kind"] in ("MPIJob", "Service")
    ]
    assert ("b.yaml", "MPIJob", "statusInvalid") in statuses and (
        "c.yaml",
        "Service",
        "statusInvalid",
    ) in statuses
    assert ("a.yaml", "MPIJob", "statusValid") in statuses


def test_text_output_is_one_line_per_problem_and_prints_no_manifests() -> None:
    code, out, _ = invoke(stdin=BAD)
    assert code == 1
    assert sorted(out.splitlines()) == [
        '<stdin>: MPIJob/bad: spec.mpiReplicaSpecs.Worker.replicas: expected an integer, got string "two"',
        '<stdin>: MPIJob/bad: spec.slotPerWorker: unknown field "slotPerWorker" (did you mean "slotsPerWorker"?)',
    ]
    code, out, _ = invoke(stdin=GOOD)
    assert (code, out) == (0, "")


def test_text_summary_counts_statuses() -> None:
    code, out, _ = invoke("--summary", stdin=GOOD + "---\n" + CONFIG_MAP)
    assert code == 0
    assert out == "Summary: 9 resources found in 1 files - Valid: 8, Invalid: 0, Errors: 0, Skipped: 1\n"


def test_warnings_are_reported_but_do_not_fail() -> None:
    code, data = report(stdin=job_yaml(name="good", worker_fields={"restartPolicy": "Never"}))
    assert code == 0
    warnings = data["resources"][0]["warnings"]
    assert warnings[0]["path"] == "/spec/mpiReplicaSpecs/Worker/restartPolicy"


def test_options_apply_as_they_do_for_render() -> None:
    code, data = report("--gang-scheduler", "volcano", stdin=GOOD)
    assert code == 0
    assert "PodGroup" in {r["kind"] for r in data["resources"]}
    code, _, err = invoke("--kube-version", "1.2", stdin=GOOD)
    assert code == 2 and "--kube-version" in err


def test_an_invalid_object_from_mpigen_is_a_bug_exit_3(monkeypatch: pytest.MonkeyPatch) -> None:
    import mpigen.checks.kube.validator
    from mpigen.errors import Issue

    def broken(obj: dict[str, Any], version: str, kinds: object = ()) -> list[Issue]:
        return [Issue(("spec", "replicas"), "expected integer")] if obj["kind"] == "StatefulSet" else []

    monkeypatch.setattr(mpigen.checks.kube.validator, "validate_object", broken)
    code, data = report(stdin=GOOD)
    assert code == 3
    bad = [r for r in data["resources"] if r["status"] == "statusInvalid"]
    assert [(r["kind"], r["validationErrors"]) for r in bad] == [
        ("StatefulSet", [{"path": "/spec/replicas", "msg": "expected integer"}])
    ]
    assert "please report this" in bad[0]["msg"]


def test_json_pointer_escapes() -> None:
    from mpigen.outcome import json_pointer

    assert json_pointer(("limits", "nvidia.com/gpu", 0, "a~b")) == "/limits/nvidia.com~1gpu/0/a~0b"


# -o junit and -o tap: kubeconform's other two report shapes (pkg/output/junit.go, tap.go) -------------


def _mixed_inputs(tmp_path: Path) -> list[str]:
    """A valid job, an invalid one, a ConfigMap (skipped) and a file that cannot be read (an error)."""
    (tmp_path / "a.yaml").write_text(GOOD)
    (tmp_path / "b.yaml").write_text(BAD)
    (tmp_path / "c.yaml").write_text(CONFIG_MAP.replace("name: settings", "name: settings, namespace: ml"))
    return [str(tmp_path / name) for name in ("a.yaml", "b.yaml", "c.yaml", "missing.yaml")]


def test_the_report_formats_are_the_one_table_behind_the_output_choice() -> None:
    from mpigen.per_resource import FORMATS

    assert list(FORMATS) == ["text", "json", "junit", "tap"]
    code, _, err = invoke("-o", "xml", stdin=GOOD)
    assert code == 2 and "'text', 'json', 'junit', 'tap'" in err


def test_junit_report_has_one_suite_per_file_and_one_case_per_resource(tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    files = _mixed_inputs(tmp_path)
    code, out, _ = invoke("-o", "junit", *files)
    assert code == 1
    root = ET.fromstring(out)
    _, data = report(*files)
    resources = data["resources"]
    assert root.tag == "testsuites"
    assert {k: root.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": str(len(resources)),
        "failures": "1",
        "errors": "1",
        "skipped": "1",
    }
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == files
    assert [s.get("id") for s in suites] == ["1", "2", "3", "4"]
    cases = [case for suite in suites for case in suite.findall("testcase")]
    assert len(cases) == len(resources)
    good, bad, skipped, missing = (suite.findall("testcase") for suite in suites)
    assert good[0].get("name") == "ml/good" and good[0].get("classname") == "MPIJob@kubeflow.org/v1alpha2"
    assert ("ml/good-worker", "StatefulSet@apps/v1") in [(c.get("name"), c.get("classname")) for c in good]
    assert all(list(case) == [] for case in good)  # a passing case has no child
    [failure] = bad[0].findall("failure")
    assert "slotPerWorker" in (failure.get("message") or "") and "spec.slotPerWorker" in (failure.text or "")
    assert suites[1].get("failures") == "1" and suites[1].get("tests") == "1"
    [case] = skipped
    assert (case.get("name"), case.get("classname")) == ("ml/settings", "ConfigMap@v1")
    assert case.find("skipped") is not None and "not an MPIJob" in (case.find("skipped").get("message") or "")  # type: ignore[union-attr]
    assert suites[2].get("skipped") == "1"
    [error] = missing[0].findall("error")
    assert error.get("message") == "cannot read: No such file or directory"
    assert missing[0].get("name", "").endswith("missing.yaml")


def test_junit_report_escapes_and_is_the_same_bytes_every_run() -> None:
    import xml.etree.ElementTree as ET

    hostile = job_yaml(V2BETA1, name="bad", slotPerWorker='"<&>"')
    first = invoke("-o", "junit", stdin=hostile)
    assert first == invoke("-o", "junit", stdin=hostile)
    failure = ET.fromstring(first[1]).find("testsuite/testcase/failure")
    assert failure is not None and "slotPerWorker" in (failure.get("message") or "")


def test_tap_report_has_a_line_per_resource_and_the_plan_line(tmp_path: Path) -> None:
    files = _mixed_inputs(tmp_path)
    code, out, _ = invoke("-o", "tap", *files)
    assert code == 1
    lines = out.splitlines()
    _, data = report(*files)
    count = len(data["resources"])
    assert lines[0] == "TAP version 13"
    assert lines[-1] == f"1..{count}"
    tests = lines[1:-1]
    assert len(tests) == count
    matches = [re.match(r"(ok|not ok) (\d+)( #skip)? - ", line) for line in tests]
    assert [int(m.group(2)) if m else None for m in matches] == list(range(1, count + 1))
    a, b, c, missing = files
    assert tests[0] == f"ok 1 - {a} (MPIJob/good)"
    assert f"ok 2 - {a} (ServiceAccount/good-launcher)" in tests
    assert (
        tests[-3].startswith(f"not ok {count - 2} - {b} (MPIJob/bad): ") and "spec.slotPerWorker" in tests[-3]
    )
    assert tests[-2] == f"ok {count - 1} #skip - {c} (ConfigMap/settings)"
    assert tests[-1].startswith(f"not ok {count} - {missing}: ") and "cannot read" in tests[-1]


def test_tap_escapes_hashes_so_a_message_is_never_a_directive(tmp_path: Path) -> None:
    (tmp_path / "#1.yaml").write_text(GOOD)
    code, out, _ = invoke("-o", "tap", str(tmp_path / "#1.yaml"))
    assert code == 0
    assert out.splitlines()[1] == f"ok 1 - {tmp_path}/\\#1.yaml (MPIJob/good)"


# Empty input: an error, as for render (kubectl: "no objects passed to apply"), unless --allow-empty ----


@pytest.mark.parametrize("output", ["text", "json", "junit", "tap"])
def test_empty_stdin_is_an_error_as_render_says(output: str) -> None:
    assert invoke("-o", output, stdin="") == (
        1,
        "",
        "mpigen: <stdin>: no objects in the input; nothing to validate (--allow-empty accepts that)\n",
    )
    render = CliRunner().invoke(cli, ["render"], input="")
    assert render.exit_code == 1 and render.stderr.replace("render", "validate") == invoke(stdin="")[2]


def test_an_empty_file_or_a_directory_without_yaml_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty.yaml").write_text("---\n# nothing\n")
    code, out, err = invoke(str(tmp_path / "empty.yaml"))
    assert (
        (code, out) == (1, "")
        and err
        == f"mpigen: {tmp_path}/empty.yaml: no objects in the input; nothing to validate (--allow-empty accepts that)\n"
    )
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "notes.txt").write_text("x")
    code, out, err = invoke(str(tmp_path / "dir"))
    assert (
        (code, out) == (1, "")
        and err
        == f"mpigen: {tmp_path}/dir: holds no .yaml, .yml or .json files; nothing to validate (--allow-empty accepts that)\n"
    )


def test_allow_empty_reports_nothing_found(tmp_path: Path) -> None:
    assert invoke("--allow-empty", stdin="") == (0, "", "")
    code, data = report("--allow-empty", str(tmp_path))
    assert code == 0 and data == {
        "resources": [],
        "summary": {"valid": 0, "invalid": 0, "errors": 0, "skipped": 0},
    }
    assert invoke("--allow-empty", "-o", "tap", stdin="")[1] == "TAP version 13\n1..0\n"


def test_one_empty_file_among_others_is_not_an_empty_input(tmp_path: Path) -> None:
    (tmp_path / "empty.yaml").write_text("")
    (tmp_path / "job.yaml").write_text(GOOD)
    assert invoke(str(tmp_path))[0] == 0
    (tmp_path / "job.yaml").write_text("kind: MPIJob\na: [1\n")
    assert invoke(str(tmp_path))[0] == 1  # an unreadable file is its own problem, not an empty input


def test_the_pre_commit_hook_passes_a_staged_empty_yaml_file(tmp_path: Path) -> None:
    import shlex

    import yaml

    root = Path(__file__).resolve().parents[3]
    hooks = {hook["id"]: hook for hook in yaml.safe_load((root / ".pre-commit-hooks.yaml").read_text())}
    program, command, *flags = shlex.split(hooks["mpigen-validate"]["entry"])
    assert (program, command) == ("mpigen", "validate")
    (tmp_path / "values.yaml").write_text("")
    assert invoke(*flags, str(tmp_path / "values.yaml")) == (0, "", "")
