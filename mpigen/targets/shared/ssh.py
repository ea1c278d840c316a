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
"""

from __future__ import annotations

from typing import Any

from mpigen import names
from mpigen.options import Options
from mpigen.plan import JobPlan
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
from mpigen.targets.shared.meta import kubectl_delivery_image, object_meta, service_account_subject
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


def generates_keys(plan: JobPlan) -> bool:
    return plan.ssh is not None and plan.ssh.generate_keys


def _names(plan: JobPlan) -> dict[str, str]:
    assert plan.ssh is not None
    name = names.ssh_keygen(plan.name)
    return {"secret": plan.ssh.secret, "self_job": name, "self_rbac": name}


def render_keygen(plan: JobPlan) -> str:
    """The key-generation Job's script, shipped in the job's ConfigMap as `ssh-keygen.sh`."""
    found = _names(plan)
    return render_keygen_script(
        secret=found["secret"], self_job=found["self_job"], self_rbac=found["self_rbac"], keys_dir=KEYS_DIR
    )


def build_ssh_secret(plan: JobPlan) -> list[dict[str, Any]]:
    if not generates_keys(plan):
        return []
    meta = object_meta(plan, names.ssh_secret(plan.name), COMPONENT, plan.labels.other)
    return [{"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": "Opaque"}]


def _meta(plan: JobPlan) -> dict[str, Any]:
    return object_meta(plan, names.ssh_keygen(plan.name), COMPONENT)


def build_keygen_rbac(plan: JobPlan) -> list[dict[str, Any]]:
    if not generates_keys(plan):
        return []
    name, rbac = names.ssh_keygen(plan.name), "rbac.authorization.k8s.io"
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(plan)},
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "Role",
            "metadata": _meta(plan),
            "rules": keygen_role_rules(**_names(plan)),
        },
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "RoleBinding",
            "metadata": _meta(plan),
            "subjects": [service_account_subject(plan, name)],
            "roleRef": {"apiGroup": rbac, "kind": "Role", "name": name},
        },
    ]


def _source_pod(plan: JobPlan) -> dict[str, Any]:
    """The pod template whose image runs ssh-keygen: the worker's (it runs sshd), else the launcher's."""
    template = plan.worker_template if plan.workers > 0 else plan.launcher_template
    spec: dict[str, Any] = template["spec"]
    return spec


def key_security_context(plan: JobPlan) -> dict[str, Any]:
    """Both containers' context: Pod Security restricted, as the worker's user (ssh-keygen writes the
    private key readable by its owner only, and `store` reads it), or `nobody` where the worker names
    none or root: neither ssh-keygen nor kubectl needs root, and ssh-keygen needs a user in the image's
    passwd, which `nobody` is in alpine's, Debian's and Ubuntu's."""
    own = _source_pod(plan)["containers"][0].get("securityContext") or {}
    pod = _source_pod(plan).get("securityContext") or {}
    context = restricted_security_context(None)
    if own.get("runAsUser", pod.get("runAsUser")):
        context.update({key: own[key] for key in ("runAsUser", "runAsGroup") if key in own})
    else:
        context.update(runAsUser=HELPER_USER, runAsGroup=HELPER_USER)
    return context


def build_keygen_container(plan: JobPlan) -> dict[str, Any]:
    source = _source_pod(plan)["containers"][0]
    container = {"name": "ssh-keygen", "image": source["image"], "command": list(KEYGEN_COMMAND)}
    if "imagePullPolicy" in source:
        container["imagePullPolicy"] = source["imagePullPolicy"]
    container["volumeMounts"] = [{"name": KEYS_VOLUME, "mountPath": KEYS_DIR}]
    harden(container, None)
    container["securityContext"] = key_security_context(plan)
    return container


def build_store_container(plan: JobPlan, options: Options) -> dict[str, Any]:
    """The one container of the key Job that calls the API, and so the one with the token."""
    container: dict[str, Any] = {
        "name": "store",
        "image": kubectl_delivery_image(plan, options),
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
    container["securityContext"] = key_security_context(plan)
    return container


def build_keygen_pod_spec(plan: JobPlan, options: Options) -> dict[str, Any]:
    source = _source_pod(plan)
    pod: dict[str, Any] = {key: source[key] for key in POD_FIELDS if key in source}
    context = source.get("securityContext") or {}
    if kept := {key: context[key] for key in POD_SECURITY_FIELDS if key in context}:
        pod["securityContext"] = kept
    item = {"key": names.KEYGEN_SCRIPT, "path": names.KEYGEN_SCRIPT, "mode": names.SCRIPT_MODE}
    pod.update(
        serviceAccountName=names.ssh_keygen(plan.name),
        automountServiceAccountToken=False,
        restartPolicy="OnFailure",
        initContainers=[build_keygen_container(plan)],
        containers=[build_store_container(plan, options)],
        volumes=[
            {"name": KEYS_VOLUME, "emptyDir": {"medium": "Memory"}},
            {
                "name": names.CONFIG_VOLUME,
                "configMap": {"name": names.config_map(plan.name), "items": [item]},
            },
            tmp_volume(),
            api_token_volume(),
        ],
    )
    return pod


def build_keygen_job(plan: JobPlan, options: Options) -> list[dict[str, Any]]:
    if not generates_keys(plan):
        return []
    labels = names.standard_labels(plan.name, COMPONENT)
    spec = {
        "backoffLimit": 6,
        "ttlSecondsAfterFinished": TTL_SECONDS_AFTER_FINISHED,
        "template": {"metadata": {"labels": labels}, "spec": build_keygen_pod_spec(plan, options)},
    }
    return [{"apiVersion": "batch/v1", "kind": "Job", "metadata": _meta(plan), "spec": spec}]
