"""`mpigen completion bash|zsh|fish`: print the shell completion script, as kubectl, helm and kustomize do.

The script calls `mpigen` back with `_MPIGEN_COMPLETE` set (click's shell completion); `mpigen.cli.main`
never takes such a call for a KRM function run, whatever stdin is.
"""

from __future__ import annotations

import click

from mpigen.cli import cli

SHELLS = ("bash", "zsh", "fish")


@click.command(context_settings={"max_content_width": 100})
@click.argument("shell", type=click.Choice(SHELLS))
def completion(shell: str) -> None:
    """Print the completion script for SHELL (bash, zsh or fish).

    \b
    Examples:
      source <(mpigen completion bash)                                  # bash, this shell
      mpigen completion zsh > "${fpath[1]}/_mpigen"                     # zsh
      mpigen completion fish > ~/.config/fish/completions/mpigen.fish   # fish
    """
    # deferred: click's completion scripts only for `mpigen completion`, not for `mpigen --help` listing it
    from click.shell_completion import get_completion_class

    completer = get_completion_class(shell)
    assert completer is not None  # every name in SHELLS is one of click's
    click.echo(completer(cli, {}, "mpigen", "_MPIGEN_COMPLETE").source())
