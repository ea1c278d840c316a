"""`mpigen validate`: check inputs and the output they would produce, print a report, no manifests.

click is loaded only by `command()`: a call with paths and the common flags is run by `plain` without
it (mpigen.cli), as render does.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from mpigen.options import Options
from mpigen.per_resource import (
    FORMATS,
    Report,
    add_collisions,
    check_documents,
    collect_runtimes,
    summary_line,
)
from mpigen.shells._fast_args import plain_call
from mpigen.shells.common import read_inputs, refuse_empty, run_guarded
from mpigen.shells.streams import write_stdout

if TYPE_CHECKING:
    from collections.abc import Callable

    import click


def plain(args: list[str]) -> Callable[[], int] | None:
    """`mpigen validate ARGS` run without click (mpigen.cli) when mpigen.shells._fast_args.plain_call can
    read them: what the click command does with the same arguments; None when click must parse them."""
    call = plain_call(args, tuple(FORMATS))
    if call is None:
        return None

    def run() -> int:
        run_guarded(
            lambda: _validate(call.paths, call.output or "text", False, call.allow_empty, call.options)
        )
        return 0

    return run


def command() -> click.Command:
    """The `validate` command as click parses it (mpigen.shells.group loads it for any other call)."""
    # deferred: click only for a call mpigen.shells._fast_args cannot read (help, an unusual flag); the common
    # calls run without it
    import click

    # deferred: the flags' click options, with click, only for a call that needs parsing
    from mpigen.shells.flags import allow_empty_option, compile_options, filename_option, make_options

    @click.command()
    @click.argument("paths", nargs=-1, metavar="[PATH]...")
    @filename_option
    @click.option(
        "-o",
        "--output",
        type=click.Choice(list(FORMATS)),
        default="text",
        show_default=True,
        help="One line per problem, or a report of every resource shaped as kubeconform's: JSON, JUnit XML or TAP.",
    )
    @click.option("--summary", is_flag=True, help="text: end with a summary line (counts per status).")
    @allow_empty_option
    @compile_options
    def validate(
        paths: tuple[str, ...],
        filenames: tuple[str, ...],
        output: str,
        summary: bool,
        allow_empty: bool,
        **values: Any,
    ) -> None:
        """Check every MPIJob in PATH... and every object it would produce, without printing manifests.

        Inputs are checked against mpigen's input schemas and rules; the objects they would produce against
        Kubernetes' strict schemas for --kube-version. Exit 0 when everything is valid, 1 when an input is
        invalid or unreadable, 3 when mpigen would produce an invalid object (a bug). Documents that are
        not MPIJobs are reported as skipped, and so are files that cannot be read as YAML but name no
        MPIJob (GitHub workflows, Helm templates), so a pre-commit hook can pass every YAML file. An
        input with no objects at all (an empty file or stdin, a directory with no YAML) is an error, as
        for render, unless --allow-empty.

        \b
        The JSON report has kubeconform's shape:
          {"resources": [{"filename", "kind", "name", "version", "status", "msg",
                          "validationErrors": [{"path", "msg"}]}],
           "summary": {"valid", "invalid", "errors", "skipped"}}
        with status statusValid, statusInvalid, statusError or statusSkipped and JSON Pointer paths.
        -o junit (one <testsuite> per file, one <testcase> per resource: <failure>, <error> or
        <skipped>) and -o tap (TAP version 13: `ok N - FILE (Kind/name)`, `not ok N - ...: message`,
        `ok N #skip - ...`, then the plan `1..N`) are kubeconform's other two reports, for CI.

        \b
        Examples:
          mpigen validate jobs/
          mpigen validate -o json --kube-version 1.30 job.yaml | jq '.summary'
          mpigen validate -o junit jobs/ > mpigen-report.xml
        """
        paths = filenames + paths
        run_guarded(lambda: _validate(paths, output, summary, allow_empty, make_options(**values)))

    return validate


def _validate(
    paths: tuple[str, ...], output: str, summary: bool, allow_empty: bool, options: Options
) -> None:
    report = Report()
    inputs = read_inputs(paths, skip_foreign_past_bound=True)
    if not allow_empty:
        refuse_empty(paths, inputs, "validate")
    runtimes = collect_runtimes(inputs, options)
    for source, documents in inputs:
        check_documents(report, source, documents, options, runtimes)
    add_collisions(report)
    text = FORMATS[output](report)
    if output == "text" and summary:
        text += summary_line(report) + "\n"
    write_stdout(text)
    sys.exit(report.exit_code)
