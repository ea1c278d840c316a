"""API-server limits that no JSON schema expresses, checked on the plan before anything is built.

It sits with the builders because it measures what they build: the sizes come from the builders' own
scripts and Role, so a change to a builder cannot leave the limit check measuring something else.

Derived names:

Names and label values are at most 63 characters; the launcher's and the clean-up Job's names become
their pods' `job-name` label; a StatefulSet's name plus `-` and a 10-character hash becomes its pods'
`controller-revision-hash` label; worker pod names become hostnames; the Service `<job>-worker` must be
a DNS-1035 label (start with a letter).

Sizes: the ConfigMap's hostfile and the launcher Role's `resourceNames` grow by one line or entry per
worker. The API server refuses a ConfigMap whose data exceeds 1 MiB, and etcd (default
`--max-request-bytes`) an object over 1.5 MiB; client-side `kubectl apply` (kubectl's default) stores
the whole object as JSON in its `kubectl.kubernetes.io/last-applied-configuration` annotation, and the
API server refuses an object whose annotations pass 256 KiB (apimachinery ValidateAnnotationsSize). All
sizes are computed arithmetically, in time independent of the worker count, so an absurd count
(2^31 - 1) is refused at once with the largest job that fits, and no billion-line hostfile is ever built.
Every run target checks its own ConfigMap and Role against all three (mpigen.targets.shared.sizes).
"""

from __future__ import annotations

from mpigen import names
from mpigen.errors import Issue
from mpigen.plan import JobPlan
from mpigen.targets.operator.configmap import config_scripts
from mpigen.targets.shared.sizes import TargetSizes, host_lists_bytes

REVISION_HASH_LENGTH = names.REVISION_HASH_LENGTH


def check_derived_names(plan: JobPlan) -> list[Issue]:
    job = plan.name
    where = ("metadata", "name")
    longest_pod = names.worker_pod(job, max(plan.workers, 1) - 1)
    limits = [
        (names.launcher(job), names.DNS1123_LABEL_MAX, "the launcher Job name (its pods' job-name label)"),
        (names.cleanup(job), names.DNS1123_LABEL_MAX, "the clean-up Job name (its pods' job-name label)"),
        *(
            [
                (
                    names.ssh_keygen(job),
                    names.DNS1123_LABEL_MAX,
                    "the SSH key Job name (its pods' job-name label)",
                )
            ]
            if plan.ssh is not None and plan.ssh.generate_keys
            else []
        ),
        (
            names.worker_set(job),
            names.DNS1123_LABEL_MAX - 1 - REVISION_HASH_LENGTH,
            "the worker StatefulSet name (its pods' controller-revision-hash label)",
        ),
        (longest_pod, names.DNS1123_LABEL_MAX, "the last worker pod's name (its hostname)"),
    ]
    issues = []
    over = [
        (len(job) - (len(derived) - limit), derived, limit, what)
        for derived, limit, what in limits
        if len(derived) > limit
    ]
    if over:
        # One message for one cause: name the limit that needs the shortest job name.
        shorter, derived, limit, what = min(over)
        message = (
            f'too long: {what} "{derived}" has {len(derived)} characters, more than {limit}; '
            f"use a name of at most {shorter} characters"
        )
        issues.append(Issue(where, message))
    if not job[:1].isalpha():
        issues.append(
            Issue(
                where,
                f'must start with a letter: the worker Service "{names.worker_set(job)}" is a DNS-1035 label',
            )
        )
    return issues


# The operator target's ConfigMap: its scripts and the shared host lists.
SIZES = TargetSizes(config_scripts, host_lists_bytes)
