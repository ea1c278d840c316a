"""Pieces of the job's pods that every target adds the same way: the ConfigMap volume and mount, the
SSH key volume and mount (mpi-operator v0.8.2 `setupSSHOnPod`), DNS on the host network, and the
launcher's kubectl-delivery init container with its volume (mpi-operator v0.2.0 `newLauncher`,
training-operator release-1.9 `newLauncher`)."""

from __future__ import annotations

from typing import Any

from mpigen import names, tree
from mpigen.options import Options
from mpigen.plan import JobPlan, Ssh
from mpigen.targets.shared.hardening import harden
from mpigen.targets.shared.meta import kubectl_delivery_image


def config_volume(items: list[tuple[str, int]], job: str) -> dict[str, Any]:
    """The ConfigMap volume `mpi-job-config` with the given (key, mode) items."""
    return {
        "name": names.CONFIG_VOLUME,
        "configMap": {
            "name": names.config_map(job),
            "items": [{"key": key, "path": key, "mode": mode} for key, mode in items],
        },
    }


def config_mount() -> dict[str, Any]:
    return {"name": names.CONFIG_VOLUME, "mountPath": names.CONFIG_MOUNT_PATH}


def ssh_volume(ssh: Ssh) -> dict[str, Any]:
    """v0.8.2 `setupSSHOnPod`: the key pair as id_rsa, id_rsa.pub and authorized_keys; mode 0600 only
    for /root/.ssh (for another user, root-owned 0644 files pass OpenSSH's checks)."""
    items = [
        {"key": names.SSH_PRIVATE_KEY, "path": "id_rsa"},
        {"key": names.SSH_PUBLIC_KEY, "path": "id_rsa.pub"},
        {"key": names.SSH_PUBLIC_KEY, "path": "authorized_keys"},
    ]
    secret: dict[str, Any] = {"secretName": ssh.secret, "items": items}
    if ssh.mount_path == names.ROOT_SSH_PATH:
        secret["defaultMode"] = 0o600
    return {"name": names.SSH_VOLUME, "secret": secret}


def add_ssh(pod: dict[str, Any], ssh: Ssh, role: str, *, mount: bool = True) -> None:
    """The role variable, the key mount in containers[0] and the key volume (v0.8.2 `setupSSHOnPod`);
    only the variable when the run target's engine mounts the keys (`mount` False)."""
    container = pod["containers"][0]
    container["env"] = [*(container.get("env") or []), {"name": names.JOB_ROLE_ENV, "value": role}]
    if not mount:
        return
    key_mount = {"name": names.SSH_VOLUME, "mountPath": ssh.mount_path}
    container["volumeMounts"] = [*(container.get("volumeMounts") or []), key_mount]
    pod["volumes"] = [*(pod.get("volumes") or []), ssh_volume(ssh)]


def host_network_dns(pod: dict[str, Any]) -> None:
    """v0.8.2: a pod on the host network resolves cluster names only with ClusterFirstWithHostNet."""
    if pod.get("hostNetwork"):
        pod["dnsPolicy"] = "ClusterFirstWithHostNet"


def kubectl_mount() -> dict[str, str]:
    return {"name": names.KUBECTL_VOLUME, "mountPath": names.KUBECTL_MOUNT_PATH}


def build_kubectl_delivery(plan: JobPlan, options: Options) -> dict[str, Any]:
    """The init container that copies the image's kubectl into the launcher's kubectl volume.

    Its command is explicit: the image's own differs by version. mpi-operator v0.2.0
    cmd/kubectl-delivery/Dockerfile runs `deliver_kubectl.sh` (copy kubectl into $TARGET_DIR); from v0.2.3
    on (the `latest` tag) it runs `cp /bin/kubectl /opt/kube/kubectl; /bin/kubectl-delivery`, a program
    that opens /etc/mpi/hostfile and watches the namespace's pods (cmd/kubectl-delivery/app/server.go:
    Run), which neither the v1alpha1/v1alpha2 launcher (no hostfile mounted there) nor mpigen's Role
    (`get` on named pods only) allows: the launcher would never start. Both images keep kubectl at
    /bin/kubectl; the waiting is the wait-for-workers container's.
    """
    delivery = plan.kubectl_delivery
    container: dict[str, Any] = {
        "name": names.KUBECTL_DELIVERY,
        "image": kubectl_delivery_image(plan, options),
        "command": ["cp", names.IMAGE_KUBECTL_PATH, names.KUBECTL_PATH],
        "env": [{"name": names.KUBECTL_TARGET_DIR_ENV, "value": names.KUBECTL_MOUNT_PATH}, *delivery.env],
        "volumeMounts": [kubectl_mount(), *([config_mount()] if delivery.mount_config else [])],
    }
    if delivery.pull_policy:
        container["imagePullPolicy"] = delivery.pull_policy
    if delivery.resources:
        container["resources"] = tree.copy(delivery.resources)
    # Under Kueue (--queue, jobset target) no ephemeral-storage of mpigen's own: Kueue counts it.
    return harden(container, ephemeral=options.queue is None)
