"""The root group of the command line as click parses it: `mpigen`, which loads each command's module
only when it runs. mpigen.cli hands it every call it does not run without click.

Each command is one module in mpigen.shells; this module knows them by name only, so `mpigen render`
inside a kustomize build does not pay for the KRM, validate or schema code. The exit codes are
mpigen.outcome's: 0 success, 1 invalid input, 2 usage error, 3 internal error.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from mpigen import __version__


class LazyGroup(click.Group):
    """A command group whose commands live in their own modules, imported only when run (start-up time:
    `mpigen render` inside a kustomize build must not pay for the KRM or schema code)."""

    def __init__(self, *args: Any, lazy: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """click's, with a "did you mean" for a mistyped command (`mpigen rendr`)."""
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            # deferred: difflib only for the "did you mean" of a mistyped command
            import difflib

            near = difflib.get_close_matches(name, self.list_commands(ctx), n=1)
            if near:
                ctx.fail(f"No such command {name!r} (did you mean {near[0]!r}?).")
        return super().resolve_command(ctx, args)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy and cmd_name not in self.commands:
            module, _, attr = self.lazy[cmd_name].partition(":")
            found = getattr(importlib.import_module(module), attr)
            # a command, or the function that makes it (the commands that also run without click)
            self.add_command(found if isinstance(found, click.Command) else found(), cmd_name)
        return super().get_command(ctx, cmd_name)


# Every command: name -> "module:attribute" in mpigen.shells.
LAZY_COMMANDS = {
    "render": "mpigen.shells.render:command",
    "validate": "mpigen.shells.validate:command",
    "convert": "mpigen.shells.convert:command",
    "schema": "mpigen.shells.schema:schema",
    "krm": "mpigen.shells.krm:command",
    "kustomize-plugin": "mpigen.shells.kustomize_plugin:command",
    "completion": "mpigen.shells.completion:completion",
    "exec-policy": "mpigen.shells.exec_policy:command",
    "argocd": "mpigen.shells.argocd:command",
}


@click.group(
    cls=LazyGroup,
    lazy=LAZY_COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, "--version", prog_name="mpigen", message="%(prog)s %(version)s")
def cli() -> None:
    """Compile Kubeflow MPIJobs into plain Kubernetes manifests.

    \b
    Supported: kubeflow.org/v2beta1 (mpi-operator v0.8.2; Open MPI 4 and 5, Intel MPI, MPICH;
    SSH, with the key pair generated in the cluster or --ssh-secret), kubeflow.org/v1
    (training-operator 1.9; Open MPI, and Intel MPI's Hydra, over kubectl exec) and
    kubeflow.org/v1alpha1, v1alpha2 (mpi-operator v0.2.0; Open MPI over kubectl exec), and
    Kubeflow Trainer v2.3.0 TrainJobs (trainer.kubeflow.org/v1alpha1) with an MPI runtime.

    Every option of render and validate can also be set on a job as an annotation
    `mpigen.dev/<option>` (e.g. mpigen.dev/gang-scheduler: volcano), which wins over the flag.
    With no arguments and piped input, mpigen runs as a KRM function (see `mpigen krm --help`).

    \b
    Examples:
      mpigen render job.yaml | kubectl apply -f -
      mpigen render -o json jobs/ > manifests.json
      mpigen validate -o json jobs/
      mpigen convert job.yaml > trainjob.yaml     # MPIJob -> Kubeflow Trainer v2 TrainJob + runtime
      mpigen render --output-dir rendered/ jobs/ && mpigen render --check rendered/ jobs/
      mpigen kustomize-plugin install     # then: kubectl kustomize --enable-alpha-plugins DIR
      source <(mpigen completion bash)
    """


@cli.command()
def version() -> None:
    """Print mpigen's version (the same as --version)."""
    click.echo(f"mpigen {__version__}")
