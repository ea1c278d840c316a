"""Checks: the rules no schema states, on a plan and on the objects built; object sizes; Kubernetes' schemas."""
