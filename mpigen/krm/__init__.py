"""The KRM function: `protocol` (the ResourceList in, the same list with MPIJobs compiled out; pure),
`reading` and `layout` (the list read, its items cut out of its text and read only as far as needed)
and `yamltext` (the list written, kept items as they came and generated objects spliced in).

The shell that reads stdin and writes stdout is `mpigen.shells.krm`.
"""

from __future__ import annotations

STDIN = "<stdin>"

# The largest ResourceList the function reads, and writes: an output that would be larger is refused,
# so the function always accepts its own output. 1,000 typical jobs compile to about 23 MiB.
MAX_LIST_BYTES = 256 * 1024 * 1024


class NotAResourceList(Exception):
    """Input that is not a ResourceList at all: exit 1, nothing on stdout."""
