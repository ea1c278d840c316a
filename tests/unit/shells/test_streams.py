"""Every byte written or a non-zero exit, under the conditions CI machines really have: a file-size limit
(`ulimit -f`), a full file system (/dev/full, a small tmpfs), a reader that went away, closed standard
descriptors and signals, each made for real around `mpigen` run in a new process (mpigen.shells.streams).
Also the inputs such machines hold: unreadable directories, interrupted renders, UTF-16 files, calls of
many large files, and the files a pre-commit hook is handed that hold no MPIJob.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from jobs import V2BETA1, job_yaml

ROOT = Path(__file__).resolve().parents[3]
JOBS = "---\n".join(job_yaml(name=f"j{i}") for i in range(40))  # about 420 KB rendered
RESOURCE_LIST = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + "".join(
    "- " + job_yaml(name=f"j{i}").replace("\n", "\n  ").rstrip() + "\n" for i in range(10)
)


@pytest.fixture
def jobs_file(tmp_path: Path) -> Path:
    path = tmp_path / "jobs.yaml"
    path.write_text(JOBS)
    return path


def run(
    command: list[str],
    *args: str,
    unbuffered: bool = False,
    stdin: bytes | None = None,
    stdout: int | None = subprocess.PIPE,
    preexec: Callable[[], None] | None = None,
    env: dict[str, str] | None = None,
    **kwargs: object,
) -> subprocess.CompletedProcess[bytes]:
    environment = {**os.environ, **(env or {})}
    environment.pop("PYTHONUNBUFFERED", None)
    if unbuffered:
        environment["PYTHONUNBUFFERED"] = "1"
    return subprocess.run(
        [*command, *args],
        input=stdin,
        stdout=stdout,
        stderr=subprocess.PIPE,
        preexec_fn=preexec,
        env=environment,
        check=False,
        **kwargs,
    )  # type: ignore[call-overload,no-any-return]


def file_size_limit(limit: int) -> Callable[[], None]:
    """A real `ulimit -f`: RLIMIT_FSIZE in the child, SIGXFSZ as the child finds it (default: kill)."""

    def limit_size() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limit_size


def closing(*fds: int) -> Callable[[], None]:
    def close() -> None:
        for fd in fds:
            os.close(fd)

    return close


# Every command that writes output, in each of its forms; the limit is under what it writes.
COMMANDS: dict[str, tuple[list[str], int]] = {
    "render": (["render", "{jobs}"], 4096),
    "render -o json": (["render", "-o", "json", "{jobs}"], 4096),
    "validate": (["validate", "--summary", "{jobs}"], 16),
    "validate -o json": (["validate", "-o", "json", "{jobs}"], 4096),
    "validate -o junit": (["validate", "-o", "junit", "{jobs}"], 4096),
    "validate -o tap": (["validate", "-o", "tap", "{jobs}"], 1024),
    "schema": (["schema"], 4096),
    "krm": (["krm"], 4096),
    "kustomize-plugin run": (["kustomize-plugin", "run", "{job}"], 1024),
    "kustomize-plugin run (click)": (["kustomize-plugin", "run", "--", "{job}"], 1024),
}


def command_args(name: str, tmp_path: Path, jobs_file: Path) -> tuple[list[str], bytes | None]:
    job = tmp_path / "job.yaml"
    job.write_text(job_yaml())
    args = [arg.format(jobs=jobs_file, job=job) for arg in COMMANDS[name][0]]
    return args, (RESOURCE_LIST.encode() if name == "krm" else None)


# What the reference pass (tests/acceptance/test_reference.py) leaves out: the tests on whose way the
# switch changes nothing. The stand-ins make the output's bytes before its first write (the golden corpus
# proves them the same both ways) and every write goes through mpigen.shells.streams either way; what the
# switch does change on that way is who parses a `render` or `validate` call: click, where
# mpigen.shells._fast_args.plain_call read it. So the pass runs the tests that read their input's YAML (a
# stand-in's path) and those of a failing write or a closed descriptor under such a call, but not the
# tests of I/O that no stand-in takes part in (listing directories, staging files, signals) or whose
# calls are parsed the same way both ways (click's --summary, --check, --output-dir, `schema`,
# `kustomize-plugin install`, help; the click-free `krm` and `kustomize-plugin run CONFIG`, which stay
# click-free under the switch). Whether a call click parses says what plain_call's says is
# test_startup.py's (test_a_call_run_without_click_says_what_click_would).
#
# Here the pass runs `render`: PYTHONUNBUFFERED changes how Python writes, not what (the buffered half);
# the `-o json|junit|tap` forms write what no stand-in formats through the same writer as their
# command's plain form; `validate --summary`, `schema` and `kustomize-plugin run --` are click's both
# ways, `krm` and `kustomize-plugin run CONFIG` click-free both ways.
ONE_WAY_COMMANDS = {
    "render -o json",
    "validate",
    "validate -o json",
    "validate -o junit",
    "validate -o tap",
    "schema",
    "krm",
    "kustomize-plugin run",
    "kustomize-plugin run (click)",
}


@pytest.mark.parametrize(
    "unbuffered", [False, pytest.param(True, marks=pytest.mark.one_way)], ids=["buffered", "PYTHONUNBUFFERED"]
)
@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.one_way) if name in ONE_WAY_COMMANDS else name
        for name in COMMANDS
    ],
)
def test_a_short_write_is_an_exit_1_that_says_why(
    mpigen_command: list[str], tmp_path: Path, jobs_file: Path, name: str, unbuffered: bool
) -> None:
    args, stdin = command_args(name, tmp_path, jobs_file)
    whole = run(mpigen_command, *args, stdin=stdin)
    assert whole.returncode == 0, whole.stderr
    limit = COMMANDS[name][1]
    assert len(whole.stdout) > limit

    # a real file-size limit: the write past it fails with EFBIG (SIGXFSZ ignored), never a kill or exit 0
    out = tmp_path / "out"
    with out.open("wb") as handle:
        limited = run(
            mpigen_command,
            *args,
            unbuffered=unbuffered,
            stdin=stdin,
            stdout=handle.fileno(),
            preexec=file_size_limit(limit),
        )
    assert (limited.returncode, limited.stderr.decode()) == (
        1,
        "mpigen: cannot write the output to stdout: File too large (the file-size limit, ulimit -f)\n",
    )
    assert whole.stdout.startswith(out.read_bytes())

    # a full device
    with open("/dev/full", "wb") as full:
        filled = run(mpigen_command, *args, unbuffered=unbuffered, stdin=stdin, stdout=full.fileno())
    assert (filled.returncode, filled.stderr.decode()) == (
        1,
        "mpigen: cannot write the output to stdout: No space left on device\n",
    )

    # a reader that went away: quietly, by SIGPIPE, as cat or kubectl end
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        piped = run(mpigen_command, *args, unbuffered=unbuffered, stdin=stdin, stdout=write_end)
    finally:
        os.close(write_end)
    assert (piped.returncode, piped.stderr) == (-signal.SIGPIPE, b"")

    # stdout closed
    closed = run(mpigen_command, *args, unbuffered=unbuffered, stdin=stdin, preexec=closing(1))
    assert (closed.returncode, closed.stderr.decode()) == (
        1,
        "mpigen: cannot write the output: stdout is closed\n",
    )

    # stderr closed: the output is whole, the exit code still says how it went
    quiet = run(mpigen_command, *args, unbuffered=unbuffered, stdin=stdin, preexec=closing(2))
    assert (quiet.returncode, quiet.stdout) == (0, whole.stdout)


def test_closed_stdin_is_an_input_that_cannot_be_read(mpigen_command: list[str], jobs_file: Path) -> None:
    render = run(mpigen_command, "render", "-n", "ml", preexec=closing(0), stdin=None)
    assert (render.returncode, render.stdout) == (1, b"")
    assert render.stderr.decode() == "<stdin>: cannot read: stdin is closed; name the input files instead\n"
    krm = run(mpigen_command, "krm", preexec=closing(0))
    assert (krm.returncode, krm.stdout) == (1, b"")
    assert krm.stderr.decode() == "mpigen: cannot read the ResourceList on stdin: stdin is closed\n"
    # a file named with stdin closed: rendered as usual (no file it opens takes stdin's number)
    named = run(mpigen_command, "render", str(jobs_file), preexec=closing(0))
    assert named.returncode == 0 and named.stdout.startswith(b"apiVersion: v1\n")


# `one_way`: click writes the help both ways.
@pytest.mark.one_way
def test_help_on_a_full_device_is_an_exit_1(mpigen_command: list[str]) -> None:
    with open("/dev/full", "wb") as full:
        result = run(mpigen_command, "render", "--help", stdout=full.fileno())
    assert (result.returncode, result.stderr.decode()) == (
        1,
        "mpigen: cannot write the output to stdout: No space left on device\n",
    )


# A small tmpfs: a real full file system -----------------------------------------------------------


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "small"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip() or made.returncode}")
    yield mount
    subprocess.run(["umount", str(mount)], check=False)


# `one_way`: a render to a full stdout under the switch is test_a_short_write_is_an_exit_1_that_says_why's
# [render] (/dev/full), which the pass runs; click parses `--output-dir` both ways.
@pytest.mark.one_way
def test_a_full_file_system_is_an_exit_1_and_leaves_nothing_behind(
    mpigen_command: list[str], small_tmpfs: Path, jobs_file: Path
) -> None:
    with (small_tmpfs / "out.yaml").open("wb") as handle:
        result = run(mpigen_command, "render", str(jobs_file), stdout=handle.fileno())
    assert (result.returncode, result.stderr.decode()) == (
        1,
        "mpigen: cannot write the output to stdout: No space left on device\n",
    )
    rendered = small_tmpfs / "rendered"
    into_dir = run(mpigen_command, "render", "--output-dir", str(rendered), str(jobs_file))
    assert (
        into_dir.returncode == 1
        and b"No space left on device" in into_dir.stderr
        and b"internal error" not in into_dir.stderr
    )
    assert not rendered.exists() or not [p for p in rendered.iterdir() if p.name.startswith(".mpigen-new-")]


# Signals mid-render ---------------------------------------------------------------------------------


def staging(directory: Path) -> bool:
    try:
        return any(name.startswith(".mpigen-new-") for name in os.listdir(directory))
    except FileNotFoundError:
        return False


def niced() -> None:
    """Lower the render's priority; take SIGINT as a terminal sends it (a shell's background job, as a
    test run may be, starts with SIGINT ignored, and Python keeps it so)."""
    os.nice(15)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt_while_staging(command: list[str], directory: Path, signum: int) -> tuple[int, str]:
    """A render into `directory` sent `signum` once it has staged files: its exit status and stderr.
    Tries a few renders (each writes every file anew: jobs with no namespace, rendered into another
    one each time; the render runs niced, so the polling here sees it stage) until one is caught."""
    jobs_file = directory.parent / "no-namespace.yaml"
    jobs_file.write_text("---\n".join(job_yaml(name=f"j{i}", namespace=None) for i in range(60)))
    for attempt in range(8):
        process = subprocess.Popen(
            [*command, "render", "-n", f"ns{attempt}", "--output-dir", str(directory), str(jobs_file)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=niced,  # noqa: PLW1509 - no threads here
        )
        while process.poll() is None and not staging(directory):
            time.sleep(0.001)  # a busy loop here would take the CPU the niced render needs
        if process.poll() is None:
            process.send_signal(signum)
        _, stderr = process.communicate(timeout=120)
        if process.returncode != 0:
            return process.returncode, stderr.decode()
    pytest.fail("no render was caught while it staged its files")


# The signal tests are `one_way`: what they catch is the staging of files and the exit on a signal,
# which no stand-in takes part in, and the reference pass would repeat their many niced renders.
@pytest.mark.one_way
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_mid_render_leaves_no_staged_file(
    mpigen_command: list[str], tmp_path: Path, signum: int
) -> None:
    rendered = tmp_path / "rendered"
    code, stderr = interrupt_while_staging(mpigen_command, rendered, signum)
    assert code == -signum, stderr  # ended by the signal, Ctrl-C as SIGTERM: a shell reports 130 and 143
    assert "Aborted!" not in stderr
    assert "internal error" not in stderr and "Traceback" not in stderr
    assert not staging(rendered)


@pytest.mark.one_way
def test_a_render_killed_while_staging_is_noticed_by_check_and_cleaned_by_the_next(
    mpigen_command: list[str], tmp_path: Path, jobs_file: Path
) -> None:
    rendered = tmp_path / "rendered"
    code, _ = interrupt_while_staging(mpigen_command, rendered, signal.SIGKILL)
    assert code == -signal.SIGKILL and staging(rendered)
    args = ["render", "-n", "ml", "--output-dir", str(rendered), str(jobs_file)]
    first = run(mpigen_command, *args)
    assert first.returncode == 0, first.stderr
    for name in os.listdir(rendered):
        if name.endswith(".yaml"):
            (rendered / f".mpigen-new-{name[:16]}").write_text(
                "apiVersion: v1\n"
            )  # what a kill leaves, again
    check = run(mpigen_command, "render", "-n", "ml", "--check", str(rendered), str(jobs_file))
    assert check.returncode == 1 and b"+++ /dev/null" in check.stdout and b".mpigen-new-" in check.stdout
    again = run(mpigen_command, *args)
    assert again.returncode == 0 and not staging(rendered)
    assert run(mpigen_command, "render", "-n", "ml", "--check", str(rendered), str(jobs_file)).returncode == 0


# Unreadable directories -----------------------------------------------------------------------------


def without_root_override() -> None:
    """Run as the files' owner, not as a root that reads everything: drop CAP_DAC_OVERRIDE and
    CAP_DAC_READ_SEARCH from the bounding set, which a root exec then keeps to."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            os._exit(99)


# `one_way`: the directories are listed by mpigen.shells.common, which no stand-in takes part in; click
# parses `--output-dir` and `--check` both ways, and the one call plain_call reads (`--allow-empty DIR`)
# fails on the listing before any YAML is read.
@pytest.mark.one_way
def test_unreadable_directories_are_errors_never_skipped(mpigen_command: list[str], tmp_path: Path) -> None:
    jobs = tmp_path / "jobs"
    (jobs / "team").mkdir(parents=True)
    (jobs / "a.yaml").write_text(job_yaml(name="a"))
    (jobs / "team" / "b.yaml").write_text(job_yaml(name="b"))
    rendered = tmp_path / "rendered"
    assert run(mpigen_command, "render", "--output-dir", str(rendered), str(jobs)).returncode == 0
    (jobs / "team").chmod(0)
    rendered.chmod(0o755)
    try:
        probe = run(
            [sys.executable, "-c", f"import os; os.listdir({str(jobs / 'team')!r})"],
            preexec=without_root_override,
        )
        if probe.returncode == 0:
            pytest.skip("cannot take away the right to read a directory here")
        check = run(
            mpigen_command, "render", "--check", str(rendered), str(jobs), preexec=without_root_override
        )
        assert check.returncode == 1 and check.stdout == b""  # no diff that deletes team/b.yaml's render
        assert check.stderr.decode() == f"{jobs / 'team'}: cannot read the directory: Permission denied\n"
        allowed = run(
            mpigen_command, "render", "--allow-empty", str(jobs / "team"), preexec=without_root_override
        )
        assert (allowed.returncode, allowed.stdout) == (1, b"")
        (jobs / "team").chmod(0o755)
        rendered.chmod(0)
        for flag in ("--output-dir", "--check"):
            result = run(
                mpigen_command, "render", flag, str(rendered), str(jobs), preexec=without_root_override
            )
            assert result.returncode == 1 and f"{rendered}: Permission denied" in result.stderr.decode(), (
                result.stderr
            )
            assert b"internal error" not in result.stderr
    finally:
        (jobs / "team").chmod(0o755)
        rendered.chmod(0o755)


# `one_way`: click parses `kustomize-plugin install` both ways, and it reads and writes no YAML.
@pytest.mark.one_way
def test_install_never_replaces_a_file_it_did_not_write(mpigen_command: list[str], tmp_path: Path) -> None:
    home = tmp_path / "plugins"
    other = home / "kubeflow.org" / "v1alpha2" / "mpijob" / "MPIJob"
    other.parent.mkdir(parents=True)
    other.write_text("#!/bin/sh\necho another generator\n")
    result = run(mpigen_command, "kustomize-plugin", "install", "--plugin-home", str(home))
    assert result.returncode == 1
    assert (
        result.stderr.decode()
        == f"mpigen: {other}: exists and `mpigen kustomize-plugin install` did not write it; move it away to install mpigen there\n"
    )
    assert other.read_text() == "#!/bin/sh\necho another generator\n"
    other.unlink()
    assert run(mpigen_command, "kustomize-plugin", "install", "--plugin-home", str(home)).returncode == 0
    assert (
        run(mpigen_command, "kustomize-plugin", "install", "--plugin-home", str(home)).returncode == 0
    )  # its own: replaced


# Encodings and sizes --------------------------------------------------------------------------------


def test_utf16_with_a_byte_order_mark_is_read_as_kubectl_reads_it_and_utf32_is_refused(
    mpigen_command: list[str], tmp_path: Path
) -> None:
    utf8 = tmp_path / "job.yaml"
    utf8.write_text(job_yaml(V2BETA1))
    expected = run(mpigen_command, "render", str(utf8))
    for codec in ("utf-16", "utf-16-be"):
        path = tmp_path / f"{codec}.yaml"
        path.write_bytes((b"\xfe\xff" if codec == "utf-16-be" else b"") + job_yaml(V2BETA1).encode(codec))
        result = run(mpigen_command, "render", str(path))
        assert (result.returncode, result.stdout) == (0, expected.stdout), result.stderr
    marked = (
        tmp_path / "utf8-mark.yaml"
    )  # UTF-8 with a mark (Notepad's "UTF-8 with BOM"): the mark is dropped
    marked.write_bytes(b"\xef\xbb\xbf" + job_yaml(V2BETA1).encode())
    result = run(mpigen_command, "render", str(marked))
    assert (result.returncode, result.stdout) == (0, expected.stdout), result.stderr
    marked.write_bytes(b"\xef\xbb\xbfkind: MPIJob\nname: \xff\n")  # counted from after the mark
    refused = run(mpigen_command, "render", str(marked))
    assert (refused.returncode, refused.stderr.decode()) == (1, f"{marked}: not valid UTF-8 (byte 19)\n")
    utf32 = tmp_path / "utf32.yaml"
    utf32.write_bytes(job_yaml(V2BETA1).encode("utf-32"))
    refused = run(mpigen_command, "render", str(utf32))
    assert refused.returncode == 1
    assert (
        refused.stderr.decode()
        == f"{utf32}: the file is UTF-32 (little-endian), which kubectl does not read; save it as UTF-8\n"
    )
    # a render saved by Windows PowerShell 5 (`mpigen render job.yaml > out.yaml`: UTF-16 with a mark) is current
    committed = tmp_path / "out.yaml"
    committed.write_bytes(expected.stdout.decode().encode("utf-16"))
    assert run(mpigen_command, "render", "--check", str(committed), str(utf8)).returncode == 0


# `one_way`: click parses `--check` both ways, and a committed file is compared as text, never read as YAML.
@pytest.mark.one_way
def test_a_committed_file_too_large_is_named_too_large(mpigen_command: list[str], tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(job_yaml())
    committed = tmp_path / "out.yaml"
    committed.write_bytes(b"a: b\n" * (4 * 1024 * 1024))  # 20 MiB
    result = run(mpigen_command, "render", "--check", str(committed), str(job))
    assert result.returncode == 1 and "too large to be this render" in result.stderr.decode()
    rendered = tmp_path / "rendered"
    assert run(mpigen_command, "render", "--output-dir", str(rendered), str(job)).returncode == 0
    listed = min(name for name in os.listdir(rendered) if name.endswith(".yaml"))
    (rendered / listed).write_bytes(b"a: b\n" * (4 * 1024 * 1024))
    result = run(mpigen_command, "render", "--check", str(rendered), str(job))
    assert (
        result.returncode == 1
        and f"{rendered}/{listed}: input is larger than 16 MiB" in result.stderr.decode()
    )


def test_a_call_is_bounded_over_all_its_inputs(mpigen_command: list[str], tmp_path: Path) -> None:
    """Five 15 MiB files: 75 MiB in one call, more than the 64 MiB it reads. render refuses (naming the
    bound and the file that passes it, before reading that file's YAML); validate skips those that hold
    no MPIJob, as a pre-commit hook hands it any file; one that names an MPIJob is refused."""
    paths = []
    for n in range(5):
        path = tmp_path / f"big{n}.yaml"
        path.write_text("a: " + "x" * (15 * 1024 * 1024) + "\n")
        paths.append(str(path))
    render = run(mpigen_command, "render", *paths)
    assert (render.returncode, render.stdout) == (1, b"")
    assert (
        render.stderr.decode()
        == f"mpigen: {paths[4]}: the inputs up to this one hold more than 64 MiB, more than one call reads; give mpigen fewer files at a time\n"
    )
    validate = run(mpigen_command, "validate", "-o", "tap", *paths)
    assert validate.returncode == 0 and validate.stdout.decode().count("#skip") == 5, validate.stderr
    Path(paths[4]).write_text("kind: MPIJob\na: " + "x" * (15 * 1024 * 1024) + "\n")
    assert run(mpigen_command, "validate", *paths).returncode == 1


def test_the_bound_counts_documents_over_all_inputs(mpigen_command: list[str], tmp_path: Path) -> None:
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text("--- 1\n" * 60_000)
    second.write_text("--- 1\n" * 60_000)
    result = run(mpigen_command, "render", str(first), str(second))
    assert (result.returncode, result.stdout) == (1, b"")
    assert (
        result.stderr.decode()
        == f"mpigen: {second}: the inputs up to this one hold more than 100,000 documents, more than one call reads; give mpigen fewer files at a time\n"
    )


# The pre-commit hook --------------------------------------------------------------------------------


def hook_entry() -> list[str]:
    import yaml

    hooks = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    entry: str = hooks["mpigen-validate"]["entry"]
    assert entry.startswith("mpigen ")
    return entry.split()[1:]


def test_the_pre_commit_hook_passes_files_without_mpijobs_and_fails_a_broken_one(
    mpigen_command: list[str], tmp_path: Path
) -> None:
    import json

    playbook = tmp_path / "site.yml"
    playbook.write_text("- hosts: all\n  tasks:\n  - name: ping\n    ping: {}\n")
    array = tmp_path / "list.json"
    array.write_text('[1, "two", {"three": 3}]\n')
    lock = tmp_path / "package-lock.json"
    packages = {
        f"node_modules/p{i}": {"version": "1.0.0", "integrity": "sha512-" + "A" * 86} for i in range(150_000)
    }
    lock.write_text(json.dumps({"name": "app", "lockfileVersion": 3, "packages": packages}, indent=2))
    assert lock.stat().st_size > 16 * 1024 * 1024
    latin1 = tmp_path / "values.yaml"
    latin1.write_bytes("name: caf\xe9\n".encode("latin-1"))
    files = [str(playbook), str(array), str(lock), str(latin1)]
    passed = run(mpigen_command, *hook_entry(), *files)
    assert passed.returncode == 0, passed.stderr
    broken = tmp_path / "job.yaml"
    broken.write_text(job_yaml(slotsPerWorker=0))
    failed = run(mpigen_command, *hook_entry(), *files, str(broken))
    assert failed.returncode == 1 and f"{broken}: MPIJob/pi: spec.slotsPerWorker" in failed.stdout.decode()
    listed = tmp_path / "jobs-list.yaml"
    listed.write_text("- " + job_yaml().replace("\n", "\n  "))  # MPIJobs in a list: not passed over
    assert run(mpigen_command, *hook_entry(), str(listed)).returncode == 1


# `one_way`: click parses `--output-dir` and `--check` both ways; the files are written by
# mpigen.shells.outdir either way.
@pytest.mark.one_way
def test_no_file_is_opened_on_a_closed_descriptors_number(
    mpigen_command: list[str], tmp_path: Path, jobs_file: Path
) -> None:
    """With stdout and stderr closed, the files a render into a directory writes take other numbers: no
    message or output lands in them."""
    rendered = tmp_path / "rendered"
    result = run(
        mpigen_command, "render", "--output-dir", str(rendered), str(jobs_file), preexec=closing(1, 2)
    )
    assert result.returncode == 0
    expected = run(mpigen_command, "render", "--check", str(rendered), str(jobs_file))
    assert expected.returncode == 0, expected.stdout[:2000]
