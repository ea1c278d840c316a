"""Compiled TrainJobs (Kubeflow Trainer v2.3.0 input, jobset target) on the real JobSet v0.12 controller and
webhooks (jobset.py), with no Trainer controller: every trainjob golden is admitted; a TrainJob on the
runtime of examples/trainjob (v2.3's shipped-runtime shape: the node job first, the launcher `dependsOn`
the nodes Ready) with runtime patches, env, resources and a deadline creates its pods with Trainer's host
names (`<job>-launcher-0-0`, `<job>-node-0-<i>`, subdomain the job), the launcher carries the MPI variables,
the key and the hostfile, the node pods the TrainJob's env and resources and the patches, and the JobSet
completes when the launcher does; a converted MPIJob (`mpigen convert`) holds its launcher back until
every node is Ready.

kwok makes pods Running and Ready and never ends them: the tests end the launcher pod as its mpirun would,
and hold node pods Pending with HOLD_ANNOTATION, put on the rendered node template.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import crds
import jobset
import pytest
import yaml
from controlplane import HOLD_ANNOTATION, Cluster, end_pod
from test_jobset import conditions, never, pods_of, ready, running_launcher

from mpigen.compiler import compile_job
from mpigen.convert import ConvertOptions, convert_job
from mpigen.inputs.trainjob import Runtimes
from mpigen.options import Options

ROOT = Path(__file__).resolve().parents[2]
# Kubernetes' own gang (scheduling.k8s.io/v1beta1 Workload and PodGroup) is served only by an API server with
# the GenericWorkload gate: those cases are applied on tests/cluster/test_workload_gang.py's gated cluster.
GOLDEN = sorted(
    path
    for path in ROOT.glob("golden/trainjob-*/expected.yaml")
    if "apiVersion: scheduling.k8s.io/v1beta1\n" not in path.read_text()
)
NAMESPACE_LINE = re.compile(r"^(\s*(?:- )?namespace: )(\S+)$", re.MULTILINE)
Obj = dict[str, Any]


@pytest.fixture
def namespace(jobset_cluster: Cluster, request: pytest.FixtureRequest) -> str:
    return jobset_cluster.create_namespace(
        "tj-" + re.sub(r"[^a-z0-9]+", "-", request.node.name.lower())[:40].strip("-")
    )


@pytest.fixture(scope="module")
def podgroup_crds(jobset_cluster: Cluster) -> None:
    jobset.create_missing(jobset_cluster, crds.podgroup_crds())


def apply(cluster: Cluster, namespace: str, objects: list[Obj]) -> None:
    cluster.kubectl(
        "apply",
        "--server-side",
        "-n",
        namespace,
        "-f",
        "-",
        input=json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}),
    )


def compiled(documents: list[Obj]) -> list[Obj]:
    runtimes = Runtimes()
    for doc in documents[:-1]:
        assert runtimes.add(doc, Options()) == []
    return compile_job(documents[-1], runtimes=runtimes).objects


def the_jobset(objects: list[Obj]) -> Obj:
    [found] = [o for o in objects if o["kind"] == "JobSet"]
    return found


def hold_nodes(objects: list[Obj]) -> None:
    for rjob in the_jobset(objects)["spec"]["replicatedJobs"]:
        if rjob["name"] == "node":
            template = rjob["template"]["spec"]["template"]
            template.setdefault("metadata", {}).setdefault("annotations", {})[HOLD_ANNOTATION] = "true"


@pytest.mark.parametrize("golden", GOLDEN, ids=[p.parent.name for p in GOLDEN])
def test_every_trainjob_golden_is_admitted_by_the_jobset_webhooks(
    jobset_cluster: Cluster, namespace: str, podgroup_crds: None, golden: Path
) -> None:
    text = NAMESPACE_LINE.sub(lambda m: m[1] + namespace, golden.read_text())
    done = jobset_cluster.kubectl(
        "apply", "--server-side", "-n", namespace, "-f", "-", input=text, check=False
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    objects = [doc for doc in yaml.safe_load_all(text) if doc]
    assert len(done.stdout.splitlines()) == len(objects)
    for sent in [o for o in objects if o["kind"] == "JobSet"]:
        stored = jobset_cluster.get("jobset", sent["metadata"]["name"], "-n", namespace)
        # The webhook had nothing to default that mpigen left out.
        for key in ("network", "successPolicy", "startupPolicy", "suspend", "failurePolicy"):
            assert stored["spec"].get(key) == sent["spec"].get(key), key
        jobset_cluster.kubectl("delete", "jobset", sent["metadata"]["name"], "-n", namespace, "--wait=false")


RUNTIME: Obj = next(
    doc for doc in yaml.safe_load_all((ROOT / "examples" / "trainjob" / "runtime.yaml").read_text()) if doc
)


def test_a_trainjob_runs_as_trainer_would_run_it(jobset_cluster: Cluster, namespace: str) -> None:
    cluster, name = jobset_cluster, "pi"
    job = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "runtimeRef": {"name": "mpi-pi"},
            "activeDeadlineSeconds": 600,
            "runtimePatches": [
                {
                    "manager": "example.com/team",
                    "trainingRuntimeSpec": {
                        "template": {
                            "metadata": {"labels": {"team": "hpc"}},
                            "spec": {
                                "replicatedJobs": [
                                    {
                                        "name": "node",
                                        "template": {
                                            "spec": {"template": {"metadata": {"labels": {"patched": "yes"}}}}
                                        },
                                    }
                                ]
                            },
                        }
                    },
                }
            ],
            "trainer": {
                "numNodes": 3,
                "numProcPerNode": 2,
                "command": ["mpirun", "/app/pi"],
                "env": [{"name": "RUN", "value": "1"}],
                "resourcesPerNode": {"requests": {"cpu": "100m"}},
            },
        },
    }
    objects = compiled([RUNTIME, job])
    apply(cluster, namespace, objects)
    assert cluster.get("jobset", name, "-n", namespace)["metadata"]["labels"]["team"] == "hpc"

    nodes = cluster.wait_for(
        "2 node pods",
        lambda: (
            pods_of(cluster, namespace, name, "node")
            if len(pods_of(cluster, namespace, name, "node")) == 2
            else None
        ),
        timeout=60,
    )
    assert sorted(p["spec"]["hostname"] for p in nodes) == [f"{name}-node-0-0", f"{name}-node-0-1"]
    assert {p["spec"]["subdomain"] for p in nodes} == {name}
    for node in nodes:
        assert node["metadata"]["labels"]["patched"] == "yes"
        [sshd] = node["spec"]["containers"]
        env = {
            e["name"]: e.get("value") for e in sshd["env"]
        }  # and the Job controller's JOB_COMPLETION_INDEX
        assert env["RUN"] == "1" and not any(k.startswith("OMPI_") for k in env)  # v2.3: env on the nodes too
        assert sshd["resources"]["requests"] == {"cpu": "100m"}
    launcher = running_launcher(cluster, namespace, name)
    pod = cluster.get("pod", launcher, "-n", namespace)
    assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == (f"{name}-launcher-0-0", name)
    container = pod["spec"]["containers"][0]
    assert container["command"] == ["mpirun", "/app/pi"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert (env["OMPI_MCA_orte_set_default_slots"], env["RUN"]) == ("2", "1")
    assert {v["name"] for v in pod["spec"]["volumes"]} >= {"mpi-ssh-auth", "mpi-hostfile"}
    [ssh] = [v for v in pod["spec"]["volumes"] if v["name"] == "mpi-ssh-auth"]
    assert ssh["secret"]["defaultMode"] == 0o400
    assert [i["mode"] for i in ssh["secret"]["items"]] == [0o640, 0o644, 0o644]
    hostfile = cluster.get("configmap", f"{name}-mpi-hostfile", "-n", namespace)["data"]["hostfile"]
    assert (
        hostfile
        == f"{name}-node-0-0.{name} slots=2\n{name}-node-0-1.{name} slots=2\n{name}-launcher-0-0.{name} slots=2\n"
    )
    assert cluster.get("secret", f"{name}-mpi-ssh-auth", "-n", namespace)["type"] == "Opaque"
    job_of_launcher = cluster.get("job", f"{name}-launcher-0", "-n", namespace)
    assert job_of_launcher["spec"]["activeDeadlineSeconds"] == 600

    end_pod(cluster, namespace, launcher, "Succeeded")
    cluster.wait_for(
        f"jobset/{name} Completed", lambda: "Completed" in conditions(cluster, namespace, name), timeout=60
    )


def test_a_converted_mpijob_starts_its_launcher_when_every_node_is_ready(
    jobset_cluster: Cluster, namespace: str
) -> None:
    cluster, name = jobset_cluster, "conv"
    [mpijob] = [d for d in yaml.safe_load_all((ROOT / "examples/v2beta1/pi.yaml").read_text()) if d]
    mpijob["metadata"].update(name=name, namespace=namespace)
    runtime, job, _ = convert_job(mpijob, ConvertOptions())
    objects = compiled([runtime, job])
    hold_nodes(objects)
    apply(cluster, namespace, objects)

    nodes = cluster.wait_for(
        "2 node pods",
        lambda: (
            pods_of(cluster, namespace, name, "node")
            if len(pods_of(cluster, namespace, name, "node")) == 2
            else None
        ),
        timeout=60,
    )
    never(
        cluster,
        "a launcher pod while no node is Ready",
        lambda: pods_of(cluster, namespace, name, "launcher"),
        3,
    )
    for pod in sorted(p["metadata"]["name"] for p in nodes):
        cluster.kubectl("annotate", "pod", pod, "-n", namespace, f"{HOLD_ANNOTATION}-")
        cluster.wait_for(
            f"{pod} Ready", lambda pod=pod: ready(cluster.get("pod", pod, "-n", namespace)), timeout=30
        )
    launcher = running_launcher(cluster, namespace, name)
    end_pod(cluster, namespace, launcher, "Succeeded")
    cluster.wait_for(
        f"jobset/{name} Completed", lambda: "Completed" in conditions(cluster, namespace, name), timeout=60
    )
