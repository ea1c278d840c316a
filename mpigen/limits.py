"""API-server rules on derived names that no JSON schema expresses, checked before anything is built.

Names and label values are at most 63 characters; the launcher's and the clean-up Job's names become
their pods' `job-name` label; a StatefulSet's name plus `-` and a 10-character hash becomes its pods'
`controller-revision-hash` label; worker pod names become hostnames; the Service `<job>-worker` must be
a DNS-1035 label (start with a letter).
"""

from __future__ import annotations

from mpigen import names
from mpigen.errors import Issue
from mpigen.plan import JobPlan

REVISION_HASH_LENGTH = 10


def check_derived_names(plan: JobPlan) -> list[Issue]:
    job = plan.name
    where = ("metadata", "name")
    longest_pod = names.worker_pod(job, plan.workers - 1)
    limits = [
        (names.launcher(job), names.DNS1123_LABEL_MAX, "the launcher Job name (its pods' job-name label)"),
        (names.cleanup(job), names.DNS1123_LABEL_MAX, "the clean-up Job name (its pods' job-name label)"),
        (
            names.worker_set(job),
            names.DNS1123_LABEL_MAX - 1 - REVISION_HASH_LENGTH,
            "the worker StatefulSet name (its pods' controller-revision-hash label)",
        ),
        (longest_pod, names.DNS1123_LABEL_MAX, "the last worker pod's name (its hostname)"),
    ]
    issues = []
    over = [(len(job) - (len(derived) - limit), derived, limit, what) for derived, limit, what in limits if len(derived) > limit]
    if over:
        # One message for one cause: name the limit that needs the shortest job name.
        shorter, derived, limit, what = min(over)
        message = (
            f'too long: {what} "{derived}" has {len(derived)} characters, more than {limit}; '
            f"use a name of at most {shorter} characters"
        )
        issues.append(Issue(where, message))
    if not job[:1].isalpha():
        issues.append(Issue(where, f'must start with a letter: the worker Service "{names.worker_set(job)}" is a DNS-1035 label'))
    return issues
