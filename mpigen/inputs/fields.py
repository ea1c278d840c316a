"""Field homes: where each MPIJob spec field lives in each apiVersion, for "did you mean" help.

A job copied from another version's example often carries a field this version spells elsewhere
(`spec.cleanPodPolicy` is `spec.runPolicy.cleanPodPolicy` in kubeflow.org/v2beta1) or does not have
at all (`sshAuthMountPath` exists only in v2beta1). A plain "unknown field", or a guess at a similar
name, leaves the user lost; `explain_unknown_fields` says where the field lives in this version, or
which versions have it.
"""

from __future__ import annotations

from mpigen.errors import Issue

V1ALPHA1 = "kubeflow.org/v1alpha1"
V1ALPHA2 = "kubeflow.org/v1alpha2"
V1 = "kubeflow.org/v1"
V2BETA1 = "kubeflow.org/v2beta1"
_REPLICA_VERSIONS = (V1ALPHA2, V1, V2BETA1)


def _in(versions: tuple[str, ...], path: str) -> dict[str, str]:
    return {version: path for version in versions}


def _run_policy(field: str, *older: str) -> dict[str, str]:
    return {**_in(older, f"spec.{field}"), **_in((V1, V2BETA1), f"spec.runPolicy.{field}")}


# field name -> {apiVersion: the field's full path in that version}, oldest version first.
HOMES: dict[str, dict[str, str]] = {
    "slotsPerWorker": _in((V1ALPHA1, *_REPLICA_VERSIONS), "spec.slotsPerWorker"),
    "mpiReplicaSpecs": _in(_REPLICA_VERSIONS, "spec.mpiReplicaSpecs"),
    "backoffLimit": _run_policy("backoffLimit", V1ALPHA1, V1ALPHA2),
    "activeDeadlineSeconds": _run_policy("activeDeadlineSeconds", V1ALPHA1, V1ALPHA2),
    # kubeflow.org/v1 also accepts a deprecated spec.cleanPodPolicy; runPolicy's is the one to use.
    "cleanPodPolicy": _run_policy("cleanPodPolicy", V1ALPHA2),
    "ttlSecondsAfterFinished": _run_policy("ttlSecondsAfterFinished"),
    "suspend": _run_policy("suspend"),
    "managedBy": _run_policy("managedBy"),
    "schedulingPolicy": _run_policy("schedulingPolicy"),
    # v1alpha2 as mpi-operator v0.3.0 has it (mpigen.inputs.v030)
    "runPolicy": _in((V1ALPHA2, V1, V2BETA1), "spec.runPolicy"),
    "mainContainer": {V1ALPHA2: "spec.mainContainer", V1: "spec.mainContainer"},
    "mpiDistribution": {V1ALPHA2: "spec.mpiDistribution"},
    "sshAuthMountPath": {V2BETA1: "spec.sshAuthMountPath"},
    "runLauncherAsWorker": {V2BETA1: "spec.runLauncherAsWorker"},
    "launcherCreationPolicy": {V2BETA1: "spec.launcherCreationPolicy"},
    "mpiImplementation": {V2BETA1: "spec.mpiImplementation"},
    "replicas": {V1ALPHA1: "spec.replicas", **_in(_REPLICA_VERSIONS, "spec.mpiReplicaSpecs.Worker.replicas")},
    "template": {
        V1ALPHA1: "spec.template",
        **_in(
            _REPLICA_VERSIONS,
            "spec.mpiReplicaSpecs.Launcher.template and spec.mpiReplicaSpecs.Worker.template",
        ),
    },
    **{
        field: {V1ALPHA1: f"spec.{field}"}
        for field in (
            "gpus",
            "gpusPerNode",
            "processingUnits",
            "processingUnitsPerNode",
            "processingResourceType",
            "launcherOnMaster",
        )
    },
}

# Only fields found directly in these objects get this help (not pod templates or replica specs).
_CONTAINERS = ("spec", "spec.runPolicy")


def field_hint(api_version: str, where: str, field: str) -> str | None:
    """Help for `field` found in `where` ("spec", "spec.runPolicy") of an `api_version` job."""
    homes = HOMES.get(field)
    if homes is None or where not in _CONTAINERS:
        return None
    home = homes.get(api_version)
    if home is not None:
        return None if home == f"{where}.{field}" else f"in {api_version} it is {home}"
    versions = list(homes)
    listed = versions[0] if len(versions) == 1 else ", ".join(versions[:-1]) + " and " + versions[-1]
    hint = f"{field} exists only in {listed}"
    if V2BETA1 in homes:
        hint += f": use apiVersion {V2BETA1} for it"
    return hint


def explain_unknown_fields(issues: list[Issue], api_version: str) -> list[Issue]:
    """Unknown-field issues in `spec` or `spec.runPolicy` say where the field lives instead.

    The table's answer replaces a guess at a similar name: v2beta1's `spec.cleanPodPolicy` is
    `spec.runPolicy.cleanPodPolicy`, not the `launcherCreationPolicy` a spelling match would offer.
    """
    out = []
    for issue in issues:
        *parents, field = issue.path or ("",)
        unknown = f'unknown field "{field}"'
        if isinstance(field, str) and issue.message.startswith(unknown):
            hint = field_hint(api_version, ".".join(str(part) for part in parents), field)
            if hint:
                issue = Issue(issue.path, f"{unknown} ({hint})", issue.severity)
        out.append(issue)
    return out
