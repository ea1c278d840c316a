"""`mpigen krm` (and `mpigen` with no arguments and piped input): the KRM function's shell.

Reads a ResourceList on stdin, runs `mpigen.krm.protocol.process_resource_list` and writes the list on
stdout, problems on stderr; the exit code comes from the outcome. click is loaded only by `command()`:
`mpigen krm` and `mpigen` alone, with stdin piped in, run without it (mpigen.cli).
"""

from __future__ import annotations

import gc
import sys
from typing import IO, TYPE_CHECKING, BinaryIO, TextIO

from mpigen.krm import MAX_LIST_BYTES, NotAResourceList
from mpigen.krm.protocol import failure_outcome, process_resource_list
from mpigen.options import OPTION_TABLE
from mpigen.outcome import EXIT_INVALID, Finding, Outcome
from mpigen.shells.streams import OutputError, stdin_bytes, stdin_is_terminal, write_lines_to, write_to

if TYPE_CHECKING:
    from collections.abc import Callable

    import click


def run_function(stdin: IO[bytes] | None, stdout: IO[bytes] | None, stderr: TextIO | None) -> int:
    """Read a ResourceList from stdin, write the result to stdout and problems to stderr; the exit code.
    A stream that is None is closed (mpigen.shells.streams); one that fails is said on stderr (exit 1)."""
    try:
        if stdin is None:
            raise OSError("stdin is closed")
        data = stdin.read(MAX_LIST_BYTES + 1)  # at most one byte over: more is refused unread
    except OSError as exc:
        write_lines_to(stderr, [f"mpigen: cannot read the ResourceList on stdin: {exc.strerror or exc}"])
        return EXIT_INVALID
    # The function builds trees of plain data, hundreds of thousands of objects for a large list, that
    # live until the output is written and that reference counting frees: the cyclic collector's passes
    # over them cost about a tenth of the run and find nothing, so it is paused while the function runs.
    collecting = gc.isenabled()
    gc.disable()
    try:
        output, outcome = process_resource_list(data)
    except NotAResourceList as exc:
        output, outcome = "", Outcome(errors=[Finding.line(str(exc))])
    except Exception as exc:  # noqa: BLE001 - a bug: exit 3 with the input echoed, never a traceback
        output, outcome = failure_outcome(data, exc)
    finally:
        if collecting:
            gc.enable()
    lines, code = outcome.lines(), outcome.exit_code
    if output:
        try:
            write_to(stdout, output.encode("utf-8"), "stdout")
        except OutputError as exc:
            lines, code = [*lines, str(exc)], code or EXIT_INVALID
    write_lines_to(stderr, lines)
    return code


def plain(args: list[str]) -> Callable[[], int] | None:
    """`mpigen krm` with stdin piped in, run without click (mpigen.cli); None when click must parse the
    call (an argument, or stdin on a terminal, which click refuses with a usage message)."""
    if args or stdin_is_terminal():
        return None
    return lambda: run_function(stdin_bytes(), _binary(sys.stdout), sys.stderr)


def _binary(stream: TextIO | None) -> BinaryIO | None:
    return stream.buffer if stream is not None else None


def command() -> click.Command:
    """The `krm` command as click parses it (mpigen.shells.group loads it for any other call)."""
    # deferred: click only for `mpigen krm --help` or a call it must parse; kustomize's and kpt's calls run
    # without it
    import click

    @click.command(context_settings={"max_content_width": 100}, epilog=_options_help())
    @click.pass_context
    def krm(ctx: click.Context) -> None:
        """Run as a KRM function: read a ResourceList on stdin, write it back with MPIJobs compiled.

        `mpigen` with no arguments and piped input does the same, so kustomize and kpt can name the
        executable itself. Every MPIJob among the items is replaced, in place, by its objects
        (transformer); an MPIJob given as the functionConfig adds its objects (generator). Other items,
        their comments and annotations pass through unchanged; items marked
        config.kubernetes.io/local-config are never compiled. Options (listed below) are set for every
        job by a ConfigMap functionConfig (kpt: `-- key=value`, a Kptfile's `configMap:`) or in the
        `spec` of a Compile functionConfig (kustomize), and per job by `mpigen.dev/<key>` annotations,
        which win (for example mpigen.dev/gang-scheduler: volcano).

        Problems are written as results[] (severity, resourceRef, field.path, file) and on stderr; the
        items then come back unchanged and the exit code is 1 (3 for a bug in mpigen).

        \b
        Generator (kustomization.yaml: `generators: [job.yaml]`), job.yaml:
          apiVersion: kubeflow.org/v1alpha2
          kind: MPIJob
          metadata:
            name: pi
            annotations:
              config.kubernetes.io/function: |
                exec:
                  path: mpigen
          spec: ...
        \b
        Transformer (kustomization.yaml: `resources: [job.yaml]`, `transformers: [mpigen.yaml]`),
        mpigen.yaml:
          apiVersion: mpigen.dev/v1
          kind: Compile
          metadata:
            name: mpigen
            annotations:
              config.kubernetes.io/function: |
                exec:
                  path: mpigen
        \b
          kustomize build --enable-alpha-plugins --enable-exec .
          kpt fn eval --exec mpigen . -- target=jobset queue=team-a
          kpt fn eval --image localhost/mpigen:VERSION . -- target=jobset
        """
        # sys's streams, not click.get_binary_stream (deprecated in click 8.5); click's test runner swaps them.
        if stdin_is_terminal():
            raise click.UsageError("reads a KRM ResourceList on stdin; pipe one in (see --help)")
        ctx.exit(run_function(stdin_bytes(), _binary(sys.stdout), sys.stderr))

    return krm


def _options_help() -> str:
    """The keys a functionConfig takes (mpigen.krm.config), from the one option table, for `--help` (which
    `kpt fn doc --image` shows: kpt v1.0.0-beta.49 commands/fn/doc/cmdfndoc.go runs the image with --help)."""
    width = max(len(spec.flag) for spec in OPTION_TABLE)
    rows = [
        f"  {spec.flag.ljust(width)}  {spec.summary}"
        + (f" One of: {', '.join(spec.choices)}." if spec.choices else "")
        for spec in OPTION_TABLE
    ]
    return "\b\nFunction options (values are strings; an unknown key is an error):\n" + "\n".join(rows)
