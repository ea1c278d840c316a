"""mpigen's TrainJob compile judged by Kubeflow Trainer's own code (the oracle, tests/oracles/trainer).

Every TrainJob of the golden corpus (golden/trainjob-*) and of Trainer's own MPI runtimes (v2.3.0's
deepspeed-distributed and mlx-distributed, read from the pinned module, with TrainJobs made here that set
every field v2.1-v2.3 added) is compiled by both, and the objects are compared field by field. mpigen's
options (`mpigen.dev/*` annotations) are mpigen's own: a TrainJob is compiled without them here, and their
effect is pinned by the golden bytes. The only differences allowed are the departures listed
in docs/departures.md ("Kubeflow Trainer TrainJobs"); `undo_departures` takes each one back out of mpigen's
objects and asserts that it is exactly what the list says, so a departure that changes, or a difference
that is not listed, fails:

1. no ownerReferences (no TrainJob object exists in the cluster);
2. the SSH Secret is rendered empty, `Opaque` and mutable, and filled in the cluster by the key Job
   `<job>-ssh-keygen` (its ServiceAccount, Role, RoleBinding and script ConfigMap `<job>-config`): Trainer
   writes a `kubernetes.io/ssh-auth` immutable Secret holding a fresh ECDSA P-521 key;
3. mpigen's `app.kubernetes.io/*` labels on each object's metadata;
4. the JobSet webhook's defaults written out (successPolicy, startupPolicy, network, completionMode, the
   pods' restartPolicy) where the runtime leaves them out;
5. Intel MPI and MPICH runtimes compile (Trainer's CRD takes OpenMPI only): the same objects as the Open
   MPI runtime but for the launcher's MPI variables and the hostfile's `host:slots` syntax;
6. a runtime with another ML policy (torch) is refused (Trainer runs it);
8. a hostfile larger than a ConfigMap holds (1 MiB), or than the 256 KiB annotation client-side `kubectl apply`
   adds allows, is refused (Trainer writes it, the API server refuses it);
9. a runtime volume given another source by a runtime patch is refused (Trainer merges the two sources,
   which the API server refuses when the Job is created), in golden/trainjob-error-webhook;
7. a TrainJob that names no namespace gives objects that name none (`kubectl apply -n` decides, as for
   an MPIJob); Trainer's are in the TrainJob's, `default` here;
10. no `<job>-runtime-snapshot` ConfigMap (Trainer v2.3 stores the runtime it read there, for its own
   later reconciles; nothing else reads it);
11. `activeDeadlineSeconds`: every child Job's `activeDeadlineSeconds` (Trainer's controller fails the
   TrainJob and deletes the JobSet instead; mpigen has no controller);
12. `managedBy: kueue.x-k8s.io/multikueue`: the JobSet's `spec.managedBy` (Trainer's controller leaves such
   a TrainJob alone and MultiKueue runs it on a worker cluster; mpigen hands MultiKueue the JobSet);
13. a runtime's launcher or node volume named like the MPI plugin's (`mpi-ssh-auth`, `mpi-hostfile`) or a
   `node` mount at its paths is refused (Trainer replaces it), in golden/trainjob-error-runtimes;
14. a launcher or node job of more than one replica is refused (mpigen's hostfile holds one), ibid.;
15. a runtime patch naming a replicated job or container the runtime lacks is refused at its name:
   Trainer's webhook checks the patches after merging them, so it admits them and builds a JobSet with a
   job or container the API server refuses (tests/oracles/test_trainer_oracle.py shows it);
16. free disruptions: each job whose pods the runtime leaves without a restartPolicy gets `Never` (Trainer's
   JobSet gets the webhook's OnFailure) and, like one that says Never, the podFailurePolicy
   `DisruptionTarget -> FailJob`; the JobSet gets the rule `PodFailurePolicy ->
   RestartJobSetAndIgnoreMaxRestarts` and, without a failurePolicy of the runtime's, `restartStrategy:
   BlockingRecreate` (Trainer passes the runtime's failure policies through and adds none).

Refusals: each TrainJob that mpigen refuses in an error golden (the case's `args` as its annotations) is
refused by the oracle too, but for the torch runtime (departure 6) and mpigen's own options, which are
not Trainer's to judge (an option refused for a TrainJob, `--gang-scheduler kubernetes` beside a
runtime's own gang or with `--topology preferred:`: Trainer runs the job).

The oracle's own noise (the typed-to-apply conversion's `resources: {}` and `metadata: {}`, a namespace of
"" for a TrainJob that names none) is removed from its side.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import trainer_oracle
import yaml

from golden import annotated, option_annotations
from mpigen import names
from mpigen.checks import objectsize
from mpigen.compiler import compile_job
from mpigen.errors import CompileError
from mpigen.inputs import trainer_names
from mpigen.inputs.trainjob import Runtimes, is_runtime, is_trainjob
from mpigen.options import Options

pytestmark = pytest.mark.slow

Obj = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
GOLDEN = sorted(ROOT.glob("golden/trainjob-*/input.yaml"))
MPIGEN_LABELS = (
    "app.kubernetes.io/name",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/component",
    "app.kubernetes.io/managed-by",
)
WEBHOOK_DEFAULTS = {
    ("spec", "successPolicy"): {"operator": "All"},
    ("spec", "startupPolicy"): {"startupPolicyOrder": "AnyOrder"},
    ("spec", "network", "enableDNSHostnames"): True,
    ("spec", "network", "publishNotReadyAddresses"): True,
}
OTHER_IMPLEMENTATIONS = ("Intel", "MPICH")


def documents(path: Path) -> list[Obj]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def mpigen_objects(docs: list[Obj], job: Obj) -> list[Obj]:
    """mpigen's objects for `job`, without its mpigen.dev/* options (mpigen's own)."""
    runtimes = Runtimes()
    for doc in filter(is_runtime, docs):
        runtimes.add(doc, Options())
    job = copy.deepcopy(job)
    annotations = job["metadata"].get("annotations") or {}
    for key in [k for k in annotations if k.startswith("mpigen.dev/")]:
        del annotations[key]
    return compile_job(job, runtimes=runtimes).objects


def oracle_objects(docs: list[Obj], job: Obj) -> list[Obj]:
    """The oracle on the TrainJob and the runtimes of its name (another one's problem is not its)."""
    named = [
        d for d in filter(is_runtime, docs) if d["metadata"]["name"] == job["spec"]["runtimeRef"]["name"]
    ]
    classes = [d for d in docs if d.get("kind") == "PriorityClass"]  # the cluster's, for the Volcano plugin
    return trainer_oracle.run([*classes, *named, job])


# --- the oracle's noise -----------------------------------------------------------------------------


def without_noise(value: Any) -> Any:
    """The oracle's objects without `resources: {}` and template `metadata: {}` (typed-to-apply noise)."""
    if isinstance(value, list):
        return [without_noise(item) for item in value]
    if not isinstance(value, dict):
        return value
    return {
        key: without_noise(item)
        for key, item in value.items()
        if not (key in ("resources", "metadata", "minResources") and item == {})
        and not (key == "namespace" and item == "")
    }


# --- departures ---------------------------------------------------------------------------------------


def undo_departures(objects: list[Obj], oracle: list[Obj], job: str, spec: Obj) -> list[Obj]:
    """mpigen's objects with each listed departure taken out, asserting it is exactly that."""
    key_job = f"{job}{names.SSH_KEYGEN_SUFFIX}"
    # 2. the key Job and what it needs; the Secret compared on its own
    extra = [
        (o["kind"], o["metadata"]["name"])
        for o in objects
        if o["metadata"]["name"] in (key_job, names.config_map(job))
    ]
    assert extra == [
        ("ServiceAccount", key_job),
        ("Role", key_job),
        ("RoleBinding", key_job),
        ("ConfigMap", names.config_map(job)),
        ("Job", key_job),
    ]
    [secret] = [o for o in objects if o["kind"] == "Secret"]
    [theirs] = [o for o in oracle if o["kind"] == "Secret"]
    assert secret["metadata"]["name"] == theirs["metadata"]["name"] == trainer_names.trainjob_ssh_secret(job)
    assert (secret["type"], "data" in secret, "immutable" in secret) == ("Opaque", False, False)
    assert (theirs["type"], theirs["immutable"], sorted(theirs["data"])) == (
        "kubernetes.io/ssh-auth",
        True,
        [names.SSH_PRIVATE_KEY, names.SSH_PUBLIC_KEY],
    )
    kept = []
    for obj in objects:
        if obj["kind"] == "Secret" or obj["metadata"]["name"] in (key_job, names.config_map(job)):
            continue
        obj = copy.deepcopy(obj)
        # 3. mpigen's labels
        labels = obj["metadata"].pop("labels")
        assert {k: labels.pop(k) for k in MPIGEN_LABELS} == {
            **names.standard_labels(job, labels_component(obj)),
            "app.kubernetes.io/name": "trainjob",
        }
        if labels:
            obj["metadata"]["labels"] = labels
        if obj["kind"] == "JobSet":
            [their_jobset] = [o for o in oracle if o["kind"] == "JobSet"]
            undo_free_disruptions(obj, their_jobset)
            undo_webhook_defaults(obj, their_jobset)
            undo_controller_fields(obj, spec)
        kept.append(obj)
    return kept


def undo_controller_fields(jobset: Obj, spec: Obj) -> None:
    """11. activeDeadlineSeconds on every child Job; 12. MultiKueue's managedBy on the JobSet."""
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None:
        for job in jobset["spec"]["replicatedJobs"]:
            assert job["template"]["spec"].pop("activeDeadlineSeconds") == deadline
    if spec.get("managedBy") == "kueue.x-k8s.io/multikueue":
        assert jobset["spec"].pop("managedBy") == "kueue.x-k8s.io/multikueue"
    else:
        assert "managedBy" not in jobset["spec"]


FREE_POD_FAILURE_POLICY = {
    "rules": [{"action": "FailJob", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]
}
FREE_RULE = {
    "name": "disruption",
    "action": "RestartJobSetAndIgnoreMaxRestarts",
    "onJobFailureReasons": ["PodFailurePolicy"],
}


def undo_free_disruptions(jobset: Obj, theirs: Obj) -> None:
    """16. the podFailurePolicy on each job Trainer leaves without one (its pods Never where Trainer's
    get the webhook's OnFailure), the JobSet rule on its reason and the blocking restart strategy. A
    runtime that holds them already (a converted MPIJob's) gives both the same; a runtime with a failure
    policy of its own gets none of them."""
    their_policy = theirs["spec"].get("failurePolicy")
    if FREE_RULE in (their_policy or {}).get("rules", []):
        return  # the runtime's, passed through by both
    policy = jobset["spec"].get("failurePolicy") or {}
    added = FREE_RULE in policy.get("rules", [])
    for ours, their in zip(jobset["spec"]["replicatedJobs"], theirs["spec"]["replicatedJobs"], strict=True):
        job, their_job = ours["template"]["spec"], their["template"]["spec"]
        if "podFailurePolicy" in their_job or "podFailurePolicy" not in job:
            continue
        assert added and job.pop("podFailurePolicy") == FREE_POD_FAILURE_POLICY
        pod = job["template"]["spec"]
        if "restartPolicy" not in their_job["template"].get("spec", {}):
            assert pod["restartPolicy"] == "Never"
            pod["restartPolicy"] = "OnFailure"  # the webhook's, undone as departure 4
    if not added:
        return
    policy["rules"].remove(FREE_RULE)
    if not policy["rules"]:
        del policy["rules"]
    if their_policy is None:
        assert policy == {"restartStrategy": "BlockingRecreate"}
        del jobset["spec"]["failurePolicy"]


def labels_component(obj: Obj) -> str:
    return {"JobSet": "job", "ConfigMap": "config", "PodGroup": "scheduling"}[obj["kind"]]


def undo_webhook_defaults(jobset: Obj, theirs: Obj) -> None:
    """4. JobSet's defaulting webhook's values, written out where the runtime has none."""
    for path, value in WEBHOOK_DEFAULTS.items():
        if _get(theirs, path) is None:
            assert _get(jobset, path) == value, path
            _pop(jobset, path)
    for ours, their in zip(jobset["spec"]["replicatedJobs"], theirs["spec"]["replicatedJobs"], strict=True):
        for path, value in (
            (("template", "spec", "completionMode"), "Indexed"),
            (("template", "spec", "template", "spec", "restartPolicy"), "OnFailure"),
        ):
            if _get(their, path) is None:
                assert _get(ours, path) == value, path
                _pop(ours, path)


def _get(obj: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(obj, dict) or key not in obj:
            return None
        obj = obj[key]
    return obj


def _pop(obj: Obj, path: tuple[str, ...]) -> None:
    parent = _get(obj, path[:-1])
    del parent[path[-1]]
    if not parent and len(path) > 1:
        _pop(obj, path[:-1])


def compared(oracle: list[Obj], namespaced: bool) -> list[Obj]:
    """The oracle's objects but the Secret (compared in undo_departures), without ownerReferences (1) and,
    for a TrainJob that names no namespace, without the oracle's `default` (7)."""
    kept = []
    snapshots = [o for o in oracle if o["metadata"]["name"].endswith("-runtime-snapshot")]
    assert [o["kind"] for o in snapshots] == ["ConfigMap"], "10. the runtime snapshot, Trainer's own"
    for obj in without_noise(oracle):
        if obj["kind"] == "Secret" or obj in snapshots:
            continue
        assert [ref["kind"] for ref in obj["metadata"].pop("ownerReferences")] == ["TrainJob"]
        if not namespaced:
            assert obj["metadata"].pop("namespace") == "default"
        kept.append(obj)
    return kept


def assert_same(docs: list[Obj], job: Obj) -> None:
    ours = mpigen_objects(docs, job)
    theirs = oracle_objects(docs, job)
    name = job["metadata"]["name"]
    expected = sorted(
        compared(theirs, "namespace" in job["metadata"]), key=lambda o: (o["kind"], o["metadata"]["name"])
    )
    actual = sorted(
        undo_departures(ours, theirs, name, job["spec"]), key=lambda o: (o["kind"], o["metadata"]["name"])
    )
    assert actual == expected


# --- the cases ---------------------------------------------------------------------------------------


def golden_jobs() -> list[Any]:
    """The golden TrainJobs Trainer can compile: those of an Intel MPI or MPICH runtime, which Trainer
    refuses, are test_other_implementations_are_a_departure's."""
    found = []
    for path in GOLDEN:
        if (path.parent / "errors.txt").exists() or implementation(documents(path)) in OTHER_IMPLEMENTATIONS:
            continue
        for job in filter(is_trainjob, documents(path)):
            found.append(pytest.param(path, job, id=f"{path.parent.name}/{job['metadata']['name']}"))
    return found


def implementation(docs: list[Obj]) -> str:
    return str(next(filter(is_runtime, docs))["spec"]["mlPolicy"]["mpi"].get("mpiImplementation", "OpenMPI"))


@pytest.mark.parametrize(("path", "job"), golden_jobs())
def test_golden_trainjob_matches_trainer(path: Path, job: Obj) -> None:
    assert_same(documents(path), job)


def as_openmpi(docs: list[Obj]) -> list[Obj]:
    docs = copy.deepcopy(docs)
    for doc in filter(is_runtime, docs):
        doc["spec"]["mlPolicy"]["mpi"]["mpiImplementation"] = "OpenMPI"
    return docs


OTHER_GOLDEN = sorted(
    path.parent.name
    for path in GOLDEN
    if not (path.parent / "errors.txt").exists() and implementation(documents(path)) in OTHER_IMPLEMENTATIONS
)


def test_each_implementation_beyond_trainer_has_a_golden_case() -> None:
    assert OTHER_GOLDEN == ["trainjob-intel", "trainjob-mpich"]


@pytest.mark.parametrize("case", OTHER_GOLDEN)
def test_other_implementations_are_a_departure(case: str) -> None:
    """5. Trainer refuses them; mpigen's objects are the Open MPI ones but the variables and the hostfile."""
    docs = documents(ROOT / "golden" / case / "input.yaml")
    [job] = filter(is_trainjob, docs)
    with pytest.raises(trainer_oracle.OracleRefused, match="MPI implementation for .* doesn't supported"):
        oracle_objects(docs, job)
    wanted = implementation(docs)
    ours = {(o["kind"], o["metadata"]["name"]): o for o in mpigen_objects(docs, job)}
    openmpi = {(o["kind"], o["metadata"]["name"]): o for o in mpigen_objects(as_openmpi(docs), job)}
    assert_same(as_openmpi(docs), job)  # the Open MPI twin is Trainer's, departures apart
    name = job["metadata"]["name"]
    hostfile = ("ConfigMap", trainer_names.trainjob_hostfile(name))
    assert ours[hostfile]["data"]["hostfile"] == openmpi[hostfile]["data"]["hostfile"].replace(" slots=", ":")
    env_names = {
        "Intel": ["I_MPI_HYDRA_HOST_FILE", "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", "I_MPI_PERHOST"],
        "MPICH": ["HYDRA_HOST_FILE", "HYDRA_LAUNCH_EXTRA_ARGS"],
    }
    ours_js, theirs_js = ours[("JobSet", name)], openmpi[("JobSet", name)]
    ours_env = ours_js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][
        0
    ].pop("env")
    theirs_env = theirs_js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][
        0
    ].pop("env")
    assert [v["name"] for v in ours_env] == env_names[wanted] + [v["name"] for v in theirs_env[4:]]
    assert ours_env[len(env_names[wanted]) :] == theirs_env[4:]  # the TrainJob's own, after the MPI ones
    assert ours_js == theirs_js
    assert {k: v for k, v in ours.items() if k != hostfile and k[0] != "JobSet"} == {
        k: v for k, v in openmpi.items() if k != hostfile and k[0] != "JobSet"
    }


def refused_golden_jobs() -> list[Any]:
    """Each TrainJob of an error golden, with the case's `args` as its `mpigen.dev/*` annotations (a
    refusal may be of the options the case renders with)."""
    found = []
    for path in GOLDEN:
        if (path.parent / "errors.txt").exists():
            args_file = path.parent / "args"
            args = [a for a in args_file.read_text().split("\n") if a] if args_file.exists() else []
            for job in filter(is_trainjob, documents(path)):
                job = annotated(job, option_annotations(args), replace=False)
                found.append(pytest.param(path, job, id=f"{path.parent.name}/{job['metadata']['name']}"))
    return found


# Refusals that are not the oracle's to judge: mpigen's options (its own), and the CRD's CEL rules and
# list-map keys, which the API server checks before Trainer's code runs (the oracle evaluates neither).
NOT_THE_ORACLES = (
    "refused for a TrainJob",
    "--gang-scheduler kubernetes with a runtime that asks for a gang of its own",
    "is refused on the jobset target with --gang-scheduler kubernetes",
    "ManagedBy must be",
    "Duplicate value",
)
# 15. refused by mpigen, admitted by Trainer's webhook (which checks the patches after merging them).
UNKNOWN_IN_PATCH = ("doesn't exist in the runtime job",)


@pytest.mark.parametrize(("path", "job"), refused_golden_jobs())
def test_refused_by_both(path: Path, job: Obj) -> None:
    docs = documents(path)
    runtimes = Runtimes()
    for doc in filter(is_runtime, docs):
        runtimes.add(doc, Options())
    with pytest.raises(CompileError) as refused:
        compile_job(job, runtimes=runtimes)
    messages = [issue.message for issue in refused.value.issues]
    if all(any(marker in message for marker in NOT_THE_ORACLES + UNKNOWN_IN_PATCH) for message in messages):
        assert [o["kind"] for o in oracle_objects(docs, job) if o["kind"] == "JobSet"] == ["JobSet"]
        return
    if any("hosts do not fit: the ConfigMap" in message for message in messages):
        # 8. Trainer writes the hostfile ConfigMap, which the API server (or kubectl's annotation) refuses
        [hostfile] = [o for o in oracle_objects(docs, job) if o["metadata"]["name"].endswith("-mpi-hostfile")]
        assert (
            len(hostfile["data"]["hostfile"].encode()) > 1024 * 1024
            or objectsize.last_applied_bytes(hostfile) > objectsize.ANNOTATIONS_MAX_BYTES
        )
        return
    runtime = job["spec"]["runtimeRef"]["name"]
    torch = [
        d
        for d in filter(is_runtime, docs)
        if d["metadata"]["name"] == runtime and "torch" in d["spec"]["mlPolicy"]
    ]
    if torch:
        # 6. Trainer runs a torch runtime; mpigen refuses it
        assert [o["kind"] for o in oracle_objects(docs, job) if o["kind"] != "ConfigMap"] == ["JobSet"]
        return
    with pytest.raises(trainer_oracle.OracleRefused):
        oracle_objects(docs, job)


@pytest.mark.parametrize("where", ["node", "launcher", "both"])
def test_slots_from_the_runtimes_gpus_match_trainer(where: str) -> None:
    """numProcPerNode 1 and no resourcesPerNode: the GPU count of the first `node` container of the node or
    trainer job, with resources or not (Trainer's typed copy has no nil resources)."""
    [runtime] = trainer_oracle.shipped("manifests/base/runtimes/deepspeed_distributed.yaml")
    for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        if where in (job["name"], "both"):
            gpus = 2 if job["name"] == "node" else 8
            job["template"]["spec"]["template"]["spec"]["containers"][0]["resources"] = {
                "limits": {"nvidia.com/gpu": gpus}
            }
    job = {
        "apiVersion": trainer_names.TRAINER_API,
        "kind": "TrainJob",
        "metadata": {"name": f"gpu-{where}", "namespace": "team"},
        "spec": {"runtimeRef": {"name": runtime["metadata"]["name"]}, "trainer": {"numNodes": 2}},
    }
    assert_same([runtime], job)


def test_a_volcano_pod_priority_class_matches_trainer() -> None:
    """The Volcano plugin puts the pods' priorityClassName on the PodGroup, after checking that the cluster
    has the class (a PriorityClass handed to the oracle as the cluster's; mpigen cannot check it)."""
    docs = documents(ROOT / "golden" / "trainjob-volcano-network-topology" / "input.yaml")
    [runtime] = filter(is_runtime, docs)
    for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        job["template"]["spec"]["template"]["spec"]["priorityClassName"] = "training"
    [job] = filter(is_trainjob, docs)
    priority = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "training"},
        "value": 1,
    }
    [group] = [o for o in mpigen_objects(docs, job) if o["kind"] == "PodGroup"]
    assert group["spec"]["priorityClassName"] == "training"
    assert_same([priority, *docs], job)
    with pytest.raises(trainer_oracle.OracleRefused, match='PriorityClass "training" doesn\'t exist'):
        oracle_objects(docs, job)


# --- Trainer's own MPI runtimes --------------------------------------------------------------------

SHIPPED = [
    "manifests/base/runtimes/deepspeed_distributed.yaml",
    "manifests/base/runtimes/mlx_distributed.yaml",
]
TRAINERS = {
    "bare": {},
    "sized": {"numNodes": 4, "numProcPerNode": 3, "resourcesPerNode": {"limits": {"nvidia.com/gpu": "1"}}},
    "gpus": {"numNodes": 3, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 4}, "requests": {"cpu": "2"}}},
    "one-node": {
        "numNodes": 1,
        "image": "registry.example/train:2",
        "command": ["mpirun", "train"],
        "args": ["--epochs", "3"],
    },
    "env": {
        "numNodes": 2,
        "env": [
            {"name": "OMPI_MCA_btl", "value": "^openib"},
            {"name": "X", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
        ],
    },
}


_LABELS = {"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "q"}, "annotations": {"note": "n"}}}
_PATCHED = {
    "replicatedJobs": [
        {
            "name": "node",
            "template": {
                "metadata": {"labels": {"tier": "node"}},
                "spec": {
                    "template": {
                        "metadata": {"annotations": {"a": "b"}},
                        "spec": {
                            "nodeSelector": {"pool": "gpu"},
                            "tolerations": [{"key": "gpu", "operator": "Exists"}],
                            "volumes": [{"name": "scratch", "emptyDir": {}}],
                            "containers": [
                                {"name": "node", "volumeMounts": [{"name": "scratch", "mountPath": "/s"}]}
                            ],
                        },
                    }
                },
            },
        },
        {"name": "launcher", "template": {"spec": {"template": {"spec": {"serviceAccountName": "runner"}}}}},
    ]
}
# Fields of Trainer v2.1-v2.3 beside spec.trainer, per TrainJob of the shipped runtimes.
SPECS: dict[str, Obj] = {
    "bare": {
        "runtimePatches": [{"manager": "example.com/labels", "trainingRuntimeSpec": {"template": _LABELS}}]
    },
    "sized": {
        "activeDeadlineSeconds": 600,
        "runtimePatches": [
            {"manager": "example.com/first", "trainingRuntimeSpec": {"template": {"spec": _PATCHED}}},
            {
                "manager": "example.com/second",
                "trainingRuntimeSpec": {
                    "template": {
                        "spec": {
                            "replicatedJobs": [
                                {
                                    "name": "node",
                                    "template": {
                                        "spec": {"template": {"spec": {"nodeSelector": {"pool": "big"}}}}
                                    },
                                }
                            ]
                        }
                    }
                },
            },
        ],
    },
    "gpus": {"managedBy": "kueue.x-k8s.io/multikueue", "suspend": True},
}


@pytest.mark.parametrize("shipped", SHIPPED)
@pytest.mark.parametrize("trainer", sorted(TRAINERS))
def test_shipped_runtimes_match_trainer(shipped: str, trainer: str) -> None:
    [runtime] = trainer_oracle.shipped(shipped)
    spec: Obj = {"runtimeRef": {"name": runtime["metadata"]["name"]}, **SPECS.get(trainer, {})}
    if TRAINERS[trainer]:
        spec["trainer"] = TRAINERS[trainer]
    job = {
        "apiVersion": trainer_names.TRAINER_API,
        "kind": "TrainJob",
        "metadata": {"name": f"j-{trainer}", "namespace": "team"},
        "spec": spec,
    }
    assert_same([runtime], job)


# --- converted MPIJobs (mpigen convert) -------------------------------------------------------------


@pytest.mark.parametrize("path", sorted((ROOT / "examples" / "v2beta1").glob("*.yaml")), ids=lambda p: p.name)
def test_converted_mpijobs_match_trainer(path: Path) -> None:
    """What `mpigen convert` writes is a TrainJob and runtime Trainer takes, and compiles as Trainer does
    (Intel MPI and MPICH as their Open MPI twins, departure 5)."""
    from mpigen.convert import ConvertOptions, convert_job

    for mpijob in documents(path):
        runtime, job, _ = convert_job(mpijob, ConvertOptions())
        if runtime["spec"]["mlPolicy"]["mpi"]["mpiImplementation"] in OTHER_IMPLEMENTATIONS:
            runtime = as_openmpi([runtime])[0]
        assert_same([runtime], job)


def test_the_trainjob_examples_match_trainer() -> None:
    docs = [
        doc for path in sorted((ROOT / "examples" / "trainjob").glob("*.yaml")) for doc in documents(path)
    ]
    jobs = list(filter(is_trainjob, docs))
    assert jobs
    for job in jobs:
        assert_same(docs, job)


def test_the_vendored_trainer_schemas_and_defaults_are_the_pinned_crds() -> None:
    """schemas/*-trainer-v1alpha1.json and trainer-defaults-v1alpha1.json are what tools/trainerschema.py
    writes from the CRDs of the Trainer version the oracle pins."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "trainerschema.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
