"""`mpigen render`: print the objects of every MPIJob, or write them one file per object
(`--output-dir`), or check such a render is current (`--check`).

Exit codes (mpigen.outcome): 0 success, 1 invalid input (every problem reported on stderr, nothing on
stdout), 2 usage error, 3 internal error (a bug: one line on stderr, never a traceback).

click is loaded only by `command()`: a call with paths and the common flags is run by `plain` without
it (mpigen.cli; importing click is a large share of such a render).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from mpigen.options import Options
from mpigen.outcome import EXIT_INVALID, Outcome
from mpigen.pipeline import process
from mpigen.records import Record
from mpigen.shells._fast_args import plain_call
from mpigen.shells.bounded import shown
from mpigen.shells.common import (
    InvalidInput,
    fail,
    read_inputs,
    refuse_empty,
    run_guarded,
    write_lines,
)
from mpigen.shells.streams import stdin_is_terminal, write_stdout
from mpigen.yaml.dump import FORMATS

if TYPE_CHECKING:
    from collections.abc import Callable

    import click


class Target(Record):
    """Where `render` puts its objects: stdout in a format, a directory (--output-dir), or a diff
    against a committed render (--check, with the raw arguments to show the update command)."""

    output: str
    output_dir: str | None = None
    check_path: str | None = None
    allow_empty: bool = False
    args: tuple[str, ...] = ()
    brief: bool = False  # each input with problems in one line, no warnings (the mpigen-check hook)


def plain(args: list[str]) -> Callable[[], int] | None:
    """`mpigen render ARGS` run without click (mpigen.cli) when mpigen.shells._fast_args.plain_call can read
    them: what the click command does with the same arguments; None when click must parse them."""
    call = plain_call(args, tuple(FORMATS))
    if call is None:
        return None

    def run() -> int:
        target = Target(call.output or "yaml", allow_empty=call.allow_empty)
        run_guarded(lambda: _render(call.paths, call.options, target))
        return 0

    return run


def command() -> click.Command:
    """The `render` command as click parses it (mpigen.shells.group loads it for any other call)."""
    # deferred: click only for a call mpigen.shells._fast_args cannot read (help, an unusual flag); the common
    # calls run without it
    import click

    # deferred: the flags' click options, with click, only for a call that needs parsing
    from mpigen.shells.flags import allow_empty_option, compile_options, filename_option, make_options

    class RenderCommand(click.Command):
        """`render`, which keeps its raw arguments: a stale `--check` shows the exact command that updates."""

        def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
            ctx.meta["mpigen.args"] = list(args)
            return super().parse_args(ctx, args)

    @click.command(cls=RenderCommand)
    @click.pass_context
    @click.argument("paths", nargs=-1, metavar="[PATH]...")
    @filename_option
    @click.option(
        "-o",
        "--output",
        type=click.Choice(list(FORMATS)),
        default="yaml",
        show_default=True,
        help="YAML stream, or JSON v1 List (with --output-dir: one .yaml or .json file per object).",
    )
    @click.option(
        "--output-dir",
        metavar="DIR",
        help="Write one file per object into DIR (named as `kustomize build -o` names them) and list them in DIR/.mpigen-manifest. Only files that manifest lists are replaced or removed; other files (kustomization.yaml, .gitkeep) are kept. Nothing is written on error.",
    )
    @click.option(
        "--check",
        "check_path",
        metavar="PATH",
        help="Render, print nothing but a unified diff, and exit 1 if PATH (a file of rendered YAML/JSON, or an --output-dir directory) is not exactly what would be rendered.",
    )
    @click.option(
        "--brief",
        is_flag=True,
        help="Name each input that has problems in one line (with the command that lists them) instead of listing every problem, and print no warnings: for the mpigen-check pre-commit hook, beside mpigen-validate, which lists them.",
    )
    @allow_empty_option
    @compile_options
    def render(
        ctx: click.Context,
        paths: tuple[str, ...],
        filenames: tuple[str, ...],
        output: str,
        output_dir: str | None,
        check_path: str | None,
        brief: bool,
        allow_empty: bool,
        **values: Any,
    ) -> None:
        """Print the Kubernetes objects for every MPIJob in PATH... (files, directories, or - for stdin).

        Directories are searched recursively for *.yaml, *.yml and *.json; with no PATH, stdin is read
        (on a terminal, end it with Ctrl-D). Documents that are not
        MPIJobs pass through unchanged, in place. A Kubeflow Trainer TrainJob (trainer.kubeflow.org/v1alpha1,
        MPI runtime) becomes the JobSet and objects Trainer v2.3.0 would create, its ClusterTrainingRuntime
        or TrainingRuntime taken from the same input (a runtime renders nothing of its own). If any input
        is invalid, every problem is reported on
        stderr and nothing is printed. An input with no objects at all is an error unless --allow-empty.

        \b
        Examples:
          mpigen render job.yaml | kubectl apply -f -
          cat job.yaml | mpigen render -n training
          mpigen render -o json jobs/ > all.json
          mpigen render --output-dir rendered/ jobs/
          mpigen render --check rendered/ jobs/     # in CI: exit 1 with a diff if rendered/ is stale
          mpigen render runtimes/ trainjob.yaml     # a TrainJob and its runtime
        """
        if output_dir and check_path:
            raise click.UsageError("--output-dir and --check cannot be used together")
        if check_path and not paths and not filenames and stdin_is_terminal():
            raise click.UsageError(
                f"--check needs the sources it renders, e.g. mpigen render --check {check_path} jobs/"
            )
        options = make_options(**values)
        paths = filenames + paths
        args = tuple(ctx.meta.get("mpigen.args", ()))
        target = Target(output, output_dir, check_path, allow_empty, args, brief)
        run_guarded(lambda: _render(paths, options, target))

    return render


def _render(paths: tuple[str, ...], options: Options, target: Target) -> None:
    inputs = read_inputs(paths)
    outcome = process(inputs, options)
    write_lines(_brief(inputs, outcome) if target.brief else outcome.lines())
    if outcome.exit_code:
        sys.exit(outcome.exit_code)
    if all(not documents for _, documents in inputs):
        _refuse_empty(paths, inputs, target)
    if target.output_dir:
        _write(outcome.objects, target.output, target.output_dir)
    elif target.check_path:
        _check(outcome.objects, target)
    else:
        write_stdout(FORMATS[target.output](outcome.objects))


def _brief(inputs: list[tuple[str, list[Any] | str]], outcome: Outcome) -> list[str]:
    """`--brief`: each input with problems named once, with how many and the command that lists them;
    no warnings. A bug (exit 3) is still shown whole."""
    if outcome.crash:
        return [outcome.crash]
    if not outcome.errors:
        return Outcome(invalid_output=outcome.invalid_output).lines()  # a bug's lines, without warnings
    unreadable = [source for source, documents in inputs if isinstance(documents, str)]
    counts: dict[str, int] = {}
    whole: list[str] = []
    for finding in outcome.errors:
        source = finding.source or next(
            (name for name in unreadable if finding.issue.message.startswith(f"{name}: ")), ""
        )
        if source:
            counts[source] = counts.get(source, 0) + 1
        else:
            whole.append(finding.text())
    return [
        f"{source}: {count} problem{'s' * (count > 1)}, not rendered (mpigen validate {source} lists {'them' if count > 1 else 'it'})"
        for source, count in counts.items()
    ] + whole


def _refuse_empty(paths: tuple[str, ...], inputs: list[tuple[str, list[Any] | str]], target: Target) -> None:
    """An input with no objects is a mistake (a wrong path, a forgotten argument) unless asked for:
    `kubectl apply` says "no objects passed to apply"."""
    if target.allow_empty:
        return
    if target.check_path and not paths:
        message = (
            f"mpigen: --check {target.check_path}: no sources given and stdin is empty; name the jobs it is "
            f"rendered from: mpigen render --check {target.check_path} jobs/"
        )
        raise InvalidInput([message])
    refuse_empty(paths, inputs, "render")


def _write(objects: list[dict[str, Any]], output: str, directory: str) -> None:
    # deferred: the GitOps layout and the directory writer only for --output-dir
    from mpigen import gitops
    from mpigen.shells import outdir

    def waiting() -> None:
        write_lines([f"mpigen: waiting for another render into {shown(directory)} to finish"])

    try:
        update = outdir.write_render(directory, gitops.files_for(objects, output), waiting)
    except gitops.RenderDirError as exc:
        raise InvalidInput([f"mpigen: {line}" for line in str(exc).splitlines()]) from None
    written = len(update.write) + len(update.unchanged)
    details = [
        f"{len(update.unchanged)} unchanged" if update.unchanged else "",
        f"{len(update.remove)} removed" if update.remove else "",
    ]
    detail = ", ".join(part for part in details if part)
    write_lines([f"mpigen: wrote {written} files to {shown(directory)}" + (f" ({detail})" if detail else "")])


def _check(objects: list[dict[str, Any]], target: Target) -> None:
    # deferred: the GitOps layout and the committed files' reader only for --check
    from mpigen import gitops
    from mpigen.shells import outdir

    path = target.check_path
    assert path is not None
    try:
        kind = outdir.existing_kind(path)
        if kind is None:
            command = gitops.update_command(target.args, path, not gitops.looks_like_file(path))
            raise InvalidInput([f"mpigen: --check {shown(path)}: does not exist; render it first: {command}"])
        if kind == "directory":
            committed, rendered = outdir.read_committed(path, gitops.files_for(objects, target.output))
            root = shown(path)
        else:
            text = FORMATS[target.output](objects)
            committed_text = outdir.read_committed_file(path, len(text.encode("utf-8", "surrogateescape")))
            if committed_text is None:
                command = gitops.update_command(target.args, path, False)
                fail(
                    [
                        f"mpigen: {shown(path)}: too large to be this render (larger than it could be in any encoding); it is stale; update it with: {command}"
                    ],
                    EXIT_INVALID,
                )
            committed, rendered, root = {shown(path): committed_text}, {shown(path): text}, ""
    except gitops.RenderDirError as exc:
        raise InvalidInput([f"mpigen: --check: {line}" for line in str(exc).splitlines()]) from None
    diff = gitops.diff_files(committed, rendered, root)
    if diff:
        write_stdout(diff)
        command = gitops.update_command(target.args, path, kind == "directory")
        fail([f"mpigen: {shown(path)} is stale; update it with: {command}"], EXIT_INVALID)
