"""`mpigen argocd`: the commands of mpigen's Argo CD Config Management Plugin
(examples/gitops/argocd/plugin.yaml), as argocd-cmp-server runs them in the application's directory.

- `generate [PATH]`: render every job under PATH (default: the current directory) as `mpigen render PATH`
  does, with the options Argo CD's environment sets (mpigen.inputs.argocd: `ARGOCD_APP_PARAMETERS` or
  `PARAM_*`, `ARGOCD_APP_NAMESPACE`, `KUBE_VERSION`), and print them as one YAML stream, which the
  plugin server splits into manifests (argo-cd v3.5.0 cmpserver/plugin/plugin.go: generateManifest,
  gitops-engine kube.SplitYAMLToString). On any problem nothing is printed on stdout, every problem goes
  to stderr, and the exit is 1: the server then fails the generation with
  "`mpigen argocd generate` failed exit status 1: <stderr>" (plugin.go: CmdError), which Argo CD shows.
  A directory with no objects is refused too: an empty render would make an Application with
  `prune` delete everything it manages.
- `discover [PATH]`: the files under PATH that name an MPIJob or TrainJob, one a line, and nothing
  where none does; always exit 0 (the server takes non-empty output for a match: plugin.go
  matchRepository).
- `parameters`: the parameter announcements, JSON, for the plugin's `parameters.dynamic` command.

Environment is read here only, under this command: `mpigen render` never reads it. The three run
without click (mpigen.cli) when given no option, as the plugin runs them.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING

from mpigen.inputs.argocd import announcements, names_a_job, options_from_environment
from mpigen.shells.bounded import ReadError, read_file
from mpigen.shells.common import INPUT_SUFFIXES, InvalidInput, read_inputs, run_guarded, write_lines
from mpigen.shells.streams import write_stdout

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    import click

# A file larger than this is not looked into by discovery (render reads no input larger either).
DISCOVER_MAX_BYTES = 64 << 20


def plain(args: list[str]) -> Callable[[], int] | None:
    """`mpigen argocd generate|discover [PATH]` and `mpigen argocd parameters`, as the plugin runs them,
    without click (mpigen.cli); None for any other call, which click parses."""
    if not args or args[0] not in _ACTIONS or any(arg.startswith("-") for arg in args[1:]):
        return None
    action, rest = _ACTIONS[args[0]], args[1:]
    if len(rest) > (0 if args[0] == "parameters" else 1):
        return None

    def run() -> int:
        run_guarded(lambda: action(*rest))
        return 0

    return run


def _generate(path: str = ".") -> None:
    # deferred: the compiler and the YAML writer, which discovery and the parameters (run at every refresh) never use
    from mpigen.pipeline import process
    from mpigen.yaml.dump import to_yaml

    options, problems, warnings = options_from_environment(os.environ)
    if problems:
        raise InvalidInput([f"mpigen: {problem}" for problem in problems])
    write_lines([f"mpigen: warning: {warning}" for warning in warnings])
    inputs = read_inputs((path,))
    outcome = process(inputs, options)
    write_lines(outcome.lines())
    if outcome.exit_code:
        sys.exit(outcome.exit_code)
    if not any(documents for _, documents in inputs):
        message = (
            f"mpigen: {path}: holds no objects; the plugin renders nothing rather than an empty list, which "
            "would make Argo CD prune every object of the Application (delete the Application instead)"
        )
        raise InvalidInput([message])
    write_stdout(to_yaml(outcome.objects))


def _job_files(path: str) -> Iterator[str]:
    """The files under `path` (as `render PATH` reads them: *.yaml, *.yml, *.json, hidden directories
    left out) that name a job kind."""
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.endswith(INPUT_SUFFIXES):
                continue
            file = os.path.join(root, name)
            try:
                data = read_file(file, DISCOVER_MAX_BYTES, regular_only=True)
            except ReadError:
                continue
            if names_a_job(data.decode("latin-1")):
                yield os.path.relpath(file, path)


def _discover(path: str = ".") -> None:
    write_stdout("".join(f"{file}\n" for file in _job_files(path)))


def _parameters() -> None:
    write_stdout(json.dumps(announcements(), indent=2) + "\n")


_ACTIONS: dict[str, Callable[..., None]] = {
    "generate": _generate,
    "discover": _discover,
    "parameters": _parameters,
}


def command() -> click.Group:
    """The `argocd` group as click parses it (mpigen.shells.group loads it)."""
    import click  # deferred: the plugin's own calls run without click (mpigen.cli); only --help and flags parse

    @click.group()
    def argocd() -> None:
        """The commands of mpigen's Argo CD Config Management Plugin (argocd-cmp-server runs them).

        \b
        generate reads its options from the variables Argo CD sets:
          ARGOCD_APP_PARAMETERS   the Application's plugin parameters (JSON), named as
                                  the flags of `mpigen render` (target, queue, ...);
                                  PARAM_<NAME> where it is unset (PARAM_GANG_SCHEDULER)
          ARGOCD_APP_NAMESPACE    --namespace, unless the namespace parameter is set
          KUBE_VERSION            --kube-version, unless the kube-version parameter is set
        A job's own mpigen.dev/* annotation wins over all of them.

        \b
        Example (what Argo CD runs, by hand):
          ARGOCD_APP_PARAMETERS='[{"name":"target","string":"jobset"}]' \\
            mpigen argocd generate examples/gitops/jobs
        """

    path_argument = click.argument("path", default=".", type=click.Path(file_okay=False))

    @argocd.command()
    @path_argument
    def generate(path: str) -> None:
        """Print the objects of every job under PATH (default: .) as one YAML stream, with the options of
        Argo CD's environment; on a problem, print nothing and exit 1 with every problem on stderr."""
        run_guarded(lambda: _generate(path))

    @argocd.command()
    @path_argument
    def discover(path: str) -> None:
        """Print the files under PATH (default: .) that name an MPIJob or TrainJob; nothing when none does."""
        run_guarded(lambda: _discover(path))

    @argocd.command()
    def parameters() -> None:
        """Print the plugin's parameter announcements (JSON), one per option of `mpigen render`."""
        run_guarded(_parameters)

    return argocd
