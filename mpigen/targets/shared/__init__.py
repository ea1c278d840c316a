"""What more than one run target builds with: object metadata (`meta`), the MPI implementations'
environment (`mpi_env`), the scripts that run in the pods and their templates (`scripts`, `templating`,
`_fast_templates`), the SSH key made in the cluster (`ssh`), gang scheduling (`gang`), the launcher's and workers' pod templates and what they read (`rbac`,
`workers`, `launcher`, `pods`, `hostfile`), and the sizes that grow with the worker count (`sizes`).

Not a target (it has no row in mpigen.targets.TARGETS): every target may import it, it imports no target
(tests/test_layout.py).
"""
