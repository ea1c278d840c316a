"""A TrainJob takes the compiler's road: the input table's TrainJob front, the stream's
runtimes collected once by the pipeline, a target with the "trainjob" ability, the one output-check stage."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from mpigen.compiler import compile_job
from mpigen.errors import CompileError
from mpigen.options import Options
from mpigen.pipeline import collect_runtimes, process
from mpigen.yaml.load import load_documents

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "trainjob"


def _stream() -> list[tuple[str, Any]]:
    return [
        (str(path), load_documents(path.read_text(), str(path))) for path in sorted(EXAMPLE.glob("*.yaml"))
    ]


def _trainjob(stream: list[tuple[str, Any]]) -> dict[str, Any]:
    [job] = [doc.data for _, docs in stream for doc in docs if doc.data["kind"] == "TrainJob"]
    return dict(job)


def test_the_runtimes_are_collected_once_and_compile_the_trainjob_as_the_stream_does() -> None:
    stream = _stream()
    runtimes, problems = collect_runtimes(stream, Options())
    assert runtimes is not None and problems == []
    direct = compile_job(_trainjob(stream), Options(), runtimes)
    assert [obj["kind"] for obj in direct.objects][-1] == "JobSet"
    assert direct.invalid == []
    assert process(stream, Options()).objects == direct.objects


def test_a_stream_without_trainer_documents_has_no_runtimes() -> None:
    assert collect_runtimes([("job.yaml", [])], Options()) == (None, [])


def test_a_target_without_the_trainjob_ability_is_refused_by_name() -> None:
    stream = _stream()
    runtimes, _ = collect_runtimes(stream, Options())
    job = copy.deepcopy(_trainjob(stream))
    job["metadata"]["annotations"] = {"mpigen.dev/target": "volcano"}
    with pytest.raises(CompileError) as caught:
        compile_job(job, Options(), runtimes)
    assert [(issue.path, issue.message) for issue in caught.value.issues] == [
        (
            ("metadata", "annotations", "mpigen.dev/target"),
            '"volcano": refused for a TrainJob, which always runs as a JobSet',
        )
    ]
    assert caught.value.kind == "TrainJob"


@pytest.mark.parametrize("requested", ["volcano", "jobset", "operator"])
def test_a_target_flag_for_the_stream_is_said_not_to_apply_to_a_trainjob(requested: str) -> None:
    """`--target volcano` over a stream of MPIJobs and TrainJobs: the TrainJobs still run as JobSets, and
    the render says so instead of dropping the option in silence (the default and `jobset` say nothing)."""
    stream = _stream()
    runtimes, _ = collect_runtimes(stream, Options())
    done = compile_job(_trainjob(stream), Options(target=requested), runtimes)
    assert [obj["kind"] for obj in done.objects][-1] == "JobSet"
    said = [issue.message for issue in done.warnings if issue.message.startswith("--target ")]
    if requested == "volcano":
        assert said == [
            (
                "--target volcano does not apply to a TrainJob: Kubeflow Trainer runs every TrainJob as a"
                " JobSet (rendered for the jobset target)"
            )
        ]
    else:
        assert said == []
