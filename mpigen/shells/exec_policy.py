"""`mpigen exec-policy`: print the cluster-wide admission policy that confines the jobset target's kubectl-exec
launchers to their own job's pods (mpigen.targets.jobset.exec_policy), for an admin to apply once."""

from __future__ import annotations

import click

from mpigen.shells.common import run_guarded
from mpigen.shells.streams import write_stdout
from mpigen.targets.jobset.exec_policy import build
from mpigen.yaml.dump import to_yaml


@click.command("exec-policy")
def command() -> None:
    """Print the ValidatingAdmissionPolicy and binding that let a --target jobset launcher (kubectl exec:
    kubeflow.org/v1alpha1, v1alpha2, v1) exec only into its own JobSet's pods.

    \b
    Apply it once per cluster (it is cluster-scoped; Kubernetes 1.30 or newer):
      mpigen exec-policy | kubectl apply -f -
    """

    def run() -> None:
        write_stdout(to_yaml(build()))

    run_guarded(run)
