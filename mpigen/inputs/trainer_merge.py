"""What the API server and Trainer do to a TrainJob's documents before its controller reads them: the CRDs'
`default:` values, the strategic merge of `runtimePatches` into the runtime's JobSet spec, and of
`resourcesPerNode` into the trainer's resources.

Defaults: the API server fills every absent field whose schema has a `default`, top down, so a defaulted
object gets its own fields' defaults too (structural schema defaulting). The paths that lead to a default
are vendored in schemas/trainer-defaults-v1alpha1.json by tools/trainerschema.py from the pinned CRDs.

Patches: Trainer v2.3.0 `mergeRuntimePatches` (pkg/runtime/core/trainingruntime.go) marshals each
runtime patch's `trainingRuntimeSpec.template.spec`, in `spec.runtimePatches` order, and applies it to the
runtime's `jobsetv1alpha2.JobSetSpec` with `strategicpatch.StrategicMergePatch`, then puts the replicated
jobs back in the runtime's order. `replicatedJobs` merge by name (JobSet v0.12.0's patchMergeKey); below
them maps merge key by key; in a pod spec `volumes`, `containers`/`initContainers`, `imagePullSecrets` and
`schedulingGates` merge by name, a container's `env` by name and `volumeMounts` by mountPath;
`tolerations` (no patch strategy) and scalars are replaced. The patch carries no `$retainKeys`
directive, so a volume named again is merged field by field: a different source would give a volume of
two sources, which mpigen.inputs.trainer_rules refuses. `resourcesPerNode` is merged the same way
(`trainingruntimeutil.MergeResourceRequirements`): limits and requests key by key.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from mpigen import tree

# Lists merged by a key (PodSpec's and Container's patchMergeKey tags); the rest are replaced.
_POD_LISTS = {
    "volumes": "name",
    "containers": "name",
    "initContainers": "name",
    "imagePullSecrets": "name",
    "schedulingGates": "name",
}
_CONTAINER_LISTS = {"env": "name", "volumeMounts": "mountPath"}


@functools.cache
def _defaults_tree() -> dict[str, Any]:
    # deferred: importlib.resources (with pathlib) only for a TrainJob, whose runtime needs Trainer's CRD
    # defaults
    import importlib.resources

    text = importlib.resources.files("mpigen.schemas").joinpath("trainer-defaults-v1alpha1.json").read_text()
    kinds: dict[str, Any] = json.loads(text)["kinds"]
    return kinds


def apply_defaults(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    """A copy of `spec` of a `kind` object with the CRD's defaults filled in, as the API server fills them."""
    out = tree.copy(spec)
    _fill(out, _defaults_tree()[kind])
    return out


def _fill(value: Any, schema: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for name, sub in (schema.get("properties") or {}).items():
            if name not in value and "default" in sub:
                value[name] = tree.copy(sub["default"])
            if name in value:
                _fill(value[name], sub)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for item in value.values():
                _fill(item, extra)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            _fill(item, schema["items"])


def merge_pod_spec(pod_spec: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """`pod_spec` with one PodSpecPatch merged in."""
    return _merge(pod_spec, patch, _POD_LISTS, nested=_CONTAINER_LISTS)


def merge_runtime_patch(jobset_spec: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """`jobset_spec` (a runtime's template.spec) with one runtime patch's `template.spec` merged in, its
    replicated jobs in the runtime's order (unknown ones are refused before: mpigen.inputs.trainer_rules)."""
    out = tree.copy(jobset_spec)
    jobs = {job.get("name"): job for job in out.get("replicatedJobs") or []}
    for job_patch in patch.get("replicatedJobs") or []:
        job = jobs.get(job_patch["name"])
        if job is not None:
            _merge_replicated_job(job, job_patch.get("template") or {})
    return out


def _merge_replicated_job(job: dict[str, Any], patch: dict[str, Any]) -> None:
    """One ReplicatedJobPatch's template (JobTemplatePatch) into a replicated job, in place."""
    template = job.setdefault("template", {})
    if "metadata" in patch:
        template["metadata"] = _merge(template.get("metadata") or {}, patch["metadata"], {})
    pod_patch = (patch.get("spec") or {}).get("template")
    if pod_patch is None:
        return
    pod = template.setdefault("spec", {}).setdefault("template", {})
    if "metadata" in pod_patch:
        pod["metadata"] = _merge(pod.get("metadata") or {}, pod_patch["metadata"], {})
    if "spec" in pod_patch:
        pod["spec"] = merge_pod_spec(pod.get("spec") or {}, pod_patch["spec"])


def merge_resources(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """Trainer v2.3.0 `MergeResourceRequirements`: the runtime's resources with resourcesPerNode over
    them, limits and requests merged name by name, claims replaced."""
    return _merge(base, patch, {})


def _merge(
    original: dict[str, Any],
    patch: dict[str, Any],
    lists: dict[str, str],
    nested: dict[str, str] | None = None,
) -> dict[str, Any]:
    out = tree.copy(original)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif key in lists and isinstance(value, list) and isinstance(out.get(key), list):
            out[key] = _merge_list(out[key], value, lists[key], nested or {})
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value, {})
        else:
            out[key] = tree.copy(value)
    return out


def _merge_list(original: list[Any], patch: list[Any], merge_key: str, nested: dict[str, str]) -> list[Any]:
    """apimachinery strategicpatch `mergeSlice` with no `$setElementOrder` (Trainer's patch has none): the
    patch's items (merged into the original's of the same key) in the patch's order, interleaved with the
    original's other items by `mergeSortedSlice`: an original item goes first only when both it and the
    next patch item are in the original and it stood before that one there."""
    keys = [item.get(merge_key) if isinstance(item, dict) else None for item in original]
    patched = []
    for item in patch:
        key = item.get(merge_key) if isinstance(item, dict) else None
        at = keys.index(key) if key is not None and key in keys else None
        patched.append(tree.copy(item) if at is None else _merge(original[at], item, nested))
    wanted = {item.get(merge_key) for item in patch if isinstance(item, dict)}
    left = [tree.copy(item) for item, key in zip(original, keys, strict=True) if key not in wanted]

    def position(item: Any) -> int:
        key = item.get(merge_key) if isinstance(item, dict) else None
        return keys.index(key) if key in keys else -1

    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(patched):
        if j >= len(patched) or (
            i < len(left) and 0 <= position(left[i]) < position(patched[j]) and position(patched[j]) >= 0
        ):
            out.append(left[i])
            i += 1
        else:
            out.append(patched[j])
            j += 1
    return out
