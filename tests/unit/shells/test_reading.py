"""Every read bounded, special files refused where nobody named them, and an empty input an error."""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path

import pytest
import pythons
from click.testing import CliRunner

from mpigen.cli import cli
from mpigen.yaml.load import MAX_INPUT_BYTES

JOB = """\
apiVersion: kubeflow.org/v1alpha2
kind: MPIJob
metadata: {name: a, namespace: ml}
spec:
  mpiReplicaSpecs:
    Launcher: {template: {spec: {containers: [{name: l, image: i}]}}}
    Worker: {replicas: 1, template: {spec: {containers: [{name: w, image: i}]}}}
"""


def invoke(*args: str, stdin: object = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def run_limited(*args: str, stdin: object = subprocess.DEVNULL) -> subprocess.CompletedProcess[bytes]:
    """mpigen in a process that may not use more than 2 GiB of memory (a read without a bound fails
    there instead of filling the machine)."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    return subprocess.run(
        [*pythons.mpigen_argv(), *args],
        stdin=stdin,
        capture_output=True,
        preexec_fn=limit,
        timeout=300,
        check=False,
    )  # type: ignore[call-overload, no-any-return]


class Endless(io.RawIOBase):
    """A stream that never ends (`yes | mpigen render`); reading it whole is a bug."""

    def __init__(self) -> None:
        super().__init__()
        self.given = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0 or self.given > 4 * MAX_INPUT_BYTES:
            raise AssertionError("an unbounded read of an endless stream")
        self.given += size
        return b"y\n" * (size // 2) + b"y" * (size % 2)


def test_an_endless_stdin_is_refused_after_the_cap() -> None:
    stream = Endless()
    code, stdout, stderr = invoke("render", stdin=stream)
    assert (code, stdout, stderr) == (1, "", "<stdin>: input is larger than 16 MiB\n")
    assert stream.given <= MAX_INPUT_BYTES + 1


def test_yes_piped_into_render_is_refused() -> None:
    yes = subprocess.Popen(["yes"], stdout=subprocess.PIPE)
    try:
        proc = run_limited("render", stdin=yes.stdout)
    finally:
        yes.kill()
        yes.wait()
        assert yes.stdout is not None
        yes.stdout.close()
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, b"", b"<stdin>: input is larger than 16 MiB\n")


def test_dev_zero_is_read_with_the_same_bound() -> None:
    proc = run_limited("render", "/dev/zero")
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1,
        b"",
        b"/dev/zero: input is larger than 16 MiB\n",
    )


def test_a_named_fifo_is_read_like_a_file(tmp_path: Path) -> None:
    """`mpigen render <(kustomize build)` hands mpigen a pipe by name: it is read, not refused."""
    proc = subprocess.run(
        ["bash", "-c", f'{pythons.mpigen_python()} -m mpigen render <(printf "%s" "$JOB")'],
        env={**os.environ, "JOB": JOB},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0 and "kind: StatefulSet" in proc.stdout


def test_a_fifo_inside_an_input_directory_is_refused_not_waited_on(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(JOB)
    os.mkfifo(tmp_path / "b.yaml")
    proc = subprocess.run(
        [*pythons.mpigen_argv(), "render", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (proc.returncode, proc.stdout) == (1, "")
    assert (
        proc.stderr
        == f"{tmp_path}/b.yaml: not a regular file but a FIFO; mpigen reads only regular files here\n"
    )


def test_a_link_to_a_device_inside_an_input_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "zero.yaml").symlink_to("/dev/zero")
    proc = run_limited("render", str(tmp_path))
    assert proc.returncode == 1
    assert (
        proc.stderr.decode()
        == f"{tmp_path}/zero.yaml: not a regular file but a character device; mpigen reads only regular files here\n"
    )


def test_an_input_file_name_that_is_not_utf8_is_shown_escaped(tmp_path: Path) -> None:
    name = os.fsdecode(bytes(tmp_path) + b"/j\xff.yaml")
    Path(name).write_bytes(b"kind: [\n")
    proc = subprocess.run([*pythons.mpigen_argv(), "render", str(tmp_path)], capture_output=True, check=False)
    assert proc.returncode == 1 and proc.stderr.startswith(bytes(tmp_path) + b"/j\\xff.yaml: ")


# --- an empty input ------------------------------------------------------------------------------------


def test_an_empty_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text("# nothing yet\n---\n")
    code, stdout, stderr = invoke("render", str(tmp_path / "job.yaml"))
    assert (code, stdout) == (1, "")
    assert (
        stderr
        == f"mpigen: {tmp_path}/job.yaml: no objects in the input; nothing to render (--allow-empty accepts that)\n"
    )


def test_empty_stdin_is_an_error() -> None:
    assert invoke("render", stdin="") == (
        1,
        "",
        "mpigen: <stdin>: no objects in the input; nothing to render (--allow-empty accepts that)\n",
    )


def test_a_directory_without_yaml_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    code, _, stderr = invoke("render", str(tmp_path))
    assert (
        code == 1
        and stderr
        == f"mpigen: {tmp_path}: holds no .yaml, .yml or .json files; nothing to render (--allow-empty accepts that)\n"
    )


@pytest.mark.parametrize("output", ["yaml", "json"])
def test_allow_empty_renders_nothing(tmp_path: Path, output: str) -> None:
    code, stdout, stderr = invoke("render", "--allow-empty", "-o", output, str(tmp_path))
    assert (code, stderr) == (0, "")
    assert (
        stdout == ""
        if output == "yaml"
        else json.loads(stdout) == {"apiVersion": "v1", "kind": "List", "items": []}
    )


def test_allow_empty_with_output_dir_removes_mpigens_files(tmp_path: Path) -> None:
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "a.yaml").write_text(JOB)
    out = tmp_path / "out"
    assert invoke("render", "--output-dir", str(out), str(tmp_path / "jobs"))[0] == 0
    (out / "kustomization.yaml").write_text("resources: []\n")
    (tmp_path / "jobs" / "a.yaml").unlink()
    assert invoke("render", "--output-dir", str(out), str(tmp_path / "jobs"))[0] == 1
    assert invoke("render", "--allow-empty", "--output-dir", str(out), str(tmp_path / "jobs"))[0] == 0
    assert sorted(os.listdir(out)) == [".mpigen-manifest", "kustomization.yaml"]


def test_an_input_that_only_passes_through_is_not_empty() -> None:
    code, stdout, _ = invoke("render", stdin="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    assert code == 0 and "kind: ConfigMap" in stdout
