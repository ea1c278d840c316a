"""What the jobset target checks before it builds, and what it warns about.

Names: JobSet v0.12's ValidateCreate requires every child Job name `<jobset>-<replicated job>-<index>`
and every pod name `<jobset>-<replicated job>-<index>-<pod index>-<5 random>` to be a DNS-1035 label,
and the JobSet's name is its Service's (a DNS-1035 label too). Sizes: the ConfigMap's host lists
(mpigen.targets.jobset.sizes).
Kueue: `--queue` with a PodGroup gang (two admission systems, each holding part of the job) and with
`runPolicy.suspend` (Kueue owns `suspend`: it unsuspends what it admits) are refused.
"""

from __future__ import annotations

from typing import Any

from mpigen import names
from mpigen.checks.rules import Added, check_plan
from mpigen.errors import Issue
from mpigen.options import Options
from mpigen.plan import JobPlan
from mpigen.targets.jobset import names as jobset_names
from mpigen.targets.jobset import sizes
from mpigen.targets.jobset.hosts import first_host, launcher_host
from mpigen.targets.jobset.placement import check_placement
from mpigen.targets.jobset.pods import OWN_NAMING
from mpigen.targets.shared import mpi_env
from mpigen.targets.shared.policy import clean_pod_policy_none_warnings, multikueue_warnings
from mpigen.targets.shared.rbac import foreign_account_warning


def added(plan: JobPlan) -> Added:
    """The names the builders add to each role's pod, which the templates may not use."""
    gpus = names.NVIDIA_ENV if plan.blank_launcher_gpus else ()
    if plan.ssh is None:
        env = (*names.LAUNCHER_ENV, jobset_names.RESTART_ATTEMPT_ENV, *gpus)
        return {
            "launcher": (
                (names.CONFIG_VOLUME, names.KUBECTL_VOLUME),
                (names.KUBECTL_DELIVERY,),
                env,
                (names.CONFIG_MOUNT_PATH, names.KUBECTL_MOUNT_PATH),
            ),
            "worker": ((names.CONFIG_VOLUME,), (), (), (names.CONFIG_MOUNT_PATH,)),
        }
    ssh_path = plan.ssh.mount_path.rstrip("/")
    env = (names.JOB_ROLE_ENV, *mpi_env.reserved(plan.implementation), *gpus)
    return {
        "launcher": ((names.SSH_VOLUME, names.CONFIG_VOLUME), (), env, (ssh_path, names.CONFIG_MOUNT_PATH)),
        "worker": ((names.SSH_VOLUME,), (), (names.JOB_ROLE_ENV,), (ssh_path,)),
    }


def check_names(plan: JobPlan) -> list[Issue]:
    job = plan.name
    where = ("metadata", "name")
    if not job[:1].isalpha():
        return [
            Issue(
                where,
                f'must start with a letter: the JobSet "{job}" names its Service and pods, DNS-1035 labels',
            )
        ]
    random = "-" + "x" * (jobset_names.POD_NAME_RANDOM_SUFFIX - 1)
    limits = [(launcher_host(plan) + random, "the launcher pod's name")]
    if plan.workers:
        limits.append(
            (
                jobset_names.jobset_pod_host(job, jobset_names.WORKER_RJOB, plan.workers - 1) + random,
                "the last worker pod's name",
            )
        )
    if plan.ssh is not None and plan.ssh.generate_keys:
        limits.append((names.ssh_keygen(job), "the SSH key Job name"))
    over = [
        (len(job) - (len(derived) - names.DNS1123_LABEL_MAX), derived, what)
        for derived, what in limits
        if len(derived) > names.DNS1123_LABEL_MAX
    ]
    if not over:
        return []
    shorter, derived, what = min(over)
    message = (
        f'too long for --target jobset: {what} "{derived}" (its last 5 characters random) has {len(derived)} '
        f"characters, more than {names.DNS1123_LABEL_MAX}; use a name of at most {shorter} characters"
    )
    return [Issue(where, message)]


def check(plan: JobPlan) -> list[Issue]:
    return check_names(plan) + check_plan(plan, added(plan))


def check_sizes(plan: JobPlan, options: Options) -> list[Issue]:
    issues = []
    if options.queue is not None and options.gang_scheduler is not None:
        issues.append(
            Issue(
                (),
                "--queue with --gang-scheduler: Kueue and the gang scheduler would each admit part of the job; with --target jobset, Kueue admits the whole JobSet (drop --gang-scheduler)",
            )
        )
    if options.queue is not None and plan.suspend:
        issues.append(
            Issue(
                ("spec", "runPolicy", "suspend"),
                "with --queue, Kueue admits and resumes the JobSet (it renders suspended either way); hold it with the Workload's spec.active: false instead",
            )
        )
    return issues + sizes.check_sizes(plan, options) + check_placement(plan, options)


def _requests_missing(template: dict[str, Any]) -> list[str]:
    missing = []
    for container in (template.get("spec") or {}).get("containers") or []:
        resources = container.get("resources") or {}
        named = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
        if not {"cpu", "memory"} <= set(named):
            missing.append(str(container.get("name")))
    return missing


def warnings(plan: JobPlan, options: Options) -> list[Issue]:
    found = []
    if plan.kubexec and plan.workers:
        where = f" of namespace {plan.namespace}" if plan.namespace else " of its namespace"
        found.append(
            Issue(
                (),
                f"--target jobset: the launcher may list every pod{where} and exec into any of them (JobSet pod names are not fixed, so the Role cannot name them); apply `mpigen exec-policy` once per cluster to confine its exec to this job's pods (docs/explanation/security.md)",
                "warning",
            )
        )
        found += foreign_account_warning(
            plan,
            "get, list and exec into every pod of the namespace, which `mpigen exec-policy` does not narrow",
        )
    found += multikueue_warnings(
        plan,
        "kept on the JobSet: Kueue's MultiKueue runs it on a worker cluster, to which it copies the JobSet "
        "alone (Kueue v0.19): apply every other object of this output there too (the ConfigMap "
        f"{names.config_map(plan.name)} that the pods mount above all)",
    )
    found += clean_pod_policy_none_warnings(
        plan,
        "on --target jobset the workers are deleted when the JobSet finishes (JobSet always ends its running Jobs)",
    )
    for role, template in (
        (names.ROLE_LAUNCHER, plan.launcher_template),
        (names.ROLE_WORKER, plan.worker_template),
    ):
        path = plan.template_paths.get(role, ("spec",)) + ("spec",)
        for key in OWN_NAMING:
            if (template.get("spec") or {}).get(key):
                found.append(
                    Issue(
                        (*path, key),
                        f"dropped on --target jobset: JobSet and the Job controller name the {role} pods (hostfile: {first_host(plan)} ...)",
                        "warning",
                    )
                )
        if (
            options.queue is not None
            and role == names.ROLE_LAUNCHER
            and plan.kubexec
            and plan.kubectl_delivery.resources
        ):
            wanted = sorted(
                set().union(*(set(v) for v in plan.kubectl_delivery.resources.values())) - {"cpu", "memory"}
            )
            if wanted:
                found.append(
                    Issue(
                        (),
                        f"--queue: the launcher's kubectl-delivery init container requests {', '.join(wanted)}; Kueue admits the JobSet only from a ClusterQueue whose resource groups cover it",
                        "warning",
                    )
                )
        if options.queue is not None:
            for container in _requests_missing(template):
                found.append(
                    Issue(
                        plan.template_paths.get(role, ("spec",)) + ("spec", "containers"),
                        f'container "{container}" requests no cpu or memory: Kueue counts it as 0 against the queue\'s quota',
                        "warning",
                    )
                )
    return found
