"""Published images: what a container runs when its spec names no command, and the files it brings.

Kubernetes runs a container's `command` (with its `args`) when the spec gives one; else the image's
ENTRYPOINT, with the spec's `args` or else the image's CMD. The harness has no image layers, so it can run
a container without a command of its own only when this table knows its image as published: the
ENTRYPOINT and CMD of the Dockerfile it is built from, and the files the container's command needs
(programs built from their pinned Go modules, the harness's kubectl stand-in where the image has kubectl).
A container without a command whose image is not here is refused by name: an emulation never stands in
for an image's real behaviour.

`mpioperator/kubectl-delivery:latest` is built by mpi-operator's cmd/kubectl-delivery/Dockerfile (v0.2.3 on,
the same at v0.3.0): alpine with kubectl at /bin/kubectl and the program at /bin/kubectl-delivery,
ENTRYPOINT ["/bin/sh", "-c"], CMD ["cp /bin/kubectl /opt/kube/kubectl; /bin/kubectl-delivery
-alsologtostderr"]. Its program is built from the Go module github.com/kubeflow/mpi-operator v0.3.0
(tests/cluster/gotools.py tool `kubectl-delivery`). The training-operator's `kubeflow/kubectl-delivery:latest`
(the kubeflow.org/v1 default) only copies kubectl.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cluster import gotools

from .image import ImageFile
from .netns import HarnessError
from .pods import Container

IMAGE_KUBECTL = "/bin/kubectl"  # where every mpioperator/kubectl-delivery image has kubectl
DELIVERY_PROGRAM = "/bin/kubectl-delivery"


@dataclass(frozen=True)
class Published:
    """An image as its Dockerfile builds it: ENTRYPOINT, CMD and the paths of the files the harness
    provides (`kubectl`: the stand-in; else a Go tool's binary, built when first needed)."""

    entrypoint: tuple[str, ...]
    cmd: tuple[str, ...]
    kubectl: str | None = None
    programs: tuple[tuple[str, str], ...] = ()  # (path in the image, binary of tests/cluster/gotools.py)


KUBECTL_DELIVERY = Published(
    entrypoint=("/bin/sh", "-c"),
    cmd=("cp /bin/kubectl /opt/kube/kubectl; /bin/kubectl-delivery -alsologtostderr",),
    kubectl=IMAGE_KUBECTL,
    programs=((DELIVERY_PROGRAM, "kubectl-delivery"),),
)

# training-operator build/images/kubectl-delivery/Dockerfile: alpine with kubectl at /bin/kubectl,
# ENTRYPOINT ["/bin/sh", "-c"], CMD ["cp /bin/kubectl /opt/kube/kubectl"].
TRAINING_OPERATOR_KUBECTL_DELIVERY = Published(
    entrypoint=("/bin/sh", "-c"), cmd=("cp /bin/kubectl /opt/kube/kubectl",), kubectl=IMAGE_KUBECTL
)

IMAGES: dict[str, Published] = {
    "mpioperator/kubectl-delivery:latest": KUBECTL_DELIVERY,
    "docker.io/mpioperator/kubectl-delivery:latest": KUBECTL_DELIVERY,
    "kubeflow/kubectl-delivery:latest": TRAINING_OPERATOR_KUBECTL_DELIVERY,
    "docker.io/kubeflow/kubectl-delivery:latest": TRAINING_OPERATOR_KUBECTL_DELIVERY,
}


def published(image: str) -> Published | None:
    return IMAGES.get(image)


def argv(container: Container) -> tuple[str, ...]:
    """What the container runs: its own command (and args), else its image's ENTRYPOINT with its args or
    the image's CMD; HarnessError for an image this table does not know."""
    if container.has_command:
        return container.argv
    image = published(container.image)
    if image is None:
        raise HarnessError(
            f"container {container.name}: no command of its own, and the harness does not know what image "
            f"{container.image!r} runs (add its Dockerfile's ENTRYPOINT and CMD to e2e_harness/published.py)"
        )
    return (*image.entrypoint, *(container.argv or image.cmd))


def go_binary(name: str) -> Path:
    """A binary of tests/cluster/gotools.py, built if needed (the test skips where `go` is missing)."""
    return Path(gotools.require(name))


def image_files(
    containers: Sequence[Container], kubectl: str, binary: Callable[[str], Path] = go_binary
) -> tuple[ImageFile, ...]:
    """The files the pod's published images bring: kubectl where they have it, and the programs of those
    whose own command (no command in the spec) runs them."""
    files: dict[str, ImageFile] = {}
    for container in containers:
        image = published(container.image)
        if image is None:
            continue
        if image.kubectl is not None:
            files[image.kubectl] = ImageFile(image.kubectl, kubectl, 0o755)
        if not container.has_command:
            for path, tool in image.programs:
                files[path] = ImageFile(path, "", 0o755, source=binary(tool))
    return tuple(files.values())
