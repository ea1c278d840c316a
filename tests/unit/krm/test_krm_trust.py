"""The KRM function on hostile lists: an item that is only a YAML alias is an error result (exit 1), never
an internal error; a list with an error in a job and some 200,000 comment lines after its items answers in
seconds with the same bytes as the full round trip (benchmarks/bench_krm_error_comments.py measures it)."""

from __future__ import annotations

import io
import time

import yaml

from mpigen.krm import protocol
from mpigen.shells.krm import run_function

HEADER = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
JOB = """\
- apiVersion: kubeflow.org/v1alpha2
  kind: MPIJob
  metadata: {name: x}
  spec:
    mpiReplicaSpecs:
      Launcher: {replicas: 1, template: {spec: {containers: [{name: l, image: i}]}}}
      Worker: {replicas: WORKERS, template: {spec: {containers: [{name: w, image: i}]}}}
"""


def run(text: str) -> tuple[int, str, str]:
    stdout, stderr = io.BytesIO(), io.StringIO()
    code = run_function(io.BytesIO(text.encode()), stdout, stderr)
    return code, stdout.getvalue().decode(), stderr.getvalue()


def test_an_alias_item_beside_a_job_is_an_error_result_and_the_items_stay_as_given() -> None:
    text = (
        HEADER + JOB.replace("- apiVersion", "- &job\n  apiVersion", 1).replace("WORKERS", "1") + "- *job\n"
    )
    code, out, err = run(text)
    assert code == 1, err
    listed = yaml.safe_load(out)
    assert [r["severity"] for r in listed["results"]] == ["error"]
    assert "items[1]: the item is only a YAML alias" in listed["results"][0]["message"]
    assert listed["items"] == yaml.safe_load(text)["items"]  # as given (as data: the alias written out)
    assert "items[1]" in err and "internal error" not in err


def test_an_alias_item_without_a_job_passes_through_byte_for_byte() -> None:
    text = HEADER + "- &c {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n- *c\n"
    assert run(text)[:2] == (0, text)


def test_an_error_with_200000_comment_lines_answers_in_seconds_as_the_round_trip_would() -> None:
    comments = "".join(f"# note {i}\n" for i in range(200_000))
    text = HEADER + JOB.replace("WORKERS", "-3") + comments
    started = time.monotonic()
    code, out, err = run(text)
    seconds = time.monotonic() - started
    assert code == 1 and seconds < 10, (code, seconds, err)
    assert out.startswith(text) and out.count("# note ") == 200_000
    assert yaml.safe_load(out)["results"][0]["message"] == "must be >= 0, got -3"
    # The same bytes as the round trip of the whole list writes (measured on a shorter list: it is slow).
    short = HEADER + JOB.replace("WORKERS", "-3") + "".join(f"# note {i}\n" for i in range(50))
    listing = protocol.read_resource_list(short.encode())
    results = [{"message": "m", "severity": "error"}]
    fast = protocol.write(listing, [], results)
    from mpigen.krm.yamltext import write_cut

    assert listing.cut is not None
    assert fast == write_cut(listing.cut, listing.token, {}, results, drop_config=False, appendable=False)
