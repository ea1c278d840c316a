"""What the command shells share, and the only I/O they share: reading inputs, running a command body
so that problems exit 1 and bugs exit 3 without a traceback, writing problems, and the compile flags.

Not a command itself: each command module in mpigen.shells imports this one, never another command.
The exit codes and every line about a bug come from mpigen.outcome.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

import click

from mpigen.options import OPTION_TABLE, Options, OptionSpec
from mpigen.outcome import EXIT_INTERNAL, EXIT_INVALID, internal_error

INPUT_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"


class InvalidInput(Exception):
    """Input problems already formatted one per line; exit 1."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


def _expand(paths: tuple[str, ...]) -> Iterator[tuple[str, bool]]:
    """(path, named): files as given (named=True); directories searched recursively for *.yaml, *.yml,
    *.json in sorted order (named=False: only regular files are read there)."""
    for path in paths or (STDIN,):
        if path != STDIN and os.path.isdir(path):
            found = []
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                found += [os.path.join(root, f) for f in files if f.endswith(INPUT_SUFFIXES)]
            yield from ((name, False) for name in sorted(found))
        else:
            yield path, True


def _read(path: str, named: bool) -> tuple[str, bytes]:
    """A source name and at most MAX_INPUT_BYTES of its bytes (mpigen.shells.reading)."""
    from mpigen.documents import MAX_INPUT_BYTES
    from mpigen.shells.reading import ReadError, read_file, read_stream, shown

    try:
        if path == STDIN:
            if sys.stdin.isatty():
                _say_reading_stdin()
            return "<stdin>", read_stream(sys.stdin.buffer, "<stdin>", MAX_INPUT_BYTES)
        return shown(path), read_file(path, MAX_INPUT_BYTES, regular_only=not named)
    except ReadError as exc:
        raise InvalidInput([str(exc)]) from None


def _say_reading_stdin() -> None:
    """On a terminal, `mpigen render` with no PATH waits for typed input; say so, and how to end it or
    pass a file, instead of seeming to hang. Never said for a pipe or a file: scripts see nothing."""
    ctx = click.get_current_context(silent=True)
    command = ctx.command_path if ctx else "mpigen render"
    click.echo(
        f"{command}: reading from stdin (the terminal); end the input with Ctrl-D, or name a file: {command} job.yaml",
        err=True,
    )


def read_inputs(paths: tuple[str, ...]) -> list[tuple[str, list[Any] | str]]:
    """Every input as (source name, documents), or (source name, problem) when it cannot be read."""
    from mpigen.documents import ForeignInput, InputError, decode, load_documents
    from mpigen.shells.reading import shown

    inputs: list[tuple[str, list[Any] | str]] = []
    for path, named in _expand(paths):
        try:
            source, data = _read(path, named)
            inputs.append((source, load_documents(decode(data, source), source)))
        except InvalidInput as exc:
            inputs.append((shown(path), exc.lines[0]))
        except InputError as exc:
            inputs.append((shown(path), str(exc) if exc.may_hold_mpijob else ForeignInput(str(exc))))
    return inputs


def allow_empty_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """`--allow-empty`: an input with no objects is accepted (see `refuse_empty`)."""
    return click.option("--allow-empty", is_flag=True, help="Accept an input with no objects (an empty file or stdin, a directory with no YAML) and do nothing; without it that is an error.")(func)


def refuse_empty(paths: tuple[str, ...], inputs: list[tuple[str, list[Any] | str]], verb: str) -> None:
    """An input with no objects at all is a mistake (a wrong path, a forgotten argument), as `kubectl
    apply` says "no objects passed to apply": InvalidInput, unless the caller was given --allow-empty.
    An input that could not be read is not empty: it has its own problem."""
    if any(documents for _, documents in inputs):
        return
    if not inputs:
        where = ", ".join(paths)
        raise InvalidInput([f"mpigen: {where}: holds no .yaml, .yml or .json files; nothing to {verb} (--allow-empty accepts that)"])
    where = ", ".join(source for source, _ in inputs)
    raise InvalidInput([f"mpigen: {where}: no objects in the input; nothing to {verb} (--allow-empty accepts that)"])


def write_lines(lines: list[str]) -> None:
    for line in lines:
        click.echo(line, err=True)


def fail(lines: list[str], code: int) -> NoReturn:
    write_lines(lines)
    sys.exit(code)


def run_guarded(action: Callable[[], None]) -> None:
    """Run a command body: input problems exit 1, anything unexpected exits 3 without a traceback."""
    try:
        action()
    except InvalidInput as exc:
        fail(exc.lines, EXIT_INVALID)
    except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
        raise
    except Exception as exc:  # noqa: BLE001 - the one place that turns bugs into exit 3
        fail([internal_error(exc)], EXIT_INTERNAL)


def _kube_version(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    from mpigen.kube.versions import parse_kube_version

    try:
        return parse_kube_version(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


_DEFAULTS = {field.name: field.default for field in dataclasses.fields(Options)}


class _Checked(click.ParamType):  # type: ignore[type-arg]
    """A flag value checked by the parser of its `mpigen.dev/*` annotation (mpigen.job_options), so
    a flag and an annotation take exactly the same values and say the same about a bad one."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.name = "integer" if kind == "count" else "text"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from mpigen.job_options import PARSERS

        if not isinstance(value, str):
            return value  # a default, already of its type
        try:
            return PARSERS[self.kind](value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def _flag(spec: OptionSpec) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The click option of one entry of mpigen.options.OPTION_TABLE, its default the `Options` one."""
    if spec.kind == "switch":
        return click.option(f"--no-{spec.flag}", spec.field, flag_value=False, default=True, help=spec.help)
    default = _DEFAULTS[spec.field]
    checked = ("count", "image", "dns-subdomain")
    kind: Any = click.Choice(spec.choices) if spec.kind == "choice" else _Checked(spec.kind) if spec.kind in checked else None
    return click.option(
        *filter(None, (spec.short, f"--{spec.flag}")),
        spec.field,
        type=kind,
        default=default,
        show_default=default is not None,
        metavar=spec.metavar,
        callback={"kube-version": _kube_version}.get(spec.kind),
        help=spec.help,
    )


def filename_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """`-f/--filename PATH`, repeatable, as kubectl takes it; the same as a PATH argument."""
    return click.option("-f", "--filename", "filenames", multiple=True, metavar="PATH", help="An input file or directory, as with kubectl (repeatable; the same as a PATH argument).")(func)


def compile_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The options shared by every command that compiles (render, validate), from the one option table."""
    for spec in reversed(OPTION_TABLE):
        func = _flag(spec)(func)
    return func


def make_options(**values: Any) -> Options:
    """The `Options` of the compile flags' values (an empty text is unset where unset is the default)."""
    if values["scheduler_name"] and not values["gang_scheduler"]:
        raise click.UsageError("--scheduler-name needs --gang-scheduler")
    fields: dict[str, Any] = {}
    for spec in OPTION_TABLE:
        value = values[spec.field]
        fields[spec.field] = None if value == "" and _DEFAULTS[spec.field] is None else value
    return Options(**fields)
