"""The command line's entry point (`mpigen`, `python -m mpigen`): runs the calls that need no parsing
without click, and hands every other one to the root group (mpigen.shells.group, click).

A call needs no parsing by click when it names `render` or `validate` with paths and flags whose reading
is certain (mpigen.shells._fast_args.plain_call: the compile flags, `-f`, `-o`, `--allow-empty`, each
valid and given once), `krm` with piped input, or `kustomize-plugin run CONFIG` (the exec plugin as
kustomize runs it). That is how kustomize, pre-commit hooks and scripts call mpigen, and importing click is a large share of such a call's start-up. Anything else (`--help`,
`--`, another flag, a value a flag refuses, a path that starts with `-`, no path, shell completion)
goes to click, which owns every message about usage; a command run either way writes the same bytes
and exits with the same code.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import os
import sys

TYPE_CHECKING = False  # typing itself loads after the collector is off (main)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn

    from mpigen.shells.group import cli

__all__ = ["cli", "main"]

COMPLETE_VAR = "_MPIGEN_COMPLETE"  # set by the completion scripts when they call mpigen back

# The commands that may run without click: name -> module, whose `plain(args)` gives the call's run, or
# None when click must parse the arguments.
PLAIN_COMMANDS = {
    "render": "mpigen.shells.render",
    "validate": "mpigen.shells.validate",
    "krm": "mpigen.shells.krm",
    "kustomize-plugin": "mpigen.shells.kustomize_plugin",
    "argocd": "mpigen.shells.argocd",
}


def _plain_run(args: list[str]) -> Callable[[], int] | None:
    """The click-free run of `mpigen ARGS`, or None when click must parse them."""
    if COMPLETE_VAR in os.environ or not args or args[0] not in PLAIN_COMMANDS:
        return None
    run: Callable[[], int] | None = importlib.import_module(PLAIN_COMMANDS[args[0]]).plain(args[1:])
    return run


def main() -> None:
    # One command's process lives for a moment and makes no reference cycles worth collecting (the peak
    # memory of a 1,000-job render is the same without the collector), while the collector's passes
    # over everything imported cost several percent of a one-job render: reference counting frees all.
    gc.disable()
    # deferred: loaded after gc.disable(), so that importing the shells (and all they import) runs without
    # collector passes
    from mpigen.shells import streams

    streams.prepare()  # closed standard descriptors held, SIGXFSZ ignored, SIGTERM and SIGINT unwinding
    args = sys.argv[1:]
    if not args and sys.stdin is not None and not sys.stdin.isatty() and COMPLETE_VAR not in os.environ:
        # No arguments and piped input: run as a KRM function, which is how kustomize
        # (`config.kubernetes.io/function: {exec: {path: mpigen}}`) and kpt call an executable.
        args = ["krm"]
    elif not args and COMPLETE_VAR not in os.environ:
        # Bare `mpigen` on a terminal: its help, on stdout with exit 0, as kubectl and helm answer.
        args = ["--help"]
    try:
        code = _run(args)
    except KeyboardInterrupt:  # raised before streams.prepare took SIGINT over: end as quietly
        code = 130
    except streams.Terminated as exc:
        streams.finish(0)
        streams.end_by_signal(exc.args[0])
    except OSError as exc:  # click's own writes (help, usage) to a stdout that cannot take them
        code = streams.stdout_failed(exc)
    _exit(streams.finish(code))


def _run(args: list[str]) -> int:
    """Run `mpigen ARGS`, without click when it need not parse them; the exit code."""
    run = _plain_run(args)
    try:
        if run is None:
            # deferred: click and every command's module load only for a call that needs parsing (help, usage
            # errors, other commands)
            from mpigen.shells.group import cli

            cli(args=args, prog_name="mpigen")
            return 0
        return run()
    except SystemExit as exc:  # a command's own exit (sys.exit(1) after its problems), and click's
        if exc.code is not None and not isinstance(exc.code, int):
            raise
        return exc.code or 0


def _exit(code: int) -> NoReturn:
    """Exit once the output is written (mpigen.shells.streams.finish), skipping the interpreter's
    teardown (freeing every module and object one by one: about a tenth of a one-job render) when
    nothing waits for it: no function registered to run at exit (coverage, logging, a test's recorder)."""
    if atexit._ncallbacks() == 0:
        os._exit(code)
    sys.exit(code)


def __getattr__(name: str) -> Any:
    # `from mpigen.cli import cli`: the root group, loaded (with click) on first use.
    if name == "cli":
        # deferred: click and the root group load only for `from mpigen.cli import cli`, never for a plain
        # call
        from mpigen.shells.group import cli

        return cli
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
