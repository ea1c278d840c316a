"""Kubeflow Trainer's names: the TrainJob and runtime kinds a TrainJob front reads, and the names
Trainer's controller gives what it creates for one (Kubeflow Trainer v2.3.0 pkg/constants/constants.go).
Read by the TrainJob front (mpigen.inputs.trainjob), the jobset target's TrainJob builders
(mpigen.targets.jobset.trainjob) and `mpigen convert`.
"""

from __future__ import annotations

from mpigen.names import SSH_PRIVATE_KEY, SSH_PUBLIC_KEY

TRAINER_API = "trainer.kubeflow.org/v1alpha1"
TRAINER_GROUP = "trainer.kubeflow.org"
TRAINJOB_KIND = "TrainJob"
RUNTIME_KINDS = ("TrainingRuntime", "ClusterTrainingRuntime")
TRAINJOB_APP_NAME = "trainjob"
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
ANCESTOR_TRAINER = "trainer"
ANCESTOR_INITIALIZERS = ("dataset-initializer", "model-initializer")
TRAINER_CONTAINER = "node"
NODE_RJOB = "node"
LAUNCHER_RJOB = "launcher"  # the runtime's launcher ReplicatedJob
DEFAULT_MANAGED_BY = "trainer.kubeflow.org/trainjob-controller"
MPI_SSH_VOLUME = "mpi-ssh-auth"
MPI_HOSTFILE_VOLUME = "mpi-hostfile"
MPI_HOSTFILE_DIR = "/etc/mpi"
MPI_SSH_ITEMS = (
    (SSH_PRIVATE_KEY, "id_rsa"),
    (SSH_PUBLIC_KEY, "id_rsa.pub"),
    (SSH_PUBLIC_KEY, "authorized_keys"),
)


def trainjob_ssh_secret(job: str) -> str:
    return job + "-mpi-ssh-auth"


def trainjob_hostfile(job: str) -> str:
    return job + "-mpi-hostfile"
