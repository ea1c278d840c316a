"""The departures both MPI operators' differential tests take out (test_v2beta1_differential.py,
test_v1_differential.py): what mpigen does alike for kubeflow.org/v2beta1 and kubeflow.org/v1. Each is
a row of both sections of docs/departures.md; see differential.py for what a departure is."""

from __future__ import annotations

from differential import MPIGEN_LABELS, Pair, get, metadatas, pod_specs, pop, take

from mpigen import names


def owner_references(p: Pair) -> bool:
    """Every object the operator creates is owned by the MPIJob; mpigen's by nothing."""
    for obj in p.theirs.values():
        for meta in metadatas(obj):
            if "ownerReferences" in meta:
                assert [r["kind"] for r in pop(meta, "ownerReferences")] == ["MPIJob"]
    assert not any("ownerReferences" in m for o in p.ours.values() for m in metadatas(o))
    return bool(p.theirs)


def standard_labels(p: Pair) -> bool:
    """mpigen's `app.kubernetes.io/*` labels on every object and pod template (a template's own, which the
    operator's pods carry too, are kept)."""
    for key, obj in p.ours.items():
        theirs = p.theirs.get(key)
        their_labels = [m.get("labels", {}) for m in metadatas(theirs)] if theirs else []
        for index, meta in enumerate(metadatas(obj)):
            labels = meta.get("labels", {})
            own = their_labels[index] if index < len(their_labels) else {}
            found = {k: labels.pop(k) for k in MPIGEN_LABELS if k in labels and own.get(k) != labels[k]}
            assert found.get("app.kubernetes.io/managed-by", names.MANAGED_BY) == names.MANAGED_BY
            if not labels:
                meta.pop("labels", None)
    return bool(p.ours)


def scheduler_name(p: Pair) -> bool:
    """--scheduler-name under Volcano gang scheduling: mpigen's pods get that scheduler; the operator's
    always `volcano` (its gang scheduler flag names both)."""
    chosen = p.options.scheduler_name
    if p.options.gang_scheduler != "volcano" or chosen in (None, "volcano"):
        return False
    fired = False
    for key, obj in p.ours.items():
        theirs = p.theirs.get(key)
        for spec, their_spec in zip(pod_specs(obj), pod_specs(theirs) if theirs else [], strict=False):
            if spec.get("schedulerName") == chosen and their_spec.get("schedulerName") == "volcano":
                spec["schedulerName"] = "volcano"
                fired = True
    return fired


def pdb(p: Pair) -> bool:
    """Gang scheduling: mpigen's PodDisruptionBudget `<job>-pdb`."""
    key = ("PodDisruptionBudget", names.pdb(p.name))
    if key not in p.ours:
        return False
    assert p.options.gang_scheduler
    del p.ours[key]
    return True


def managed_by_multikueue(p: Pair) -> bool:
    """managedBy kueue.x-k8s.io/multikueue: the operator leaves the job alone; mpigen compiles it."""
    if get(p.spec, "runPolicy", "managedBy") != "kueue.x-k8s.io/multikueue":
        return False
    assert p.theirs == {}
    p.ours.clear()
    p.unstored.clear()
    p.scheduling_groups.clear()
    return True


def cleanup(p: Pair) -> bool:
    """cleanPodPolicy Running / All: the operator deletes the workers itself; mpigen's clean-up Job
    `<job>-cleanup` (ServiceAccount, Role, RoleBinding, cleanup.sh) scales the StatefulSet to 0."""
    job = f"{p.name}{names.CLEANUP_SUFFIX}"
    if ("Job", job) not in p.ours:
        return False
    for kind in ("ServiceAccount", "Role", "RoleBinding", "Job"):
        take(p.ours, kind, job)
    p.ours[("ConfigMap", names.config_map(p.name))]["data"].pop(names.CLEANUP_SCRIPT)
    return True


def free_disruptions(p: Pair) -> bool:
    """A launcher Job whose pods are `restartPolicy: Never` gets a podFailurePolicy that ignores a
    disrupted pod (condition DisruptionTarget), unless `--no-free-disruptions` /
    `mpigen.dev/free-disruptions: "false"`; the operator's launcher (a v0.8.2 Job, a 1.9.3 bare Pod) has
    none."""
    launcher = names.launcher(p.name)
    ours = p.ours.get(("Job", launcher))
    if ours is None:
        return False
    theirs = p.theirs.get(("Job", launcher))
    assert theirs is None or "podFailurePolicy" not in theirs["spec"]
    never = ours["spec"]["template"]["spec"].get("restartPolicy") == "Never"
    if not (never and p.options.free_disruptions):
        assert "podFailurePolicy" not in ours["spec"]
        return False
    assert ours["spec"].pop("podFailurePolicy") == {
        "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]
    }
    return True
