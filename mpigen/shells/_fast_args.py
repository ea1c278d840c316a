"""The common calls read without click: a stand-in for click's parsing (mpigen.reference.STAND_INS).

`plain_call` reads `mpigen render|validate PATH...` with the compile flags, `-f`, `-o` and `--allow-empty`
as click would, where that is certain, and declines everything else (click then parses the call and owns
every message about it). tests/unit/shells/test_startup.py holds it to what click says.
"""

from __future__ import annotations

from typing import Any

from mpigen.inputs.annotations import parser
from mpigen.options import OPTION_TABLE, Options, unmet_needs
from mpigen.records import Record
from mpigen.reference import stand_in
from mpigen.shells.common import STDIN


class PlainCall(Record):
    """A `render` or `validate` call read without click (mpigen.cli): its paths (`-f` ones first, as
    click's command joins them), options, `--allow-empty` and `-o` (None: the command's default)."""

    paths: tuple[str, ...]
    options: Options
    allow_empty: bool
    output: str | None


@stand_in
def plain_call(args: list[str], outputs: tuple[str, ...]) -> PlainCall | None:
    """`args` read as click reads them, where that is certain: paths, `-f/--filename PATH`, `-o/--output`
    (one of `outputs`), `--allow-empty` and the compile flags of mpigen.options.OPTION_TABLE, each at
    most once, with a value its flag takes (`--flag VALUE` or `--flag=VALUE`). Anything else (help,
    `--`, an unknown flag, a value the flag refuses or that starts with `-`, an empty one, a flag given
    twice, a path starting with `-`, no path at all, --scheduler-name without --gang-scheduler) gives
    None: click parses that call and owns every message about it."""
    specs = {f"--{spec.flag}": spec for spec in OPTION_TABLE if spec.kind != "switch"}
    specs.update({spec.short: spec for spec in OPTION_TABLE if spec.short})
    switches = {f"--no-{spec.flag}": spec.field for spec in OPTION_TABLE if spec.kind == "switch"}
    paths: list[str] = []
    filenames: list[str] = []
    fields: dict[str, Any] = {}
    allow_empty = False
    output = None
    position = 0
    while position < len(args):
        arg = args[position]
        position += 1
        if arg == STDIN:
            return None
        if not arg.startswith("-"):
            paths.append(arg)
            continue
        name, equals, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name in switches or name == "--allow-empty":
            if equals or (name in switches and switches[name] in fields):
                return None
            if name == "--allow-empty":
                allow_empty = True
            else:
                fields[switches[name]] = False
            continue
        if not equals:
            if position == len(args):
                return None
            value = args[position]
            position += 1
        if not value or value.startswith("-"):
            return None
        if name in ("-f", "--filename"):
            filenames.append(value)
        elif name in ("-o", "--output"):
            if output is not None or value not in outputs:
                return None
            output = value
        else:
            spec = specs.get(name)
            if spec is None or spec.field in fields:
                return None
            try:
                fields[spec.field] = parser(spec)(value)
            except ValueError:
                return None
    if not paths and not filenames:
        return None  # stdin, which click prompts for on a terminal
    if unmet_needs(fields):
        return None
    return PlainCall((*filenames, *paths), Options(**fields), allow_empty, output)
