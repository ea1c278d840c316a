"""The objects the run targets' engines create from mpigen's output, by name (JobSet's headless Service
`<jobset>`; Volcano's svc plugin's Service `<job>`, ConfigMap `<job>-svc` and NetworkPolicy `<job>`, its ssh
plugin's Secret `<job>-ssh`), take part in the collision check: two jobs, or a job and a document passed
through, that would meet there are refused by render, validate and the KRM function, on every target."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from jobs import V1ALPHA2, V2BETA1, make_job, to_yaml

from mpigen.cli import cli
from mpigen.shells.krm import run_function
from mpigen.targets import target


def implied(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """What any target's engine makes of `obj`."""
    return [made for name in ("operator", "jobset", "volcano") for made in target(name).engine_objects([obj])]


def on(target: str, job: dict[str, Any]) -> dict[str, Any]:
    job["metadata"]["annotations"] = {"mpigen.dev/target": target}
    return job


def thing(kind: str, name: str, api_version: str = "v1") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": "ml"}}


CASES = {
    # two jobs: the operator target's worker Service `<job>-worker` (v1alpha2) is the Service a JobSet or
    # Volcano's svc plugin makes for a job called `<job>-worker`
    "operator-and-jobset": (
        [on("operator", make_job(V1ALPHA2, name="a")), on("jobset", make_job(V2BETA1, name="a-worker"))],
        'Service "a-worker"',
    ),
    "operator-and-volcano": (
        [on("operator", make_job(V1ALPHA2, name="b")), on("volcano", make_job(V2BETA1, name="b-worker"))],
        'Service "b-worker"',
    ),
    "service-beside-a-jobset": ([on("jobset", make_job(name="c")), thing("Service", "c")], 'Service "c"'),
    "service-beside-a-volcano-job": (
        [on("volcano", make_job(name="d")), thing("Service", "d")],
        'Service "d"',
    ),
    "configmap-of-volcanos-svc-plugin": (
        [on("volcano", make_job(name="e")), thing("ConfigMap", "e-svc")],
        'ConfigMap "e-svc"',
    ),
    "secret-of-volcanos-ssh-plugin": (
        [on("volcano", make_job(V2BETA1, name="f")), thing("Secret", "f-ssh")],
        'Secret "f-ssh"',
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("command", ["render", "validate"])
def test_a_collision_with_an_engines_object_is_refused(case: str, command: str) -> None:
    documents, named = CASES[case]
    text = "---\n".join(to_yaml(doc) for doc in documents)
    result = CliRunner().invoke(cli, [command, "-"], input=text, catch_exceptions=False)
    assert result.exit_code == 1, result.stdout + result.stderr
    assert named in result.stdout + result.stderr and "rename one" in result.stdout + result.stderr
    if command == "render":
        assert result.stdout == ""


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_krm_function_refuses_the_same_collisions(case: str) -> None:
    documents, named = CASES[case]
    text = json.dumps({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": documents})
    stdout, stderr = io.BytesIO(), io.StringIO()
    assert run_function(io.BytesIO(text.encode()), stdout, stderr) == 1
    results = yaml.safe_load(stdout.getvalue())["results"]
    assert any(named in r["message"] for r in results if r["severity"] == "error"), results


def test_jobs_whose_engine_objects_differ_render_together() -> None:
    text = "---\n".join(
        to_yaml(doc)
        for doc in [
            on("jobset", make_job(name="g")),
            on("volcano", make_job(name="h")),
            thing("Service", "g-x"),
        ]
    )
    result = CliRunner().invoke(cli, ["render", "-"], input=text, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr


def test_the_engines_objects_follow_their_settings() -> None:
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "j"}}
    assert [o["metadata"]["name"] for o in implied({**jobset, "spec": {"network": {"subdomain": "s"}}})] == [
        "s"
    ]
    assert [o["metadata"]["name"] for o in implied({**jobset, "spec": {}})] == ["j"]
    volcano = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "v", "namespace": "n"},
    }
    made = implied({**volcano, "spec": {"plugins": {"svc": [], "ssh": []}}})
    assert [(o["kind"], o["metadata"]["name"]) for o in made] == [
        ("Service", "v"),
        ("ConfigMap", "v-svc"),
        ("NetworkPolicy", "v"),
        ("Secret", "v-ssh"),
    ]
    quiet = implied({**volcano, "spec": {"plugins": {"svc": ["--disable-network-policy=true"]}}})
    assert "NetworkPolicy" not in [o["kind"] for o in quiet]
    assert implied(thing("Service", "x")) == []
