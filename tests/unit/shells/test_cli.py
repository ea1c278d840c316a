"""The command line as users run it: inputs, outputs, exit codes and messages."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jobs import job_yaml

from mpigen.cli import cli

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "v1alpha2" / "tensorflow-benchmarks.yaml"


def invoke(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_stdin_is_the_default_input() -> None:
    code, out, err = invoke("render", stdin=job_yaml(name="a"))
    assert code == 0, err
    assert "name: a-launcher" in out
    code2, out2, _ = invoke("render", "-", stdin=job_yaml(name="a"))
    assert (code2, out2) == (0, out)


def test_directories_are_searched_recursively_in_sorted_order(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "two.yml").write_text(job_yaml(name="two"))
    (tmp_path / "a.yaml").write_text(job_yaml(name="one"))
    (tmp_path / "notes.txt").write_text("not yaml")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "x.yaml").write_text("{{{")
    code, out, err = invoke("render", str(tmp_path))
    assert code == 0, err
    assert out.index("name: one-launcher") < out.index("name: two-launcher")


def test_json_output_is_a_v1_list() -> None:
    code, out, _ = invoke("render", "-o", "json", str(EXAMPLE))
    assert code == 0
    document = json.loads(out)
    assert document["apiVersion"] == "v1" and document["kind"] == "List"
    assert [item["kind"] for item in document["items"]][-1] == "Job"


def test_yaml_and_json_carry_the_same_objects() -> None:
    import yaml

    _, out_yaml, _ = invoke("render", str(EXAMPLE))
    _, out_json, _ = invoke("render", "-o", "json", str(EXAMPLE))
    assert list(yaml.safe_load_all(out_yaml)) == json.loads(out_json)["items"]


def test_render_twice_gives_identical_bytes() -> None:
    first = invoke("render", str(EXAMPLE))
    assert invoke("render", str(EXAMPLE)) == first


def test_invalid_input_prints_nothing_and_reports_every_problem(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(job_yaml(name="good"))
    bad = tmp_path / "bad.yaml"
    bad.write_text(job_yaml(workers=0, name="bad"))
    broken = tmp_path / "broken.yaml"
    broken.write_text("a: [\n")
    code, out, err = invoke("render", str(good), str(bad), str(broken))
    assert code == 1
    assert out == ""
    lines = err.splitlines()
    assert f"{bad}: MPIJob/bad: spec.mpiReplicaSpecs.Worker.replicas: must be >= 1, got 0" in lines
    assert any(line.startswith(f"{broken}: line ") for line in lines)


def test_missing_file_is_reported(tmp_path: Path) -> None:
    code, out, err = invoke("render", str(tmp_path / "nope.yaml"))
    assert (code, out) == (1, "")
    assert "nope.yaml: cannot read: No such file or directory" in err


def test_usage_errors_exit_2() -> None:
    assert invoke("render", "--gpus-per-node", "0")[0] == 2
    assert invoke("render", "--processing-resource-type", "tpu")[0] == 2
    assert invoke("render", "-o", "xml")[0] == 2
    assert invoke("frobnicate")[0] == 2


def test_internal_errors_exit_3_without_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    import mpigen.compiler

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("kaboom")

    monkeypatch.setattr(mpigen.compiler, "compile_job", boom)
    code, out, err = invoke("render", str(EXAMPLE))
    assert (code, out) == (3, "")
    assert err == "mpigen: internal error: RuntimeError: kaboom (please report this)\n"


def test_non_mpijob_documents_pass_through_in_place() -> None:
    stream = "apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\n---\n" + job_yaml(name="x")
    code, out, _ = invoke("render", stdin=stream)
    assert code == 0
    assert out.startswith("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ml\n---\n")


def test_the_readmes_first_command_prints_manifests_and_nothing_else(mpigen_command: list[str]) -> None:
    """`mpigen render examples/v1alpha2/tensorflow-benchmarks.yaml`: the first thing a user sees."""
    example = Path(__file__).resolve().parents[3] / "examples" / "v1alpha2" / "tensorflow-benchmarks.yaml"
    done = subprocess.run(
        [*mpigen_command, "render", str(example)], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert "kind: RoleBinding" in done.stdout


@pytest.mark.parametrize(
    "folder", sorted(path.name for path in (ROOT / "examples").glob("v*") if path.is_dir())
)
def test_each_shipped_example_folder_renders_as_one_stream(folder: str) -> None:
    """`mpigen render examples/v2beta1/`: the examples of one folder name different jobs."""
    code, out, err = invoke("render", str(ROOT / "examples" / folder))
    assert (code, err) == (0, "")
    jobs = sorted((ROOT / "examples" / folder).glob("*.yaml"))
    assert out.count("kind: Job\n") >= len(jobs)


def test_the_whole_examples_folder_renders_as_one_stream() -> None:
    """`mpigen render examples/`: every shipped job (MPIJobs of each version, the TrainJob, the GitOps
    folder's jobs) has a name of its own, so the folder is one stream with no clash."""
    code, out, err = invoke("render", str(ROOT / "examples"))
    assert (code, err) == (0, "")
    assert "kind: JobSet\n" in out  # the TrainJob's
    assert "kind: StatefulSet\n" in out


def test_two_files_with_one_job_are_refused_and_nothing_is_printed(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[3] / "examples" / "v1alpha2" / "tensorflow-benchmarks.yaml"
    (tmp_path / "a.yaml").write_text(example.read_text())
    (tmp_path / "b.yaml").write_text(example.read_text())
    code, out, err = invoke("render", str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml"))
    assert (code, out) == (1, "")
    assert f'another MPIJob "tensorflow-benchmarks" with no namespace is at {tmp_path / "a.yaml"}' in err


def test_filename_flag_works_as_in_kubectl() -> None:
    example = str(
        Path(__file__).resolve().parents[3] / "examples" / "v1alpha2" / "tensorflow-benchmarks.yaml"
    )
    assert invoke("render", "-f", example) == invoke("render", example)
    assert invoke("validate", "--filename", example)[0] == 0


def test_version_command_matches_the_flag() -> None:
    import mpigen

    assert invoke("version") == (0, f"mpigen {mpigen.__version__}\n", "")
    assert invoke("--version")[1] == f"mpigen {mpigen.__version__}\n"


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_a_script_for_each_shell(shell: str) -> None:
    code, out, _ = invoke("completion", shell)
    assert code == 0 and "_MPIGEN_COMPLETE" in out


def test_completion_callbacks_work_with_piped_stdin(mpigen_command: list[str]) -> None:
    """The scripts call `mpigen` with no arguments; that must not be taken for a KRM function run."""
    env = {**os.environ, "_MPIGEN_COMPLETE": "bash_complete", "COMP_WORDS": "mpigen ren", "COMP_CWORD": "1"}
    done = subprocess.run(
        mpigen_command, stdin=subprocess.DEVNULL, env=env, capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout) == (0, "plain,render\n")


def test_piping_a_job_into_bare_mpigen_says_to_use_render(mpigen_command: list[str]) -> None:
    example = Path(__file__).resolve().parents[3] / "examples" / "v1alpha2" / "tensorflow-benchmarks.yaml"
    done = subprocess.run(
        mpigen_command, input=example.read_text(), capture_output=True, text=True, check=False
    )
    assert done.returncode == 1
    assert "use mpigen render (cat job.yaml | mpigen render)" in done.stderr


def test_help_shows_examples_and_options() -> None:
    code, out, _ = invoke("render", "--help")
    assert code == 0
    for text in (
        "Examples:",
        "--gpus-per-node",
        "--processing-units-per-node",
        "--processing-resource-type",
        "--kubectl-delivery-image",
        "--namespace",
        "mpioperator/kubectl-delivery:latest",
    ):
        assert text in out
    assert "Examples:" in invoke("--help")[1]


def test_console_script_runs_and_reports_version(mpigen_command: list[str]) -> None:
    done = subprocess.run([*mpigen_command, "--version"], capture_output=True, text=True, check=False)
    assert done.returncode == 0
    assert done.stdout.startswith("mpigen ")


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
    code, out, err = invoke("render", str(EXAMPLE))
    assert (code, out) == (3, "")
    assert "internal error: the output fails Kubernetes' schemas" in err
    assert 'Service/tensorflow-benchmarks-worker: spec.clusterIp: unknown field "clusterIp"' in err
    code, out, _ = invoke("render", "--no-validate", str(EXAMPLE))
    assert code == 0 and "clusterIp: None" in out


def test_kube_version_is_checked() -> None:
    code, _, err = invoke("render", "--kube-version", "1.24", str(EXAMPLE))
    assert code == 2 and "expected 1.25 to 1.37" in err
    assert invoke("render", "--kube-version", "v1.25.3", str(EXAMPLE))[0] == 0


def _run_on_a_terminal(argv: list[str], typed: bytes) -> tuple[int, str, str]:
    """Run `argv` with a pseudo-terminal as stdin, type `typed` and end it with Ctrl-D, as a user would."""
    import os
    import pty

    master, slave = pty.openpty()
    try:
        process = subprocess.Popen(argv, stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        os.close(slave)
        os.write(master, typed + b"\x04")  # canonical mode: a line, then Ctrl-D at a line's start is EOF
        out, err = process.communicate(timeout=120)
    finally:
        os.close(master)
    return process.returncode, out.decode(), err.decode()


@pytest.mark.parametrize("command", ["render", "validate"])
def test_on_a_terminal_stdin_is_announced_with_how_to_end_it(mpigen_command: list[str], command: str) -> None:
    typed = b"\n".join(job_yaml(name="a").encode().splitlines()) + b"\n"
    code, out, err = _run_on_a_terminal([*mpigen_command, command], typed)
    assert code == 0, err
    assert (
        err
        == f"mpigen {command}: reading from stdin (the terminal); end the input with Ctrl-D, or name a file: mpigen {command} job.yaml\n"
    )
    assert ("name: a-launcher" in out) if command == "render" else out == ""


@pytest.mark.parametrize("command", ["render", "validate"])
def test_piped_or_named_input_is_read_without_a_word(
    mpigen_command: list[str], command: str, tmp_path: Path
) -> None:
    (tmp_path / "job.yaml").write_text(job_yaml(name="a"))
    piped = subprocess.run(
        [*mpigen_command, command], input=job_yaml(name="a"), capture_output=True, text=True, check=False
    )
    assert (piped.returncode, piped.stderr) == (0, "")
    with open(tmp_path / "job.yaml") as stdin:
        redirected = subprocess.run(
            [*mpigen_command, command, "-"], stdin=stdin, capture_output=True, text=True, check=False
        )
    assert (redirected.returncode, redirected.stderr) == (0, "")
    code, _, err = _run_on_a_terminal([*mpigen_command, command, str(tmp_path / "job.yaml")], b"")
    assert (code, err) == (0, "")  # a named file on a terminal: stdin is not read, nothing said


@pytest.mark.parametrize("command", ["render", "validate"])
@pytest.mark.parametrize("namespace", ["a;b", "Prod", "a\nb", "-a", "a" * 64])
def test_namespace_flag_is_checked_as_its_annotation_is(tmp_path: Path, command: str, namespace: str) -> None:
    from mpigen.inputs import annotations as job_options

    path = tmp_path / "job.yaml"
    path.write_text(job_yaml())
    for args, given in (
        ([command, "-n", namespace, str(path)], None),
        ([command, "-n", namespace], path.read_text()),
    ):
        result = CliRunner().invoke(cli, args, input=given, catch_exceptions=False)
        assert result.exit_code == 2, result.output
        with pytest.raises(ValueError) as annotation:
            job_options.ANNOTATIONS["namespace"][1](namespace)
        assert str(annotation.value) in result.stderr
        assert result.stdout == ""


def test_every_option_value_of_the_python_api_is_checked_as_its_flag() -> None:
    import yaml

    import mpigen

    job = yaml.safe_load(job_yaml())
    for changes, message in (
        ({"namespace": "a;b"}, '"a;b" is not a valid namespace'),
        ({"namespace": "a\nb"}, '"a\\nb" is not a valid namespace'),
        ({"ssh_secret": "Bad Name"}, "must be a DNS subdomain"),
        ({"kubectl_delivery_image": "a b"}, "must be a container image reference"),
        ({"wait_timeout_seconds": -5}, "expected a whole number >= 1"),
        ({"gang_scheduler": "slurm"}, "must be one of volcano, scheduler-plugins"),
    ):
        with pytest.raises(mpigen.CompileError) as caught:
            mpigen.compile(job, mpigen.Options(**changes))
        assert message in str(caught.value), changes
    assert mpigen.compile(job, mpigen.Options(namespace="ml"))


@pytest.mark.parametrize(
    ("typed", "meant"), [("rendr", "render"), ("vaildate", "validate"), ("shema", "schema")]
)
def test_a_mistyped_command_is_answered_with_the_one_meant(typed: str, meant: str) -> None:
    code, out, err = invoke(typed, "job.yaml")
    assert (code, out) == (2, "")
    assert err.endswith(f"Error: No such command '{typed}' (did you mean '{meant}'?).\n"), err


def test_an_unknown_command_far_from_any_gets_no_guess() -> None:
    code, _, err = invoke("frobnicate")
    assert code == 2 and err.endswith("Error: No such command 'frobnicate'.\n"), err


@pytest.mark.parametrize(
    ("given", "meant"),
    [
        ("v1alpha2", "kubeflow.org/v1alpha2"),
        ("v2beta1", "kubeflow.org/v2beta1"),
        ("kubeflow.org/v1alpha3", "kubeflow.org/v1alpha2"),
    ],
)
def test_schema_names_the_api_version_meant(given: str, meant: str) -> None:
    code, out, err = invoke("schema", "--api-version", given)
    assert (code, out) == (2, "")
    assert f'"{given}" is not one of ' in err and err.endswith(f'(did you mean "{meant}"?)\n'), err


def test_bare_mpigen_on_a_terminal_prints_its_help_on_stdout(mpigen_command: list[str]) -> None:
    code, out, err = _run_on_a_terminal(mpigen_command, b"")
    assert (code, err) == (0, "")
    assert out.startswith("Usage: mpigen [OPTIONS] COMMAND [ARGS]...") and "render" in out


# `one_way`: a signal, in a call without paths, which click parses both ways (tests/unit/shells/test_streams.py
# says what the reference pass runs).
@pytest.mark.one_way
@pytest.mark.parametrize("command", ["render", "validate"])
def test_ctrl_c_at_the_stdin_prompt_ends_by_sigint_without_aborted(
    mpigen_command: list[str], command: str
) -> None:
    """Ctrl-C while mpigen waits for typed input: ended by SIGINT (a shell says 130), as a shell's own
    commands end, and not click's `Aborted!` and exit 1, which is also what invalid input exits with."""
    import os
    import pty
    import select
    import signal
    import time

    master, slave = pty.openpty()
    try:
        process = subprocess.Popen(
            [*mpigen_command, command],
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509 - as a terminal's job
        )
        os.close(slave)
        os.write(master, b"apiVersion: kubeflow.org/v2beta1\n")  # a line typed, the input not ended
        # Interrupt once the announcement is out (mpigen then waits in its read), however loaded the machine.
        assert process.stderr is not None
        announced = b""
        deadline = time.monotonic() + 60
        while not announced.endswith(b"\n") and time.monotonic() < deadline:
            if select.select([process.stderr], [], [], 1)[0]:
                chunk = os.read(process.stderr.fileno(), 4096)
                if not chunk:
                    break
                announced += chunk
        time.sleep(0.2)  # from the announcement's write to the read
        process.send_signal(signal.SIGINT)
        out, rest = process.communicate(timeout=60)
        err = announced + rest
    finally:
        os.close(master)
    assert process.returncode == -signal.SIGINT, err
    assert out == b""
    assert (
        err.decode()
        == f"mpigen {command}: reading from stdin (the terminal); end the input with Ctrl-D, or name a file: mpigen {command} job.yaml\n"
    )


@pytest.mark.parametrize("folder", ["examples", "examples/v2beta1", "examples/gitops"])
def test_the_example_folders_render_as_one_stream(folder: str) -> None:
    code, out, err = invoke("render", str(ROOT / folder))
    assert (code, err) == (0, ""), err
    assert "kind: MPIJob" not in out


def test_a_render_found_inside_a_directory_is_not_read_again(tmp_path: Path) -> None:
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "a.yaml").write_text(job_yaml(name="a"))
    (tmp_path / "notes.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\n")
    rendered = tmp_path / "rendered"
    code, _, err = invoke("render", "--output-dir", str(rendered), str(tmp_path / "jobs"))
    assert code == 0, err
    (rendered / "kustomization.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kept\n")
    code, out, err = invoke("render", str(tmp_path))
    assert (code, err) == (0, "")
    assert (
        out
        == invoke(
            "render",
            str(tmp_path / "jobs"),
            str(tmp_path / "notes.yaml"),
            str(rendered / "kustomization.yaml"),
        )[1]
    )
    # Named itself, the rendered directory is read as any other.
    code, out, err = invoke("render", str(rendered))
    assert code == 0 and "name: a-launcher" in out, err


def test_the_two_hooks_report_a_broken_job_once(tmp_path: Path) -> None:
    """pre-commit runs mpigen-validate and mpigen-check on one commit: the problem is listed once (by
    validate); the check names the file and how to see it."""
    import yaml

    hooks = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    (jobs / "a.yaml").write_text(job_yaml(name="a"))
    rendered = tmp_path / "rendered"
    assert invoke("render", "--output-dir", str(rendered), str(jobs))[0] == 0
    broken = jobs / "b.yaml"
    broken.write_text("apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: b\n")
    validate_args = hooks["mpigen-validate"]["entry"].split()[1:]
    check_args = hooks["mpigen-check"]["entry"].split()[1:]
    assert check_args == ["render", "--brief", "--check"]  # the hook's args follow: --check takes the first
    code, validate_out, _ = invoke(*validate_args, str(broken))
    assert code == 1 and validate_out == f"{broken}: line 4, column 1: did not find expected ',' or '}}'\n"
    code, out, check_err = invoke(*check_args, str(rendered), str(jobs))
    assert (code, out) == (1, "")
    assert check_err == f"{broken}: 1 problem, not rendered (mpigen validate {broken} lists it)\n"
    # Without --brief, render --check lists the problem itself, as render does.
    assert invoke("render", "--check", str(rendered), str(jobs))[2] == validate_out
