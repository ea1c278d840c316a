"""`convert` warns about every annotation it copies to the TrainJob that no longer means there what it
meant on the MPIJob: mpigen's own options (only `mpigen render` reads them on a TrainJob), Volcano's queue
annotation (read by mpi-operator v0.8.2, by nothing on a TrainJob), kubectl's last-applied configuration
(of the MPIJob, not of the TrainJob). Other annotations are carried over in silence."""

from __future__ import annotations

from click.testing import CliRunner
from jobs import V2BETA1, make_job, to_yaml

from mpigen.cli import cli


def test_convert_names_each_annotation_that_changes_meaning() -> None:
    annotations = {
        "mpigen.dev/gpus-per-node": "4",
        "scheduling.volcano.sh/queue-name": "research",
        "kubectl.kubernetes.io/last-applied-configuration": "{}",
        "example.com/owner": "team-a",
    }
    job = make_job(V2BETA1, annotations=annotations)
    result = CliRunner().invoke(cli, ["convert", "-"], input=to_yaml(job), catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    warned = [line for line in result.stderr.splitlines() if "metadata.annotations" in line]
    for key in ("mpigen.dev/gpus-per-node", "scheduling.volcano.sh/queue-name", "last-applied-configuration"):
        assert [line for line in warned if key in line], (key, result.stderr)
    assert "example.com/owner" not in result.stderr
    assert "example.com/owner: team-a" in result.stdout
