"""The operator target: the objects the mpi-operator would create, plus what runs them without it."""
