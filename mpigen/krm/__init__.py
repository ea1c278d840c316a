"""The KRM function: `protocol` (the ResourceList in, the same list with MPIJobs compiled out; pure) and
`yamltext` (the list's YAML text, read back with comments kept and written with items spliced in).

The shell that reads stdin and writes stdout is `mpigen.shells.krm`.
"""

from __future__ import annotations

STDIN = "<stdin>"


class NotAResourceList(Exception):
    """Input that is not a ResourceList at all: exit 1, nothing on stdout."""
