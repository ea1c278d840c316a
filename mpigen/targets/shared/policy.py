"""Run-policy fields a target cannot carry out as the operator does: the warning, worded by each target
for what it does with the field instead.

`runPolicy.managedBy: kueue.x-k8s.io/multikueue` (v1, v2beta1) hands the job to Kueue's MultiKueue; an
explicit `cleanPodPolicy: None` keeps the workers running after the launcher ends. The default target
runs the former here and keeps the workers for the latter; the run targets each do something else.
"""

from __future__ import annotations

from mpigen.errors import Issue
from mpigen.inputs.runpolicy import MULTIKUEUE, RUN_POLICY
from mpigen.plan import JobPlan


def multikueue_warnings(plan: JobPlan, what_happens: str) -> list[Issue]:
    """`what_happens` to a job the operator would leave to MultiKueue, as a warning on managedBy."""
    if plan.managed_by != MULTIKUEUE:
        return []
    return [Issue((*RUN_POLICY, "managedBy"), f"{MULTIKUEUE}: {what_happens}", "warning")]


def clean_pod_policy_none_warnings(plan: JobPlan, what_happens: str) -> list[Issue]:
    """`what_happens` to the workers of a job that says `cleanPodPolicy: None` (not of one that
    leaves it to its version's default), as a warning where it says so."""
    if plan.clean_pod_policy != "None" or plan.clean_pod_policy_at is None:
        return []
    return [Issue(plan.clean_pod_policy_at, f"None: {what_happens}", "warning")]
