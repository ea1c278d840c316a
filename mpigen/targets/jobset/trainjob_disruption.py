"""Free disruptions for a TrainJob's JobSet: the same fields as the jobset target gives an MPIJob, added to
the runtime's JobSet where the runtime leaves room for them.

Trainer v2.3.0 sets none of them: its JobSet plugin builds the JobSet from the runtime's template spec as
written (pkg/runtime/framework/plugins/jobset/jobset.go: Build, `WithSpec(jobSetSpec)`; nothing under
pkg/runtime names a failure policy), so a runtime's own `failurePolicy` and its jobs' `podFailurePolicy`
pass through unchanged and win, and a runtime without them (Trainer's shipped MPI runtimes) gives a
JobSet that fails on the first failed Job (jobset v0.12.0 pkg/controllers/failure_policy.go:
executeFailurePolicy without a policy) whose Jobs count every pod failure, disruptions too, against
their backoffLimit (the Job default 6; pods `restartPolicy: OnFailure` from the JobSet webhook).

mpigen (docs/departures.md, Trainer table): each job whose pods the runtime leaves without a restartPolicy
gets `Never` and, like one that says `Never`, the podFailurePolicy `DisruptionTarget -> FailJob`; the
JobSet gets the rule `onJobFailureReasons: [PodFailurePolicy] -> RestartJobSetAndIgnoreMaxRestarts` and
`restartStrategy: BlockingRecreate` where the runtime has no strategy, its `maxRestarts` kept (none: 0,
so a real failure still fails the JobSet at once, now with reason ReachedMaxRestarts). A job whose pods
say `OnFailure` keeps it and counts its disruptions (a podFailurePolicy needs Never: k8s v1.37.2
pkg/apis/batch/validation/validation.go: validateJobSpec), with a warning.

What the runtime writes itself is never overwritten: a runtime with its own `failurePolicy.rules`, a job
with its own `podFailurePolicy` (its FailJob rules fail the Job with the same reason PodFailurePolicy,
which mpigen's JobSet rule would then restart for free, forever) or a `podReplacementPolicy` other than
Failed (the API server refuses it beside a podFailurePolicy) turns the whole addition off, with a warning
naming the field.
"""

from __future__ import annotations

from typing import Any

from mpigen.errors import Issue
from mpigen.options import Options
from mpigen.plan import TrainPlan
from mpigen.targets.jobset.jobset import disruption_failure_rule, disruption_pod_failure_policy
from mpigen.targets.shared import disruption

RUNTIME_REF = ("spec", "runtimeRef", "name")


def _pod(job: dict[str, Any]) -> dict[str, Any]:
    template = (job.get("template") or {}).get("spec") or {}
    found: dict[str, Any] = (template.get("template") or {}).get("spec") or {}
    return found


def already_free(spec: dict[str, Any]) -> bool:
    """The runtime holds mpigen's own JobSet rule (`mpigen convert` writes it): nothing to add there."""
    return disruption_failure_rule() in ((spec.get("failurePolicy") or {}).get("rules") or [])


def own_fields(spec: dict[str, Any]) -> list[str]:
    """Where the runtime's JobSet spec (after its patches) sets a failure policy of its own, as the
    runtime's field paths: any of them keeps mpigen's fields out. mpigen's own rule and podFailurePolicy
    (a converted MPIJob's runtime) are not the runtime's own."""
    found = []
    if (spec.get("failurePolicy") or {}).get("rules") and not already_free(spec):
        found.append("template.spec.failurePolicy.rules")
    for job in spec.get("replicatedJobs") or []:
        job_spec = (job.get("template") or {}).get("spec") or {}
        where = f"template.spec.replicatedJobs[{job.get('name')}].template.spec"
        if job_spec.get("podFailurePolicy") not in (None, disruption_pod_failure_policy()):
            found.append(f"{where}.podFailurePolicy")
        if job_spec.get("podReplacementPolicy") not in (None, "Failed"):
            found.append(f"{where}.podReplacementPolicy")
    return found


def restarting_in_place(spec: dict[str, Any]) -> list[str]:
    """The jobs whose pods the runtime says restart in place (OnFailure): their disruptions count."""
    return [
        str(job.get("name"))
        for job in spec.get("replicatedJobs") or []
        if _pod(job).get("restartPolicy") not in (None, "Never")
    ]


def make_free(spec: dict[str, Any], options: Options) -> None:
    """Add the free-disruption fields to `spec` (the runtime's JobSet spec being built), before the JobSet
    webhook's defaults are written (a pod restartPolicy left unset becomes Never here, not OnFailure)."""
    if not disruption.free(options) or own_fields(spec):
        return
    freed = False
    for job in spec.get("replicatedJobs") or []:
        job_spec = job["template"]["spec"]
        pod = job_spec.setdefault("template", {}).setdefault("spec", {})
        pod.setdefault("restartPolicy", "Never")
        if pod["restartPolicy"] == "Never":
            job_spec["podFailurePolicy"] = disruption_pod_failure_policy()
            freed = True
    if freed and not already_free(spec):
        policy = spec.setdefault("failurePolicy", {})
        policy.setdefault("restartStrategy", "BlockingRecreate")
        policy["rules"] = [disruption_failure_rule()]


def warnings(plan: TrainPlan, options: Options) -> list[Issue]:
    """What keeps disruptions from being free for this TrainJob, each by the runtime's field."""
    if not options.free_disruptions:
        return []
    if not disruption.free(options):
        return disruption.version_warnings(options)
    kind, name = plan.runtime
    own = own_fields(plan.jobset_spec)
    if own:
        message = f'{kind} "{name}" sets {", ".join(own)}: kept as written, so mpigen adds no podFailurePolicy and no failure-policy rule and disruptions count as the runtime says (write the rule yourself, or pass --no-free-disruptions to say so)'
        return [Issue(RUNTIME_REF, message, "warning")]
    return [
        Issue(
            RUNTIME_REF,
            f'{kind} "{name}" runs the pods of replicated job "{job}" with restartPolicy OnFailure: a podFailurePolicy needs Never, so their disruptions count against the Job\'s backoffLimit',
            "warning",
        )
        for job in restarting_in_place(plan.jobset_spec)
    ]
