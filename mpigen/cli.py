"""The command line: the only module that reads files, prints or exits.

Exit codes: 0 success, 1 invalid input (every problem reported on stderr, nothing on stdout),
2 usage error, 3 internal error (a bug: one line on stderr, never a traceback).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import click

from mpigen import __version__
from mpigen.options import (
    DEFAULT_KUBECTL_DELIVERY_IMAGE,
    DEFAULT_WAIT_TIMEOUT_SECONDS,
    GANG_SCHEDULERS,
    PROCESSING_RESOURCE_TYPES,
    Options,
)

EXIT_INVALID = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3

INPUT_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"


class InvalidInput(Exception):
    """Input problems already formatted one per line; exit 1."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


def _expand(paths: tuple[str, ...]) -> Iterator[str]:
    """Files as given; directories searched recursively for *.yaml, *.yml, *.json in sorted order."""
    for path in paths or (STDIN,):
        if path != STDIN and os.path.isdir(path):
            found = []
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                found += [os.path.join(root, f) for f in files if f.endswith(INPUT_SUFFIXES)]
            yield from sorted(found)
        else:
            yield path


def _read(path: str) -> tuple[str, bytes]:
    if path == STDIN:
        return "<stdin>", sys.stdin.buffer.read()
    try:
        return path, Path(path).read_bytes()
    except OSError as exc:
        raise InvalidInput([f"{path}: cannot read: {exc.strerror or exc}"]) from None


def read_inputs(paths: tuple[str, ...]) -> list[tuple[str, list[Any] | str]]:
    """Every input as (source name, documents), or (source name, problem) when it cannot be read."""
    from mpigen.documents import InputError, decode, load_documents

    inputs: list[tuple[str, list[Any] | str]] = []
    for path in _expand(paths):
        try:
            source, data = _read(path)
            inputs.append((source, load_documents(decode(data, source), source)))
        except InvalidInput as exc:
            inputs.append((path, exc.lines[0]))
        except InputError as exc:
            inputs.append((path, str(exc)))
    return inputs


def _fail(lines: list[str], code: int) -> NoReturn:
    for line in lines:
        click.echo(line, err=True)
    sys.exit(code)


def run_guarded(action: Callable[[], None]) -> None:
    """Run a command body: input problems exit 1, anything unexpected exits 3 without a traceback."""
    try:
        action()
    except InvalidInput as exc:
        _fail(exc.lines, EXIT_INVALID)
    except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
        raise
    except Exception as exc:  # noqa: BLE001 - the one place that turns bugs into exit 3
        _fail([f"mpigen: internal error: {type(exc).__name__}: {exc} (please report this)"], EXIT_INTERNAL)


def _kube_version(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    from mpigen.kube.versions import parse_kube_version

    try:
        return parse_kube_version(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def compile_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The options shared by every command that compiles (render, validate)."""
    decorators = [
        click.option("-n", "--namespace", metavar="NS", help="Namespace for jobs that name none (default: none, so `kubectl apply -n` decides)."),
        click.option("--gpus-per-node", type=click.IntRange(min=1), default=8, show_default=True, help="v1alpha1: GPUs per node when the job's spec.gpusPerNode is unset."),
        click.option("--processing-units-per-node", type=click.IntRange(min=1), default=1, show_default=True, help="v1alpha1: processing units per node when spec.processingUnitsPerNode is unset."),
        click.option("--processing-resource-type", type=click.Choice(PROCESSING_RESOURCE_TYPES), default=PROCESSING_RESOURCE_TYPES[0], show_default=True, help="v1alpha1: resource when spec.processingResourceType is unset."),
        click.option("--kubectl-delivery-image", metavar="IMAGE", default=DEFAULT_KUBECTL_DELIVERY_IMAGE, show_default=True, help="Image that delivers kubectl to the launcher (alpine with kubectl); also runs the wait-for-workers and clean-up scripts."),
        click.option("--wait-timeout", "wait_timeout_seconds", type=click.IntRange(min=1), default=DEFAULT_WAIT_TIMEOUT_SECONDS, show_default=True, metavar="SECONDS", help="How long the launcher waits for every worker pod to be Ready before it fails (and the Job retries)."),
        click.option("--gang-scheduler", type=click.Choice(GANG_SCHEDULERS), default=None, help="Gang-schedule the job's pods: emit a PodGroup (minMember = workers + 1) and a workers' PodDisruptionBudget. Default: off."),
        click.option("--kube-version", metavar="VERSION", default=None, callback=_kube_version, help="Kubernetes version whose strict schemas check pod templates and output (1.25 to 1.37) [default: newest]."),
        click.option("--no-validate", "validate", flag_value=False, default=True, help="Skip the schema checks of pod templates and output."),
        click.option("--scheduler-name", metavar="NAME", default=None, help="schedulerName of the job's pods under gang scheduling [default: volcano, or scheduler-plugins-scheduler]."),
    ]
    for decorator in reversed(decorators):
        func = decorator(func)
    return func


def make_options(**values: Any) -> Options:
    if values["scheduler_name"] and not values["gang_scheduler"]:
        raise click.UsageError("--scheduler-name needs --gang-scheduler")
    return Options(
        gpus_per_node=values["gpus_per_node"],
        processing_units_per_node=values["processing_units_per_node"],
        processing_resource_type=values["processing_resource_type"],
        kubectl_delivery_image=values["kubectl_delivery_image"],
        namespace=values["namespace"] or None,
        wait_timeout_seconds=values["wait_timeout_seconds"],
        gang_scheduler=values["gang_scheduler"],
        scheduler_name=values["scheduler_name"] or None,
        validate=values["validate"],
        kube_version=values["kube_version"],
    )


class LazyGroup(click.Group):
    """A command group whose commands live in their own modules, imported only when run (start-up time:
    `mpigen render` inside a kustomize build must not pay for the KRM or schema code)."""

    def __init__(self, *args: Any, lazy: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy and cmd_name not in self.commands:
            import importlib

            module, _, attr = self.lazy[cmd_name].partition(":")
            self.add_command(getattr(importlib.import_module(module), attr), cmd_name)
        return super().get_command(ctx, cmd_name)


# Commands defined in other modules: name -> "module:attribute".
LAZY_COMMANDS = {
    "validate": "mpigen.validate_cmd:validate",
    "schema": "mpigen.schema:schema",
    "krm": "mpigen.krm:krm",
    "kustomize-plugin": "mpigen.kustomize_plugin:kustomize_plugin",
}


@click.group(
    cls=LazyGroup,
    lazy=LAZY_COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, "--version", prog_name="mpigen", message="%(prog)s %(version)s")
def cli() -> None:
    """Compile Kubeflow MPIJobs (kubeflow.org/v1alpha1, v1alpha2) into plain Kubernetes manifests.

    Every option of render and validate can also be set on a job as an annotation
    `mpigen.dev/<option>` (e.g. mpigen.dev/gang-scheduler: volcano), which wins over the flag.
    With no arguments and piped input, mpigen runs as a KRM function (see `mpigen krm --help`).

    \b
    Examples:
      mpigen render job.yaml | kubectl apply -f -
      mpigen render -o json jobs/ > manifests.json
      mpigen validate -o json jobs/
      mpigen render --output-dir rendered/ jobs/ && mpigen render --check rendered/ jobs/
      mpigen kustomize-plugin install     # then: kubectl kustomize --enable-alpha-plugins DIR
    """


@cli.command()
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@click.option("-o", "--output", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True, help="YAML stream, or JSON v1 List (with --output-dir: one .yaml or .json file per object).")
@click.option("--output-dir", metavar="DIR", type=click.Path(file_okay=False, path_type=Path), help="Write one file per object into DIR (named as `kustomize build -o` names them), replacing a previous render whole: no stale files, nothing half-written on error.")
@click.option("--check", "check_path", metavar="PATH", type=click.Path(path_type=Path), help="Render, print nothing but a unified diff, and exit 1 if PATH (a file of rendered YAML/JSON, or an --output-dir directory) is not exactly what would be rendered.")
@compile_options
def render(paths: tuple[str, ...], output: str, output_dir: Path | None, check_path: Path | None, **values: Any) -> None:
    """Print the Kubernetes objects for every MPIJob in PATH... (files, directories, or - for stdin).

    Directories are searched recursively for *.yaml, *.yml and *.json. Documents that are not
    MPIJobs pass through unchanged, in place. If any input is invalid, every problem is reported on
    stderr and nothing is printed.

    \b
    Examples:
      mpigen render job.yaml | kubectl apply -f -
      cat job.yaml | mpigen render -n training
      mpigen render -o json jobs/ > all.json
      mpigen render --output-dir rendered/ jobs/
      mpigen render --check rendered/ jobs/     # in CI: exit 1 with a diff if rendered/ is stale
    """
    if output_dir and check_path:
        raise click.UsageError("--output-dir and --check cannot be used together")
    options = make_options(**values)
    run_guarded(lambda: _render(paths, output, options, output_dir, check_path))


def _render(paths: tuple[str, ...], output: str, options: Options, output_dir: Path | None = None, check_path: Path | None = None) -> None:
    from mpigen.emit import FORMATS
    from mpigen.pipeline import process

    objects, problems, bugs = [], [], []
    for source, documents in read_inputs(paths):
        if isinstance(documents, str):
            problems.append(documents)
            continue
        result = process([(source, documents)], options)
        for finding in result.warnings:
            click.echo(finding.text(), err=True)
        problems += [finding.text() for finding in result.errors]
        bugs += [finding.text() for finding in result.invalid_output]
        objects += result.objects
    if problems:
        raise InvalidInput(problems)
    if bugs:
        header = "mpigen: internal error: the output fails Kubernetes' schemas (please report this):"
        _fail([header, *bugs], EXIT_INTERNAL)
    if output_dir or check_path:
        _write_or_check(objects, output, output_dir, check_path)
        return
    text = FORMATS[output](objects)
    sys.stdout.write(text)
    sys.stdout.flush()


def _write_or_check(objects: list[dict[str, Any]], output: str, output_dir: Path | None, check_path: Path | None) -> None:
    from mpigen import gitops
    from mpigen.emit import FORMATS

    try:
        if output_dir:
            files = gitops.files_for(objects, output)
            gitops.replace_directory(output_dir, files)
            click.echo(f"mpigen: wrote {len(files)} files to {output_dir}", err=True)
            return
        assert check_path is not None
        if check_path.is_dir():
            committed, rendered, root = gitops.read_rendered(check_path), gitops.files_for(objects, output), str(check_path)
        else:
            name = str(check_path)
            committed = {name: check_path.read_text(encoding="utf-8")} if check_path.exists() else {}
            rendered, root = {name: FORMATS[output](objects)}, ""
    except gitops.RenderDirError as exc:
        raise InvalidInput([f"mpigen: {exc}"]) from None
    except OSError as exc:
        raise InvalidInput([f"mpigen: {exc.filename or ''}: {exc.strerror or exc}"]) from None
    diff = gitops.diff_files(committed, rendered, root)
    if diff:
        sys.stdout.write(diff)
        sys.stdout.flush()
        _fail([f"mpigen: {check_path} is stale; re-render it (mpigen render --output-dir or > file)"], EXIT_INVALID)


def main() -> None:
    if len(sys.argv) == 1 and not sys.stdin.isatty():
        # No arguments and piped input: run as a KRM function, which is how kustomize
        # (`config.kubernetes.io/function: {exec: {path: mpigen}}`) and kpt call an executable.
        from mpigen.krm import run_function

        sys.exit(run_function(sys.stdin.buffer, sys.stdout.buffer, sys.stderr))
    cli(prog_name="mpigen")
