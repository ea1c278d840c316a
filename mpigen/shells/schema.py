"""`mpigen schema`: print the JSON Schema of MPIJob input for one apiVersion.

The schemas are generated from the input models by `python tools/schemagen.py` and shipped in the
package (`mpigen.schemas`); this command only reads one, so it needs neither pydantic nor jsonschema.
"""

from __future__ import annotations

import importlib.resources
import json

import click

from mpigen.inputs import api_versions, schema_file
from mpigen.inputs.trainer_names import TRAINER_API
from mpigen.shells.common import run_guarded
from mpigen.shells.streams import write_stdout


def read_schema(api_version: str) -> str:
    """The text of the shipped JSON Schema for MPIJobs of `api_version`."""
    name = schema_file(api_version, "MPIJob")
    return importlib.resources.files("mpigen.schemas").joinpath(name).read_text(encoding="utf-8")


class _ApiVersion(click.Choice):  # type: ignore[type-arg]
    """An apiVersion of api_versions(); a bare version (`v1alpha2`) or a near miss is refused with the one
    it stands for."""

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> object:
        if not isinstance(value, str) or value in self.choices:
            return super().convert(value, param, ctx)
        # deferred: difflib only for an apiVersion the choices lack
        import difflib

        versions = [str(choice) for choice in self.choices]
        full = [version for version in versions if version.rpartition("/")[2] == value.rpartition("/")[2]]
        near = full or difflib.get_close_matches(value, versions, n=1)
        hint = f' (did you mean "{near[0]}"?)' if near else ""
        self.fail(f'"{value}" is not one of {", ".join(versions)}{hint}', param, ctx)


@click.command()
@click.option(
    "--api-version",
    type=_ApiVersion(api_versions()),
    default=api_versions()[-1],
    show_default=True,
    help="The MPIJob apiVersion whose schema to print.",
)
@click.option(
    "--kind",
    type=click.Choice(["MPIJob", "TrainJob", "TrainingRuntime", "ClusterTrainingRuntime"]),
    default="MPIJob",
    show_default=True,
    help="MPIJob (of --api-version), or a Kubeflow Trainer kind of trainer.kubeflow.org/v1alpha1 (v2.3.0).",
)
@click.option(
    "--list", "list_versions", is_flag=True, help="Print the supported apiVersions, one per line, and exit."
)
def schema(api_version: str, kind: str, list_versions: bool) -> None:
    """Print the JSON Schema (draft 2020-12) of an MPIJob document of one apiVersion, or of a Kubeflow
    Trainer TrainJob or runtime (--kind; their pod templates inlined as Kubernetes' own, for the newest
    Kubernetes version shipped).

    The schema describes the whole document (apiVersion, kind, metadata, spec) and forbids unknown
    fields, so a typo such as `slotPerWorker` is flagged as you type. Pod templates are described as
    objects only: mpigen checks them against Kubernetes' strict PodTemplateSpec schema of the selected
    Kubernetes version when it compiles the job.

    \b
    Examples:
      mpigen schema --list
      mpigen schema --api-version kubeflow.org/v1alpha2 > mpijob-v1alpha2.schema.json
      mpigen schema --kind TrainJob > trainjob.schema.json

    \b
    Then, for editors using yaml-language-server (VS Code's YAML extension, Neovim, Helix, ...),
    start the job's file with:
      # yaml-language-server: $schema=./mpijob-v1alpha2.schema.json
    """
    run_guarded(lambda: _print(api_version, kind, list_versions))


def _print(api_version: str, kind: str, list_versions: bool) -> None:
    if list_versions:
        text = "".join(f"{version}\n" for version in api_versions())
    elif kind != "MPIJob":
        text = trainer_schema(kind)
    else:
        text = read_schema(api_version)
    write_stdout(text)


def trainer_schema(kind: str) -> str:
    """The shipped schema of a Kubeflow Trainer kind (tools/trainerschema.py), Kubernetes' definitions inlined."""
    # deferred: Kubernetes' definitions only for a Trainer kind's schema, which inlines them
    from mpigen.checks.kube.schemas import object_schema
    from mpigen.checks.kube.versions import default_kube_version

    found = object_schema(default_kube_version(), TRAINER_API, kind)
    assert found is not None, kind
    return json.dumps(found, indent=2) + "\n"
