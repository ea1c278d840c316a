"""The API server's own reading of the deprecated pod field `serviceAccount`, the judge of
mpigen.inputs.aliases: a StatefulSet whose template names a `serviceAccount` is accepted (also when it
disagrees with `serviceAccountName`), and the server keeps `serviceAccountName`'s value, copying it into
the alias, or fills an empty `serviceAccountName` from it. mpigen's output for such a job names the same
account in `serviceAccountName` and is accepted as it is."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from controlplane import Cluster
from mpijobs import compiled, find, job, manifest

Obj = dict[str, Any]


def worker_set(service_account: str | None, deprecated: str) -> Obj:
    """The worker StatefulSet of a small v2beta1 job, its template's accounts as given (mpigen's own
    output, changed back to what the user wrote)."""
    objects = compiled(job("v2beta1", "alias"), None)
    workers = copy.deepcopy(find(objects, "StatefulSet", "-worker"))
    pod = workers["spec"]["template"]["spec"]
    pod.pop("serviceAccountName", None)
    pod.pop("automountServiceAccountToken", None)
    if service_account is not None:
        pod["serviceAccountName"] = service_account
    pod["serviceAccount"] = deprecated
    return workers


@pytest.mark.parametrize(
    ("service_account", "deprecated", "stored"),
    [(None, "runner", "runner"), ("runner", "old", "runner"), ("runner", "runner", "runner")],
)
def test_the_server_reads_service_account_as_mpigen_does(
    cluster: Cluster, namespace: str, service_account: str | None, deprecated: str, stored: str
) -> None:
    sent = worker_set(service_account, deprecated)
    done = cluster.kubectl(
        "create", "--dry-run=server", "-o", "json", "-n", namespace, "-f", "-", input=json.dumps(sent)
    )
    pod = json.loads(done.stdout)["spec"]["template"]["spec"]
    assert (pod["serviceAccountName"], pod["serviceAccount"]) == (stored, stored)
    # mpigen's own reading of the same template: the account the server keeps, in serviceAccountName
    document = job("v2beta1", "alias")
    template = document["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
    template["serviceAccount"] = deprecated
    if service_account is not None:
        template["serviceAccountName"] = service_account
    objects = compiled(document, None)
    ours = find(objects, "StatefulSet", "-worker")["spec"]["template"]["spec"]
    assert ours["serviceAccountName"] == stored and "serviceAccount" not in ours
    accepted = cluster.kubectl(
        "apply", "--dry-run=server", "-n", namespace, "-f", "-", input=manifest(objects), check=False
    )
    assert accepted.returncode == 0, accepted.stderr
