"""Run targets: what a job plan becomes in the cluster, one folder per target."""
