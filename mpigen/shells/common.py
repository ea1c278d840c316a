"""What the command shells share, and the only I/O they share: reading inputs, running a command body
so that problems exit 1 and bugs exit 3 without a traceback, writing problems, and the compile flags.

Not a command itself: each command module in mpigen.shells imports this one, never another command.
The exit codes and every line about a bug come from mpigen.outcome. No click here: `mpigen render
PATH...` with no option runs without loading it (mpigen.cli); the flags are mpigen.shells.flags.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

from mpigen.outcome import EXIT_INTERNAL, EXIT_INVALID, internal_error
from mpigen.shells.bounded import ReadError, TooLarge, describe, names_mpijob, read_file, read_stream, shown
from mpigen.shells.streams import OutputError, stdin_bytes, stdin_is_terminal, write_stderr
from mpigen.yaml.load import (
    MAX_INPUT_BYTES,
    ForeignInput,
    InputError,
    count_values,
    decode,
    load_documents,
    may_hold_mpijob,
    past_call_bound,
)

INPUT_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"


class InvalidInput(Exception):
    """Input problems already formatted one per line; exit 1."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


class PastCallBound(InvalidInput):
    """The inputs of one call hold more than it reads (read_inputs); exit 1, nothing else said."""


def _rendered_files(directory: str) -> set[str]:
    """The files an `mpigen render --output-dir` wrote into `directory`, as its manifest lists them (none
    when the manifest cannot be read: then every file is read)."""
    # deferred: the GitOps layout (mpigen.gitops) only for a directory that holds an --output-dir render
    from mpigen.gitops import MANIFEST, parse_manifest

    try:
        return parse_manifest(
            read_file(os.path.join(directory, MANIFEST), 1 << 20, regular_only=True).decode()
        )
    except (ReadError, UnicodeDecodeError):
        return set()


def _expand(paths: tuple[str, ...]) -> Iterator[tuple[str, bool, str]]:
    """(path, named, problem): files as given (named=True); directories searched recursively for *.yaml,
    *.yml, *.json in sorted order (named=False: only regular files are read there). A directory that
    cannot be listed (the one named or one inside it) is a problem naming it, never skipped: a render
    without its files would be taken for the whole (and `--check` would call their render stale).

    Inside a named directory, the files of an `--output-dir` render (those its `.mpigen-manifest`
    lists) are not read: they are the render of jobs, not jobs, and read with them would write every
    object twice (`mpigen render .` in a repository that keeps `jobs/` and `rendered/`). Named itself,
    such a directory is read as any other."""
    for path in paths or (STDIN,):
        if path != STDIN and os.path.isdir(path):
            # deferred: the GitOps layout (mpigen.gitops) only for a directory given as a PATH
            from mpigen.gitops import MANIFEST

            found: list[tuple[str, str]] = []

            def unlisted(exc: OSError, found: list[tuple[str, str]] = found, top: str = path) -> None:
                where = exc.filename if exc.filename is not None else top
                found.append((where, f"{shown(where)}: cannot read the directory: {describe(exc)}"))

            for root, dirs, files in os.walk(path, onerror=unlisted):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                rendered = _rendered_files(root) if root != path and MANIFEST in files else set()
                found += [
                    (os.path.join(root, f), "")
                    for f in files
                    if f.endswith(INPUT_SUFFIXES) and f not in rendered
                ]
            yield from ((name, False, problem) for name, problem in sorted(found))
        else:
            yield path, True, ""


def _read(path: str, named: bool) -> tuple[str, bytes]:
    """A source name and at most MAX_INPUT_BYTES of its bytes (mpigen.shells.bounded)."""
    try:
        if path == STDIN:
            stream = stdin_bytes()
            if stream is None:
                raise ReadError("<stdin>: cannot read: stdin is closed; name the input files instead")
            if stdin_is_terminal():
                _say_reading_stdin()
            return "<stdin>", read_stream(stream, "<stdin>", MAX_INPUT_BYTES)
        return shown(path), read_file(path, MAX_INPUT_BYTES, regular_only=not named)
    except TooLarge:
        raise
    except ReadError as exc:
        raise InvalidInput([str(exc)]) from None


def _say_reading_stdin() -> None:
    """On a terminal, `mpigen render` with no PATH waits for typed input; say so, and how to end it or
    pass a file, instead of seeming to hang. Never said for a pipe or a file: scripts see nothing."""
    # deferred: click only for a command given no PATH on a terminal, which always runs under click
    # (mpigen.cli)
    import click

    ctx = click.get_current_context(silent=True)
    command = ctx.command_path if ctx else "mpigen render"
    write_lines(
        [
            f"{command}: reading from stdin (the terminal); end the input with Ctrl-D, or name a file: {command} job.yaml"
        ]
    )


def read_inputs(
    paths: tuple[str, ...], skip_foreign_past_bound: bool = False
) -> list[tuple[str, list[Any] | str]]:
    """Every input as (source name, documents), or (source name, problem) when it cannot be read.

    The call reads at most mpigen.yaml.load' MAX_CALL_BYTES, MAX_CALL_DOCUMENTS and MAX_CALL_VALUES over
    all its inputs (so its memory is bounded by those and one input's own bounds): an input that takes
    it past them is refused (InvalidInput), or with `skip_foreign_past_bound` (validate), when the input
    names no MPIJob, left unread as a ForeignInput (skipped)."""
    inputs: list[tuple[str, list[Any] | str]] = []
    used = (0, 0, 0)
    for path, named, problem in _expand(paths):
        if problem:
            inputs.append((shown(path), problem))
            continue
        try:
            source, data = _read(path, named)
            counted = (used[0] + len(data), used[1], used[2])
            documents = None if past_call_bound(counted) else load_documents(decode(data, source), source)
            if documents is not None:
                counted = (counted[0], counted[1] + len(documents), counted[2] + count_values(documents))
            if past := past_call_bound(counted):
                if skip_foreign_past_bound and not may_hold_mpijob(data.decode("latin-1")):
                    inputs.append(
                        (
                            source,
                            ForeignInput(
                                f"{source}: not read: the inputs before it reach what one call reads"
                            ),
                        )
                    )
                    continue
                message = f"mpigen: {source}: the inputs up to this one hold {past}, more than one call reads; give mpigen fewer files at a time"
                raise PastCallBound([message])
            assert documents is not None
            used = counted
            inputs.append((source, documents))
        except PastCallBound:
            raise
        except InvalidInput as exc:
            inputs.append((shown(path), exc.lines[0]))
        except (
            TooLarge
        ) as exc:  # a file too large for an MPIJob input may be some other tool's (a package-lock.json)
            foreign = path != STDIN and os.path.isfile(path) and not names_mpijob(path)
            inputs.append((shown(path), ForeignInput(str(exc)) if foreign else str(exc)))
        except InputError as exc:
            inputs.append((shown(path), str(exc) if exc.may_hold_mpijob else ForeignInput(str(exc))))
    return inputs


def refuse_empty(paths: tuple[str, ...], inputs: list[tuple[str, list[Any] | str]], verb: str) -> None:
    """An input with no objects at all is a mistake (a wrong path, a forgotten argument), as `kubectl
    apply` says "no objects passed to apply": InvalidInput, unless the caller was given --allow-empty.
    An input that could not be read is not empty: it has its own problem."""
    if any(documents for _, documents in inputs):
        return
    if not inputs:
        where = ", ".join(paths)
        raise InvalidInput(
            [
                f"mpigen: {where}: holds no .yaml, .yml or .json files; nothing to {verb} (--allow-empty accepts that)"
            ]
        )
    where = ", ".join(source for source, _ in inputs)
    raise InvalidInput(
        [f"mpigen: {where}: no objects in the input; nothing to {verb} (--allow-empty accepts that)"]
    )


def write_lines(lines: list[str]) -> None:
    """Each line on stderr, as click.echo writes it: ANSI escape sequences stripped off a stream that is
    no terminal (click is loaded for those only), so a message reads the same whether click runs or not;
    written through mpigen.shells.streams, as all output."""
    if sys.stderr is not None and any("\x1b" in line for line in lines) and not sys.stderr.isatty():
        # deferred: click only to strip ANSI escapes from messages when stderr is no terminal
        import click

        lines = [click.unstyle(line) for line in lines]
    write_stderr(lines)


def fail(lines: list[str], code: int) -> NoReturn:
    write_lines(lines)
    sys.exit(code)


def run_guarded(action: Callable[[], None]) -> None:
    """Run a command body: input problems exit 1, anything unexpected exits 3 without a traceback."""
    try:
        action()
    except InvalidInput as exc:
        fail(exc.lines, EXIT_INVALID)
    except OutputError as exc:  # stdout could not take the output: said, never a bug
        fail([str(exc)], EXIT_INVALID)
    except Exception as exc:  # the one place that turns bugs into exit 3 (click's own exits pass)
        if _is_click_exit(exc):
            raise
        fail([internal_error(exc)], EXIT_INTERNAL)


def _is_click_exit(exc: Exception) -> bool:
    """click's own exits and usage errors pass to click; none can be raised unless click is loaded."""
    click = sys.modules.get("click")
    return click is not None and isinstance(exc, (click.exceptions.Exit, click.ClickException))
