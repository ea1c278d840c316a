"""`mpigen render`: print the objects of every MPIJob, or write them one file per object
(`--output-dir`), or check such a render is current (`--check`).

Exit codes (mpigen.outcome): 0 success, 1 invalid input (every problem reported on stderr, nothing on
stdout), 2 usage error, 3 internal error (a bug: one line on stderr, never a traceback).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from mpigen.emit import FORMATS
from mpigen.options import Options
from mpigen.outcome import EXIT_INVALID
from mpigen.shells.common import (
    InvalidInput,
    compile_options,
    fail,
    filename_option,
    make_options,
    read_inputs,
    run_guarded,
    write_lines,
)


@click.command()
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@filename_option
@click.option("-o", "--output", type=click.Choice(list(FORMATS)), default="yaml", show_default=True, help="YAML stream, or JSON v1 List (with --output-dir: one .yaml or .json file per object).")
@click.option("--output-dir", metavar="DIR", type=click.Path(file_okay=False, path_type=Path), help="Write one file per object into DIR (named as `kustomize build -o` names them), replacing a previous render whole: no stale files, nothing half-written on error.")
@click.option("--check", "check_path", metavar="PATH", type=click.Path(path_type=Path), help="Render, print nothing but a unified diff, and exit 1 if PATH (a file of rendered YAML/JSON, or an --output-dir directory) is not exactly what would be rendered.")
@compile_options
def render(paths: tuple[str, ...], filenames: tuple[str, ...], output: str, output_dir: Path | None, check_path: Path | None, **values: Any) -> None:
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
    paths = filenames + paths
    run_guarded(lambda: _render(paths, output, options, output_dir, check_path))


def _render(paths: tuple[str, ...], output: str, options: Options, output_dir: Path | None = None, check_path: Path | None = None) -> None:
    from mpigen.pipeline import process

    outcome = process(read_inputs(paths), options)
    write_lines(outcome.lines())
    if outcome.exit_code:
        sys.exit(outcome.exit_code)
    objects = outcome.objects
    if output_dir or check_path:
        _write_or_check(objects, output, output_dir, check_path)
        return
    text = FORMATS[output](objects)
    sys.stdout.write(text)
    sys.stdout.flush()


def _write_or_check(objects: list[dict[str, Any]], output: str, output_dir: Path | None, check_path: Path | None) -> None:
    from mpigen import gitops
    from mpigen.shells import outdir

    try:
        if output_dir:
            files = gitops.files_for(objects, output)
            outdir.replace_directory(output_dir, files)
            click.echo(f"mpigen: wrote {len(files)} files to {output_dir}", err=True)
            return
        assert check_path is not None
        if check_path.is_dir():
            committed, rendered, root = outdir.read_rendered(check_path), gitops.files_for(objects, output), str(check_path)
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
        fail([f"mpigen: {check_path} is stale; re-render it (mpigen render --output-dir or > file)"], EXIT_INVALID)
