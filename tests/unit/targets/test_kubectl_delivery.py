"""The launcher's `kubectl-delivery` init container does exactly what mpigen needs, whatever the image's
version: copy the image's kubectl into the kubectl volume, nothing else. The default image's own command
(mpi-operator v0.2.3 and later) also runs a program that opens /etc/mpi/hostfile and watches the
namespace's pods, which the launcher's pod and Role do not allow; the e2e suite runs both
(tests/e2e/test_e2e_delivery.py)."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import V1, V1ALPHA1, V1ALPHA2, make_job

import mpigen
from mpigen.options import Options

COPY = ["cp", "/bin/kubectl", "/opt/kube/kubectl"]


def deliveries(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every kubectl-delivery init container in any pod template (Job, JobSet, Volcano Job)."""
    found = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for init in node.get("initContainers", []):
                if init.get("name") == "kubectl-delivery":
                    found.append(init)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(objects)
    return found


@pytest.mark.parametrize("target", ["operator", "jobset", "volcano"])
@pytest.mark.parametrize("version", [V1ALPHA1, V1ALPHA2, V1])
def test_kubectl_delivery_copies_kubectl_and_runs_nothing_else(version: str, target: str) -> None:
    (delivery,) = deliveries(mpigen.compile(make_job(version, workers=2), Options(target=target)))
    assert delivery["command"] == COPY
    assert "args" not in delivery
    # The copy lands in the volume the launcher's kubexec.sh calls kubectl from.
    assert {"name": "mpi-job-kubectl", "mountPath": "/opt/kube"} in delivery["volumeMounts"]


@pytest.mark.parametrize("image", ["mpioperator/kubectl-delivery:v0.2.0", "registry.example/kd:1"])
def test_an_image_given_by_option_gets_the_same_command(image: str) -> None:
    objects = mpigen.compile(make_job(V1ALPHA2), Options(kubectl_delivery_image=image))
    (delivery,) = deliveries(objects)
    assert (delivery["image"], delivery["command"]) == (image, COPY)
