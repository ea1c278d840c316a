"""SSH keys without a key in the output: the Secret `<job>-ssh`, and the Job that fills it once.

mpi-operator v0.8.2 `newSSHAuthSecret` generates an ECDSA P-521 key pair into a Secret. A static,
deterministic output must never carry a private key, so mpigen renders the Secret empty (`type:
Opaque`: a `kubernetes.io/ssh-auth` Secret must hold a key at creation, and the type is immutable) and a
small Job `<job>-ssh-keygen`: an init container runs `ssh-keygen` in the worker's image (with the
worker pod's pull secrets, user and group and placement, so that the image, its user and its
architecture are ones known to work), and the `store` container patches the pair into the Secret with
the kubectl-delivery image, never replacing keys already there. Its identity may `get` and `patch`
that one Secret only; only `store` gets its token; both containers meet Pod Security restricted. Until
the keys exist the kubelet keeps the launcher and worker pods in ContainerCreating (their volume names
a key that is missing) and retries. With `mpigen.dev/ssh-secret`
the user provides the Secret and none of this is emitted. See docs/runtime.md.

The key Job's builders read a `KeyJob`: the few things of a job they need (its name, namespace and
Secret, the pod spec whose image runs ssh-keygen, its `app.kubernetes.io/name` and kubectl image), made
from an MPIJob's plan here (`key_job`) or from a TrainJob's in mpigen.targets.jobset.trainjob.
"""

from __future__ import annotations

from typing import Any

from mpigen import names
from mpigen.options import DEFAULT_KUBECTL_DELIVERY_IMAGE, Options
from mpigen.plan import JobPlan
from mpigen.records import Record
from mpigen.targets.shared.hardening import (
    HELPER_USER,
    api_token_mount,
    api_token_volume,
    harden,
    home_env,
    restricted_security_context,
    tmp_mount,
    tmp_volume,
)
from mpigen.targets.shared.meta import object_meta, service_account_subject
from mpigen.targets.shared.scripts import keygen_role_rules, render_keygen_script

TTL_SECONDS_AFTER_FINISHED = 600
KEYS_VOLUME = "keys"
KEYS_DIR = "/keys"
COMPONENT = "ssh"
# Same key type and format as the operator: a PEM `EC PRIVATE KEY`, an `ecdsa-sha2-nistp521` public key.
# A pair left by an earlier start of the pod is replaced (ssh-keygen would ask before overwriting).
KEYGEN_COMMAND = [
    "/bin/sh",
    "-c",
    f"rm -f {KEYS_DIR}/id {KEYS_DIR}/id.pub && exec ssh-keygen -q -t ecdsa -b 521 -m PEM -N '' -C '' -f {KEYS_DIR}/id",
]
# What the key-generation pod copies from the worker pod template (else the launcher's).
POD_FIELDS = ("imagePullSecrets", "nodeSelector", "tolerations", "affinity")
# Of the worker pod's securityContext, only the user and group ssh-keygen and kubectl run as: no SELinux
# type, AppArmor or seccomp override, sysctls, supplemental or filesystem groups (least privilege).
POD_SECURITY_FIELDS = ("runAsUser", "runAsGroup", "runAsNonRoot")


class KeyJob(Record):
    """What the key Job's builders read of a job."""

    name: str  # the job's: the key Job is `<name>-ssh-keygen`, its script in the ConfigMap `<name>-config`
    namespace: str | None
    secret: str  # the Secret the key pair goes into
    pod: dict[str, Any]  # the pod spec whose first container's image runs ssh-keygen (and whose user)
    app_name: str = names.APP_NAME  # the key Job's objects' `app.kubernetes.io/name`
    kubectl_image: str = DEFAULT_KUBECTL_DELIVERY_IMAGE  # the `store` container's, when no option names one


def generates_keys(plan: JobPlan) -> bool:
    return plan.ssh is not None and plan.ssh.generate_keys


def key_job(plan: JobPlan) -> KeyJob:
    """An MPIJob's key Job: the worker pod's image (it runs sshd), else the launcher's."""
    assert plan.ssh is not None
    template = plan.worker_template if plan.workers > 0 else plan.launcher_template
    return KeyJob(
        name=plan.name,
        namespace=plan.namespace,
        secret=plan.ssh.secret,
        pod=template["spec"],
        kubectl_image=plan.kubectl_delivery.default_image,
    )


def _names(keys: KeyJob) -> dict[str, str]:
    name = names.ssh_keygen(keys.name)
    return {"secret": keys.secret, "self_job": name, "self_rbac": name}


def keygen_script(keys: KeyJob) -> str:
    """The key-generation Job's script, shipped in the job's ConfigMap as `ssh-keygen.sh`."""
    found = _names(keys)
    return render_keygen_script(
        secret=found["secret"], self_job=found["self_job"], self_rbac=found["self_rbac"], keys_dir=KEYS_DIR
    )


def render_keygen(plan: JobPlan) -> str:
    return keygen_script(key_job(plan))


def build_ssh_secret(plan: JobPlan) -> list[dict[str, Any]]:
    if not generates_keys(plan):
        return []
    meta = object_meta(plan, names.ssh_secret(plan.name), COMPONENT, plan.labels.other)
    return [{"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": "Opaque"}]


def _labels(keys: KeyJob) -> dict[str, str]:
    return {**names.standard_labels(keys.name, COMPONENT), "app.kubernetes.io/name": keys.app_name}


def _meta(keys: KeyJob) -> dict[str, Any]:
    meta = object_meta(keys, names.ssh_keygen(keys.name), COMPONENT)
    meta["labels"] = _labels(keys)
    return meta


def keygen_rbac(keys: KeyJob) -> list[dict[str, Any]]:
    name, rbac = names.ssh_keygen(keys.name), "rbac.authorization.k8s.io"
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(keys)},
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "Role",
            "metadata": _meta(keys),
            "rules": keygen_role_rules(**_names(keys)),
        },
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "RoleBinding",
            "metadata": _meta(keys),
            "subjects": [service_account_subject(keys, name)],
            "roleRef": {"apiGroup": rbac, "kind": "Role", "name": name},
        },
    ]


def build_keygen_rbac(plan: JobPlan) -> list[dict[str, Any]]:
    return keygen_rbac(key_job(plan)) if generates_keys(plan) else []


def key_security_context(keys: KeyJob) -> dict[str, Any]:
    """Both containers' context: Pod Security restricted, as the worker's user (ssh-keygen writes the
    private key readable by its owner only, and `store` reads it), or `nobody` where the worker names
    none or root: neither ssh-keygen nor kubectl needs root, and ssh-keygen needs a user in the image's
    passwd, which `nobody` is in alpine's, Debian's and Ubuntu's."""
    own = keys.pod["containers"][0].get("securityContext") or {}
    pod = keys.pod.get("securityContext") or {}
    context = restricted_security_context(None)
    if own.get("runAsUser", pod.get("runAsUser")):
        context.update({key: own[key] for key in ("runAsUser", "runAsGroup") if key in own})
    else:
        context.update(runAsUser=HELPER_USER, runAsGroup=HELPER_USER)
    return context


def build_keygen_container(keys: KeyJob) -> dict[str, Any]:
    source = keys.pod["containers"][0]
    # A source without an image (a TrainJob runtime's, which its CRD allows) is refused where it stands,
    # by the pod rules on the JobSet; the key Job then only mirrors that.
    container = {"name": "ssh-keygen", "image": source.get("image", ""), "command": list(KEYGEN_COMMAND)}
    if "imagePullPolicy" in source:
        container["imagePullPolicy"] = source["imagePullPolicy"]
    container["volumeMounts"] = [{"name": KEYS_VOLUME, "mountPath": KEYS_DIR}]
    harden(container, None)
    container["securityContext"] = key_security_context(keys)
    return container


def build_store_container(keys: KeyJob, options: Options) -> dict[str, Any]:
    """The one container of the key Job that calls the API, and so the one with the token."""
    container: dict[str, Any] = {
        "name": "store",
        "image": options.kubectl_delivery_image or keys.kubectl_image,
        "command": ["/bin/sh", f"{names.CONFIG_MOUNT_PATH}/{names.KEYGEN_SCRIPT}"],
        "env": [home_env()],
        "volumeMounts": [
            {"name": KEYS_VOLUME, "mountPath": KEYS_DIR, "readOnly": True},
            {"name": names.CONFIG_VOLUME, "mountPath": names.CONFIG_MOUNT_PATH},
            tmp_mount(),
            api_token_mount(),
        ],
    }
    harden(container, None)
    container["securityContext"] = key_security_context(keys)
    return container


def build_keygen_pod_spec(keys: KeyJob, options: Options) -> dict[str, Any]:
    source = keys.pod
    pod: dict[str, Any] = {key: source[key] for key in POD_FIELDS if key in source}
    context = source.get("securityContext") or {}
    if kept := {key: context[key] for key in POD_SECURITY_FIELDS if key in context}:
        pod["securityContext"] = kept
    item = {"key": names.KEYGEN_SCRIPT, "path": names.KEYGEN_SCRIPT, "mode": names.SCRIPT_MODE}
    pod.update(
        serviceAccountName=names.ssh_keygen(keys.name),
        automountServiceAccountToken=False,
        restartPolicy="OnFailure",
        initContainers=[build_keygen_container(keys)],
        containers=[build_store_container(keys, options)],
        volumes=[
            {"name": KEYS_VOLUME, "emptyDir": {"medium": "Memory"}},
            {
                "name": names.CONFIG_VOLUME,
                "configMap": {"name": names.config_map(keys.name), "items": [item]},
            },
            tmp_volume(),
            api_token_volume(),
        ],
    )
    return pod


def keygen_job(keys: KeyJob, options: Options) -> dict[str, Any]:
    spec = {
        "backoffLimit": 6,
        "ttlSecondsAfterFinished": TTL_SECONDS_AFTER_FINISHED,
        "template": {"metadata": {"labels": _labels(keys)}, "spec": build_keygen_pod_spec(keys, options)},
    }
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": _meta(keys), "spec": spec}


def build_keygen_job(plan: JobPlan, options: Options) -> list[dict[str, Any]]:
    return [keygen_job(key_job(plan), options)] if generates_keys(plan) else []
