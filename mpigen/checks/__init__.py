"""Checks: the rules no schema states, one module per concern, each a pure function of a plan or of
objects returning `Issue`s. `rules` (pod templates against what a target reserves, labels, the
output's selectors and subjects), `objectsize` (what etcd stores), `kube/` (Kubernetes' own schemas,
offline), `pod/` (the API server's own rules for every emitted pod template, in mpigen's Python) and
`output` (the pod rules run over a job's objects before anything is written out). Checks import only
the vocabulary, never an input front or a target (tests/test_layout.py).
"""
