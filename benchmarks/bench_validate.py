"""Benchmark: how long output validation takes, cold (first job in a process) and warm.

Validates the objects of one typical MPIJob (ServiceAccount, Role, RoleBinding, ConfigMap, PodGroup,
worker StatefulSet, launcher Job) cold and warm, then those of 1,000 such jobs, then a job with a typo
(valid objects never import jsonschema; the first error does). Run it in a fresh process, since the
cold numbers include loading the schemas:

    python benchmarks/bench_validate.py [--kube-version 1.30] [--jobs 1000]
"""

from __future__ import annotations

import argparse
import copy
import time
from typing import Any

from mpigen.checks.kube.validator import validate_object
from mpigen.checks.kube.versions import DEFAULT_KUBE_VERSION


def pod_template(name: str, role: str, command: list[str]) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"mpi_job_name": name, "mpi_role_type": role}},
        "spec": {
            "serviceAccountName": f"{name}-launcher",
            "schedulerName": "volcano",
            "containers": [
                {
                    "name": role,
                    "image": "mpioperator/tensorflow-benchmarks:latest",
                    "command": command,
                    "env": [{"name": "OMPI_MCA_plm_rsh_agent", "value": "/etc/mpi/kubexec.sh"}],
                    "resources": {"limits": {"nvidia.com/gpu": 2, "cpu": "4", "memory": "8Gi"}},
                    "volumeMounts": [{"name": "mpi-job-config", "mountPath": "/etc/mpi"}],
                }
            ],
            "volumes": [
                {
                    "name": "mpi-job-config",
                    "configMap": {
                        "name": f"{name}-config",
                        "items": [
                            {"key": "kubexec.sh", "path": "kubexec.sh", "mode": 365},
                            {"key": "hostfile", "path": "hostfile", "mode": 292},
                        ],
                    },
                }
            ],
        },
    }


def job_objects(index: int) -> list[dict[str, Any]]:
    """The objects mpigen emits for one MPIJob with 4 workers, gang-scheduled by Volcano."""
    name, labels = f"tf-{index}", {"mpi_job_name": f"tf-{index}"}
    meta = {"name": name, "namespace": "default", "labels": labels}
    account = {**meta, "name": f"{name}-launcher"}
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": account},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": account,
            "rules": [
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
                {
                    "apiGroups": [""],
                    "resources": ["pods/exec"],
                    "verbs": ["create"],
                    "resourceNames": [f"{name}-worker-{i}" for i in range(4)],
                },
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": account,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": account["name"]},
            "subjects": [{"kind": "ServiceAccount", "name": account["name"], "namespace": "default"}],
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {**meta, "name": f"{name}-config"},
            "data": {
                "hostfile": "".join(f"{name}-worker-{i} slots=2\n" for i in range(4)),
                "kubexec.sh": '#!/bin/sh\nset -x\nPOD_NAME=$1\nshift\n/opt/kube/kubectl exec ${POD_NAME} -- /bin/sh -c "$*"\n',
            },
        },
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": meta,
            "spec": {"minMember": 5, "queue": "default", "minResources": {"nvidia.com/gpu": 8, "cpu": "16"}},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {**meta, "name": f"{name}-worker"},
            "spec": {
                "podManagementPolicy": "Parallel",
                "replicas": 4,
                "selector": {"matchLabels": {**labels, "mpi_role_type": "worker"}},
                "serviceName": f"{name}-worker",
                "template": pod_template(name, "worker", ["sleep", "365d"]),
            },
        },
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {**meta, "name": f"{name}-launcher"},
            "spec": {
                "backoffLimit": 6,
                "template": {
                    **pod_template(name, "launcher", ["mpirun", "-np", "8", "python", "train.py"]),
                    "spec": {
                        **pod_template(name, "launcher", ["mpirun"])["spec"],
                        "restartPolicy": "OnFailure",
                    },
                },
            },
        },
    ]


def validate_all(objects: list[dict[str, Any]], kube_version: str) -> int:
    return sum(len(validate_object(obj, kube_version)) for obj in objects)


def pod_rules(objects: list[dict[str, Any]], kube_version: str) -> tuple[float, int]:
    """The API server's pod rules (mpigen.checks.pod) on the same objects, imported on first use."""
    start = time.perf_counter()
    from mpigen.checks.pod import check_object, version_tuple

    version = version_tuple(kube_version)
    found = sum(len(check_object(obj, version)) for obj in objects)
    return time.perf_counter() - start, found


def timed(objects: list[dict[str, Any]], kube_version: str) -> tuple[float, int]:
    start = time.perf_counter()
    issues = validate_all(objects, kube_version)
    return time.perf_counter() - start, issues


def with_typo(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same objects, the worker StatefulSet's container with a misspelt `resources`."""
    worker = copy.deepcopy(objects[5])
    container = worker["spec"]["template"]["spec"]["containers"][0]
    container["resurces"] = container.pop("resources")
    return [*objects[:5], worker, *objects[6:]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kube-version", default=DEFAULT_KUBE_VERSION)
    parser.add_argument("--jobs", type=int, default=1000)
    args = parser.parse_args()
    version = args.kube_version
    one = job_objects(0)
    cold, issues = timed(one, version)
    warm, _ = timed(job_objects(1), version)
    many = [obj for i in range(args.jobs) for obj in job_objects(i)]
    bulk, bulk_issues = timed(many, version)
    bad_cold, bad_issues = timed(with_typo(job_objects(2)), version)
    bad_warm, _ = timed(with_typo(job_objects(3)), version)
    print(f"Kubernetes {version}, {len(one)} objects per job")
    print(f"one job, cold:  {cold * 1e3:8.2f} ms  ({issues} issues)")
    print(f"one job, warm:  {warm * 1e3:8.2f} ms")
    per_object = bulk / len(many) * 1e6
    print(
        f"{args.jobs} jobs ({len(many)} objects): {bulk:.3f} s = {per_object:.0f} us/object ({bulk_issues} issues)"
    )
    print(f"one job with a typo, first error in the process: {bad_cold * 1e3:8.2f} ms  ({bad_issues} issues)")
    print(f"one job with a typo, warm:                       {bad_warm * 1e3:8.2f} ms")
    pods_cold, pod_issues = pod_rules(job_objects(4), version)
    pods_warm, _ = pod_rules(job_objects(5), version)
    pods_bulk, pods_bulk_issues = pod_rules(many, version)
    print(f"pod rules, one job, cold (import included): {pods_cold * 1e3:8.2f} ms  ({pod_issues} refusals)")
    print(f"pod rules, one job, warm:                   {pods_warm * 1e3:8.2f} ms")
    print(f"pod rules, {args.jobs} jobs: {pods_bulk:.3f} s ({pods_bulk_issues} refusals)")


if __name__ == "__main__":
    main()
