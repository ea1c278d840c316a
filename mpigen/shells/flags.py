"""The compile flags of `render` and `validate`, made from the one option table (mpigen.options), and
the other flags those commands share; click's side of mpigen.shells.common.

Every flag's default is the `Options` default, so a command given no flag at all runs with `Options()`:
mpigen.cli runs `mpigen render PATH...` that way without loading click.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from mpigen.checks.kube.versions import parse_kube_version
from mpigen.inputs.annotations import parser
from mpigen.options import OPTION_TABLE, Options, OptionSpec, unmet_needs


def allow_empty_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """`--allow-empty`: an input with no objects is accepted (mpigen.shells.common.refuse_empty)."""
    return click.option(
        "--allow-empty",
        is_flag=True,
        help="Accept an input with no objects (an empty file or stdin, a directory with no YAML) and do nothing; without it that is an error.",
    )(func)


def _kube_version(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None

    try:
        return parse_kube_version(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


_DEFAULTS = Options._field_defaults


class _Checked(click.ParamType):  # type: ignore[type-arg]
    """A flag value checked by the parser of its `mpigen.dev/*` annotation (mpigen.inputs.annotations), so
    a flag and an annotation take exactly the same values and say the same about a bad one."""

    def __init__(self, spec: OptionSpec) -> None:
        self.spec = spec
        self.name = "integer" if spec.kind == "count" else "text"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value  # a default, already of its type
        try:
            return parser(self.spec)(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def _flag(spec: OptionSpec) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The click option of one entry of mpigen.options.OPTION_TABLE, its default the `Options` one."""
    if spec.kind == "switch":
        return click.option(f"--no-{spec.flag}", spec.field, flag_value=False, default=True, help=spec.help)
    default = _DEFAULTS[spec.field]
    # every value is checked by its annotation's parser (the kube version by its callback, which also
    # takes the default)
    kind: Any = (
        click.Choice(spec.choices)
        if spec.kind == "choice"
        else None
        if spec.kind == "kube-version"
        else _Checked(spec)
    )
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
    return click.option(
        "-f",
        "--filename",
        "filenames",
        multiple=True,
        metavar="PATH",
        help="An input file or directory, as with kubectl (repeatable; the same as a PATH argument).",
    )(func)


def compile_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The options shared by every command that compiles (render, validate), from the one option table."""
    for spec in reversed(OPTION_TABLE):
        func = _flag(spec)(func)
    return func


def make_options(**values: Any) -> Options:
    """The `Options` of the compile flags' values (an empty text is unset where unset is the default)."""
    unmet = unmet_needs(values)
    if unmet:
        flag, needed = unmet[0]
        raise click.UsageError(f"--{flag} needs --{needed}")
    fields: dict[str, Any] = {}
    for spec in OPTION_TABLE:
        value = values[spec.field]
        fields[spec.field] = None if value == "" and _DEFAULTS[spec.field] is None else value
    return Options(**fields)
