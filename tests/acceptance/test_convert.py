"""`mpigen convert` (mpigen.convert): an MPIJob and the TrainJob it converts to compile to equivalent jobs.

The round trip: an MPIJob rendered on the jobset target, and the same MPIJob converted then rendered (the
TrainJob path, Trainer's shape), give JobSets with the same pods once names are mapped (`worker` <->
`node`, the first container's name <-> `node`): the same images, commands, args, resources, the same
Open MPI 4 variables (mpigen's jobset target also sets Open MPI 5's PRRTE ones; Trainer does not), the same
hostfile hosts (`<job>-worker-0-<i>.<job>[.<ns>.svc]` <-> `<job>-node-0-<i>.<job>`) and slots, the same
restart, success, deadline, TTL and suspend policies, the launcher waiting for Ready workers.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

import mpigen
from mpigen.cli import cli
from mpigen.compiler import compile_job
from mpigen.convert import ConvertOptions, convert, convert_job
from mpigen.errors import CompileError
from mpigen.inputs import trainer_names
from mpigen.inputs.trainjob import Runtimes
from mpigen.options import Options
from mpigen.targets.jobset import names as jobset_names
from mpigen.yaml.load import Document

ROOT = Path(__file__).resolve().parents[2]
Obj = dict[str, Any]
CASES = [
    *sorted(ROOT.glob("examples/v2beta1/*.yaml")),
    *[
        ROOT / "golden" / case / "input.yaml"
        for case in (
            "jobset-v2beta1-openmpi",
            "jobset-v2beta1-intel-queue",
            "jobset-v2beta1-mpich-no-namespace",
            "jobset-v2beta1-suspend",
            "jobset-v2beta1-run-launcher-as-worker-annotation",
            "v2beta1-run-policy",
            "v2beta1-wait-for-workers-ready",
            "v2beta1-restart-policies",
            "v2beta1-managed-by-multikueue-warns",
        )
    ],
]
ORTE = (
    "OMPI_MCA_orte_default_hostfile",
    "OMPI_MCA_orte_keep_fqdn_hostnames",
    "OMPI_MCA_orte_set_default_slots",
    "OMPI_MCA_plm_rsh_args",
)


def jobs_of(path: Path) -> list[Obj]:
    return [
        d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict) and d.get("kind") == "MPIJob"
    ]


def by_kind(objects: list[Obj], kind: str) -> Obj:
    [found] = [
        o for o in objects if o["kind"] == kind and (kind != "ConfigMap" or "hostfile" in o.get("data", {}))
    ]
    return found


def converted(job: Obj, options: Options | None = None) -> tuple[Obj, Obj, list[Obj]]:
    """The runtime and TrainJob `job` converts to with `options`, and the TrainJob rendered with them."""
    options = options or Options()
    runtime, train_job, _ = convert_job(job, ConvertOptions(compile=options))
    runtimes = Runtimes()
    assert runtimes.add(runtime, Options()) == []
    return runtime, train_job, compile_job(train_job, options, runtimes=runtimes).objects


def pods(jobset: Obj) -> dict[str, Obj]:
    return {rjob["name"]: rjob for rjob in jobset["spec"]["replicatedJobs"]}


def container(rjob: Obj) -> Obj:
    first: Obj = rjob["template"]["spec"]["template"]["spec"]["containers"][0]
    return first


def env(c: Obj) -> dict[str, Any]:
    # no value is the empty value (Trainer writes it out)
    return {v["name"]: v.get("valueFrom", v.get("value", "")) for v in c.get("env") or []}


def typed(resources: Obj | None) -> Obj:
    from mpigen.quantity import canonical_quantity

    return {
        key: {n: canonical_quantity(q) for n, q in values.items()}
        for key, values in (resources or {}).items()
    }


def hosts(config_map: Obj, job: str) -> list[str]:
    lines = config_map["data"]["hostfile"].splitlines()
    mapped = []
    for line in lines:
        host, sep, slots = re.split(r"( slots=|:)", line)
        short = ".".join(host.split(".")[:2]).replace(f"{job}-worker-0-", f"{job}-node-0-")
        mapped.append(f"{short}{sep}{slots}")
    return mapped


@pytest.mark.parametrize("free", [True, False], ids=["free-disruptions", "no-free-disruptions"])
@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_round_trip_gives_the_same_job(path: Path, free: bool) -> None:
    """Converted and rendered with free disruptions (the runtime then holds the jobset target's fields, so
    Trainer's own JobSet has them too) or without, the JobSet restarts as the MPIJob's does."""
    for job in jobs_of(path):
        name = job["metadata"]["name"]
        options = Options(free_disruptions=free)
        direct = mpigen.compile(job, options.replace(target="jobset"))
        runtime, train_job, via = converted(job, options)
        ours, theirs = by_kind(direct, "JobSet"), by_kind(via, "JobSet")
        runtime_policy = runtime["spec"]["template"]["spec"]["failurePolicy"]
        if free:
            assert theirs["spec"]["failurePolicy"] == ours["spec"]["failurePolicy"] == runtime_policy
            assert ours["spec"]["failurePolicy"]["rules"][0]["action"] == "RestartJobSetAndIgnoreMaxRestarts"
        else:
            # the runtime CRD's default, JobSet's own default strategy too
            assert "restartStrategy" not in runtime_policy
            assert theirs["spec"]["failurePolicy"] == {
                **ours["spec"]["failurePolicy"],
                "restartStrategy": "Recreate",
            }
        for key in ("successPolicy", "ttlSecondsAfterFinished"):
            assert ours["spec"].get(key) == theirs["spec"].get(key), key
        # MultiKueue: the TrainJob's managedBy, which render passes on to the JobSet as for the MPIJob
        assert train_job["spec"].get("managedBy") == ours["spec"].get("managedBy")
        assert theirs["spec"].get("managedBy") == ours["spec"].get("managedBy")
        assert ours["spec"].get("suspend", False) == theirs["spec"]["suspend"]
        direct_jobs, via_jobs = pods(ours), pods(theirs)
        assert list(direct_jobs) == [jobset_names.WORKER_RJOB, jobset_names.LAUNCHER_RJOB]
        assert list(via_jobs) == [trainer_names.NODE_RJOB, trainer_names.LAUNCHER_RJOB]
        assert via_jobs["launcher"]["dependsOn"] == [{"name": "node", "status": "Ready"}]
        for mine, its in (
            (direct_jobs["worker"], via_jobs["node"]),
            (direct_jobs["launcher"], via_jobs["launcher"]),
        ):
            for key in (
                "parallelism",
                "completions",
                "backoffLimit",
                "activeDeadlineSeconds",
                "podFailurePolicy",
            ):
                assert mine["template"]["spec"].get(key) == its["template"]["spec"].get(key), key
            a, b = container(mine), container(its)
            assert b["name"] == "node"
            for key in (
                "image",
                "command",
                "args",
                "securityContext",
                "ports",
                "readinessProbe",
            ):
                assert a.get(key) == b.get(key), key
            assert typed(a.get("resources")) == typed(b.get("resources"))  # Trainer's copy is typed: 1 is "1"
            assert {
                k: v for k, v in env(a).items() if not k.startswith(("OMPI_", "PRTE_", "I_MPI", "HYDRA"))
            } == {k: v for k, v in env(b).items() if not k.startswith(("OMPI_", "I_MPI", "HYDRA"))}
            pod_a, pod_b = (
                mine["template"]["spec"]["template"]["spec"],
                its["template"]["spec"]["template"]["spec"],
            )
            assert pod_a.get("restartPolicy") == pod_b.get("restartPolicy")
            assert ("podFailurePolicy" in mine["template"]["spec"]) == free
        launcher_a, launcher_b = env(container(direct_jobs["launcher"])), env(container(via_jobs["launcher"]))
        assert {k: launcher_a[k] for k in launcher_a if k in ORTE or k.startswith(("I_MPI", "HYDRA"))} == {
            k: launcher_b[k] for k in launcher_b if k in ORTE or k.startswith(("I_MPI", "HYDRA"))
        }
        expected_hosts = hosts(by_kind(direct, "ConfigMap"), name)
        if job["spec"].get("runLauncherAsWorker"):
            expected_hosts = expected_hosts[1:] + expected_hosts[:1]  # the launcher comes last (a warning)
        assert hosts(by_kind(via, "ConfigMap"), name) == expected_hosts
        assert train_job["metadata"]["name"] == name


def test_jobs_of_one_shape_share_one_runtime() -> None:
    [job] = jobs_of(ROOT / "examples/v2beta1/pi.yaml")
    other = copy.deepcopy(job)
    other["metadata"]["name"] = "pi-two"
    other["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["args"] = [
        "-n",
        "4",
        "/home/mpiuser/pi",
    ]
    bigger = copy.deepcopy(other)
    bigger["metadata"]["name"] = "pi-three"
    bigger["spec"]["slotsPerWorker"] = 4
    docs = [Document(i + 1, d, 3) for i, d in enumerate([job, other, bigger])]
    outcome = convert([("jobs.yaml", docs)], ConvertOptions())
    assert outcome.errors == []
    kinds = [(o["kind"], o["metadata"]["name"]) for o in outcome.objects]
    runtimes = [name for kind, name in kinds if kind == "ClusterTrainingRuntime"]
    assert len(runtimes) == 2 and [k for k, _ in kinds] == [
        "ClusterTrainingRuntime",
        "TrainJob",
        "TrainJob",
        "ClusterTrainingRuntime",
        "TrainJob",
    ]
    refs = [o["spec"]["runtimeRef"]["name"] for o in outcome.objects if o["kind"] == "TrainJob"]
    assert refs == [runtimes[0], runtimes[0], runtimes[1]]


def test_option_annotations_a_trainjob_refuses_are_not_carried_over() -> None:
    """An MPIJob's mpigen.dev/* options that a TrainJob refuses (or, `target`, has no use for) are dropped
    with a warning each, so the converted TrainJob renders; the others stay and work."""
    [job] = jobs_of(ROOT / "examples/v2beta1/pi.yaml")
    job["metadata"]["annotations"] = {
        "mpigen.dev/gang-scheduler": "volcano",
        "mpigen.dev/target": "volcano",
        "mpigen.dev/network-policy": "same-job",
        "note": "kept",
    }
    runtime, train_job, warnings = convert_job(job, ConvertOptions())
    assert train_job["metadata"]["annotations"] == {"mpigen.dev/network-policy": "same-job", "note": "kept"}
    about = [w for w in warnings if w.path[:2] == ("metadata", "annotations")]
    assert [(w.path[2], w.severity) for w in about] == [
        ("mpigen.dev/gang-scheduler", "warning"),
        ("mpigen.dev/target", "warning"),
        ("mpigen.dev/network-policy", "warning"),
    ]
    assert [w.message.startswith("not carried over to the TrainJob") for w in about] == [True, True, False]
    assert "only `mpigen render` reads it" in about[2].message  # kept: Trainer ignores it
    runtimes = Runtimes()
    runtimes.add(runtime, Options())
    objects = compile_job(train_job, runtimes=runtimes).objects
    assert [o["kind"] for o in objects].count("NetworkPolicy") == 1


def test_namespaced_runtime() -> None:
    [job] = jobs_of(ROOT / "examples/v2beta1/pi.yaml")
    job["metadata"]["namespace"] = "team"
    runtime, train_job, _ = convert_job(job, ConvertOptions(namespaced=True))
    assert (runtime["kind"], runtime["metadata"]["namespace"]) == ("TrainingRuntime", "team")
    assert train_job["spec"]["runtimeRef"]["kind"] == "TrainingRuntime"


def test_kubectl_exec_transport_is_refused_with_its_field() -> None:
    [job] = jobs_of(ROOT / "examples/v1/tensorflow-mnist.yaml")
    with pytest.raises(CompileError) as caught:
        convert_job(job, ConvertOptions())
    [issue] = caught.value.issues
    assert issue.path == ("spec", "mpiReplicaSpecs", "Worker", "template", "spec", "containers", 0, "command")
    assert "kubectl exec" in issue.message and "sshd" in issue.message


def test_kubectl_exec_job_whose_worker_runs_sshd_converts() -> None:
    [job] = jobs_of(ROOT / "examples/v1/tensorflow-mnist.yaml")
    worker = job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    worker["command"] = ["/usr/sbin/sshd", "-De"]
    runtime, train_job, _ = convert_job(job, ConvertOptions())
    assert runtime["spec"]["mlPolicy"]["mpi"]["sshAuthMountPath"] == "/root/.ssh"
    assert train_job["spec"]["trainer"]["numNodes"] == job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"]


def test_no_workers_is_refused() -> None:
    [job] = jobs_of(ROOT / "examples/v2beta1/pi.yaml")
    del job["spec"]["mpiReplicaSpecs"]["Worker"]
    job["spec"]["runLauncherAsWorker"] = True
    with pytest.raises(CompileError, match="no workers"):
        convert_job(job, ConvertOptions())


def test_cli_reports_fields_without_equivalent_and_refuses_without_output() -> None:
    runner = CliRunner()
    done = runner.invoke(cli, ["convert", str(ROOT / "examples/v2beta1/pi.yaml")])
    assert done.exit_code == 0, done.stderr
    assert [d["kind"] for d in yaml.safe_load_all(done.stdout)] == ["ClusterTrainingRuntime", "TrainJob"]
    assert "warning: spec.runPolicy.cleanPodPolicy: no TrainJob equivalent" in done.stderr
    refused = runner.invoke(cli, ["convert", str(ROOT / "examples/v1/tensorflow-mnist.yaml")])
    assert (refused.exit_code, refused.stdout) == (1, "")
    assert (
        "spec.mpiReplicaSpecs.Worker.template.spec.containers[0].command: kubeflow.org/v1 launches"
        in refused.stderr
    )
