"""`mpigen convert`: print each MPIJob as a Kubeflow Trainer v2 TrainJob with the runtime it names
(mpigen.convert), every field without an equivalent said on stderr."""

from __future__ import annotations

import sys
from typing import Any

import click

from mpigen.options import Options
from mpigen.shells.common import read_inputs, refuse_empty, run_guarded, write_lines
from mpigen.shells.flags import filename_option
from mpigen.shells.streams import write_stdout
from mpigen.yaml.dump import FORMATS


def command() -> click.Command:
    @click.command()
    @click.argument("paths", nargs=-1, metavar="[PATH]...")
    @filename_option
    @click.option(
        "-o",
        "--output",
        type=click.Choice(list(FORMATS)),
        default="yaml",
        show_default=True,
        help="A YAML stream or a JSON v1 List.",
    )
    @click.option(
        "--namespaced-runtime",
        is_flag=True,
        help="Write each runtime as a TrainingRuntime in its job's namespace instead of a ClusterTrainingRuntime.",
    )
    @click.option("-n", "--namespace", metavar="NS", help="Namespace for jobs that name none.")
    def convert(
        paths: tuple[str, ...],
        filenames: tuple[str, ...],
        output: str,
        namespaced_runtime: bool,
        namespace: str | None,
    ) -> None:
        """Convert every MPIJob in PATH... into a Kubeflow Trainer v2 TrainJob (trainer.kubeflow.org/v1alpha1,
        Trainer v2.3.0) and the runtime it names.

        The TrainJob holds what is the job's own (numNodes, numProcPerNode, the launcher's image, command,
        args, env and resources, suspend, MultiKueue); the runtime (a ClusterTrainingRuntime named
        mpigen-<hash>, or --namespaced-runtime) holds its shape: the MPI policy and a JobSet template with the
        replicated jobs `node` (the workers) and `launcher`, which waits for the nodes to be Ready. Jobs of one
        shape share one runtime. Every field with no TrainJob equivalent is a warning on stderr; a job that
        cannot be converted (kubectl-exec transport without sshd in the worker, no workers) is an error
        with its field path (exit 1, nothing printed). Other documents pass through unchanged.
        `mpigen render` compiles the result (no Trainer controller needed).

        \b
        Examples:
          mpigen convert job.yaml > trainjob.yaml && mpigen render trainjob.yaml | kubectl apply -f -
          mpigen convert --namespaced-runtime jobs/
        """
        # deferred: the converter and Trainer's tables only when convert runs, not for `mpigen --help`
        from mpigen.convert import ConvertOptions

        options = ConvertOptions(namespaced_runtime, Options(namespace=namespace))
        run_guarded(lambda: _convert(filenames + paths, output, options))

    return convert


def _convert(paths: tuple[str, ...], output: str, options: Any) -> None:
    # deferred: the converter and Trainer's tables only when convert runs, not for `mpigen --help`
    from mpigen.convert import convert

    inputs = read_inputs(paths)
    refuse_empty(paths, inputs, "convert")
    outcome = convert(inputs, options)
    write_lines(outcome.lines())
    if outcome.exit_code:
        sys.exit(outcome.exit_code)
    write_stdout(FORMATS[output](outcome.objects))
