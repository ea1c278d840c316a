"""The kubeflow.org/v1 plan: a checked `V1Job` (mpigen.inputs.v1) as the `JobPlan` the builders compile.

training-operator release-1.9 runs the kubectl-exec transport of mpi-operator v0.2.0 with its own
labels and details (`pkg/controller.v1/mpi/mpijob_controller.go`: newConfigMap, newLauncherRole,
newWorker, newLauncher; `pkg/controller.v1/common/job.go`: the run policy and the PodGroup):

- labels `training.kubeflow.org/{operator-name: mpijob-controller, job-name, replica-type}`, and
  `job-role: master` on the launcher; `app: <job>` on the ConfigMap and the launcher's RBAC objects;
- a launcher that asks for a GPU (a limit named `*.com/gpu` or containing `gpu`) is the hostfile's
  first host and keeps its GPUs; any other launcher gets NVIDIA_VISIBLE_DEVICES and
  NVIDIA_DRIVER_CAPABILITIES set empty;
- kubexec.sh execs into `mainContainer` when set; the launcher's Intel MPI bootstrap variables;
  `discover_hosts.sh` with `host:slots` lines; the kubectl-delivery init container's extra fields;
- restartPolicy from the replica spec (default Never; ExitCode is Never on the pod); the PodGroup of
  `schedulingPolicy` with Volcano's queue defaulting to "default" and no priority-class fallback.

What mpigen does differently (the launcher as a Job, the workers as a StatefulSet, the wait for the
workers, clean-up and the run policy without an operator) is in docs/departures.md and docs/runtime.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mpigen import names, tree
from mpigen.errors import Issue
from mpigen.inputs.fields import V1 as API_VERSION
from mpigen.inputs.runpolicy import SCHEDULING_POLICY, worker_restart_warnings
from mpigen.options import TRAINING_OPERATOR_KUBECTL_DELIVERY_IMAGE
from mpigen.plan import Hostnames, JobPlan, JobService, KubectlDelivery, Labels, Scheduling

if TYPE_CHECKING:  # the model only names the type: v1 imports this module to plan
    from mpigen.inputs.v1 import V1Job

_SPECS = ("spec", "mpiReplicaSpecs")
# mpijob.go: the kubectl-delivery init container's requests and limits (initContainerCpu, ...).
DELIVERY_RESOURCES = {"cpu": "100m", "ephemeral-storage": "5Gi", "memory": "512Mi"}
DEFAULT_QUEUE = "default"


def is_gpu_launcher(template: dict[str, Any]) -> bool:
    """mpijob.go isGPULauncher: a launcher container limits a resource named `*.com/gpu` or `*gpu*`."""
    for container in (template.get("spec") or {}).get("containers") or []:
        limits = (container.get("resources") or {}).get("limits") or {}
        if any(str(key).endswith(".com/gpu") or "gpu" in str(key) for key in limits):
            return True
    return False


def _pod_restart_policy(policy: str) -> str:
    """mpijob_controller.go setRestartPolicy: ExitCode becomes Never on the pod."""
    return "Never" if policy == "ExitCode" else policy


def _launcher_template(job: V1Job) -> dict[str, Any]:
    template = tree.copy(job.launcher.template)
    template.setdefault("spec", {})["restartPolicy"] = _pod_restart_policy(job.launcher.restart_policy)
    return template


def _backoff_limit(job: V1Job) -> int | None:
    """runPolicy.backoffLimit; unset, a launcher that never restarts runs once, as the operator's bare
    launcher Pod does (a Job's own default would retry it 6 times); OnFailure keeps the Job's default."""
    if job.run.backoff_limit is not None:
        return job.run.backoff_limit
    return 0 if _pod_restart_policy(job.launcher.restart_policy) == "Never" else None


def _labels(job: V1Job) -> Labels:
    launcher = names.training_operator_labels(job.name, names.ROLE_LAUNCHER)
    worker = names.training_operator_labels(job.name, names.ROLE_WORKER)
    return Labels(launcher, worker, launcher, worker, names.app_labels(job.name))


def _delivery(job: V1Job) -> KubectlDelivery:
    """newLauncher's kubectl-delivery: the training-operator's default image, NAMESPACE the job's (read
    from the pod when mpigen does not know it), the ConfigMap mounted, IfNotPresent, 100m CPU, 512Mi
    memory, 5Gi ephemeral storage."""
    if job.namespace is not None:
        namespace: dict[str, Any] = {"name": names.NAMESPACE_ENV, "value": job.namespace}
    else:
        namespace = {
            "name": names.NAMESPACE_ENV,
            "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
        }
    resources = {"limits": dict(DELIVERY_RESOURCES), "requests": dict(DELIVERY_RESOURCES)}
    return KubectlDelivery(
        default_image=TRAINING_OPERATOR_KUBECTL_DELIVERY_IMAGE,
        env=(namespace,),
        mount_config=True,
        pull_policy="IfNotPresent",
        resources=resources,
    )


def _scheduling(job: V1Job) -> Scheduling:
    """common/job.go ReconcileJobs: minMember from minAvailable (default: every pod), Volcano's queue
    "default" unless named, the priority class only from the policy, the scheduler-plugins timeout
    only when set; pods keep a schedulerName of their own (DecoratePodTemplateSpec)."""
    policy = job.run.scheduling
    return Scheduling(
        min_available=policy.min_available if policy else None,
        queue=(policy.queue if policy else None) or DEFAULT_QUEUE,
        min_resources=policy.min_resources if policy else None,
        priority_class=(policy.priority_class if policy else None) or None,
        schedule_timeout_seconds=policy.schedule_timeout_seconds if policy else None,
        overwrite_scheduler_name=False,
        operator_fields=True,
        task_spec_annotation=True,
        requests_else_limits=True,
        written_at=SCHEDULING_POLICY if policy else None,
    )


def _worker_warnings(document: dict[str, Any], target: str) -> list[Issue]:
    """The workers' restartPolicy (the replica's, default Never, or the template's) is not applied."""
    worker = document["spec"]["mpiReplicaSpecs"].get("Worker")
    return worker_restart_warnings(worker, _SPECS + ("Worker",), target)


def plan_job(job: V1Job, document: dict[str, Any], target: str = "operator") -> JobPlan:
    """The plan of a loaded v1 job; `document` is the job as written, for warnings about it."""
    run = job.run
    gpu_launcher = is_gpu_launcher(job.launcher.template)
    own_account = (job.launcher.template.get("spec") or {}).get("serviceAccountName")
    labels = _labels(job)
    return JobPlan(
        api_version=API_VERSION,
        name=job.name,
        namespace=job.namespace,
        workers=job.workers,
        slots_per_worker=job.slots_per_worker,
        launcher_template=_launcher_template(job),
        worker_template=tree.copy(job.worker.template) if job.worker else {},
        backoff_limit=_backoff_limit(job),
        active_deadline_seconds=run.active_deadline_seconds,
        clean_pod_policy=run.clean_pod_policy,
        labels=labels,
        service=JobService(names.worker_set(job.name), {}, labels.worker_pod, True),
        warnings=tuple(job.warnings) + tuple(_worker_warnings(document, target)),
        template_paths={
            "launcher": _SPECS + ("Launcher", "template"),
            "worker": _SPECS + ("Worker", "template"),
        },
        workers_path=_SPECS + ("Worker", "replicas"),
        hostnames=Hostnames(launcher_first=gpu_launcher),
        blank_launcher_gpus=not gpu_launcher,
        launcher_service_account=own_account or None,
        ttl_seconds_after_finished=run.ttl_seconds_after_finished,
        managed_by=run.managed_by,
        clean_pod_policy_at=run.clean_pod_policy_at,
        suspend=run.suspend,
        scheduling=_scheduling(job),
        discover_hosts="slots",
        exec_container=job.main_container,
        hydra_bootstrap=True,
        worker_keeps_command=True,
        kubectl_delivery=_delivery(job),
    )
