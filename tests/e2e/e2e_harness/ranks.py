"""Ranks: where Open MPI placed each process, read from the program's output, checked against the hostfile.

With a hostfile and no mapping options, mpirun fills each host's slots in hostfile order (`--map-by
slot`, the default when np <= slots): ranks 0..s0-1 on the first host, the next s1 on the second, and
so on; each rank's local rank is its slot on that host.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from .values import Run

_LINE = re.compile(
    r"rank=(?P<rank>\d+) size=(?P<size>\d+) local_rank=(?P<local>\d+) host=(?P<host>\S+) "
    r"sum=(?P<sum>-?\d+) max=(?P<max>-?\d+)"
)


@dataclass(frozen=True)
class RankLine:
    """One line of allreduce.c's output."""

    rank: int
    size: int
    local_rank: int
    host: str
    sum: int
    max: int


def parse_ranks(stdout: str) -> list[RankLine]:
    """Every rank line, sorted by rank; any other non-empty stdout line is an error."""
    out = []
    for line in stdout.splitlines():
        if not line.strip():
            continue
        match = _LINE.fullmatch(line.strip())
        if match is None:
            raise AssertionError(f"unexpected output line: {line!r}")
        out.append(
            RankLine(
                int(match["rank"]),
                int(match["size"]),
                int(match["local"]),
                match["host"],
                int(match["sum"]),
                int(match["max"]),
            )
        )
    return sorted(out, key=lambda r: r.rank)


def expected_placement(hostfile: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """`(host, slot)` for each rank when mpirun fills every slot of the hostfile in order."""
    return [(host, slot) for host, slots in hostfile for slot in range(slots)]


def check_allreduce(run: Run, hostfile: list[tuple[str, int]]) -> list[RankLine]:
    """Assert every rank ran once, on the pod and slot the hostfile assigns, and summed correctly."""
    assert run.returncode == 0, run.describe()
    ranks = parse_ranks(run.stdout)
    placement = expected_placement(hostfile)
    n = len(placement)
    assert [r.rank for r in ranks] == list(range(n)), run.describe()
    for line, (host, slot) in zip(ranks, placement, strict=True):
        assert (line.host, line.local_rank) == (host, slot), f"rank {line.rank}: {line}\n{run.describe()}"
        assert (line.size, line.sum, line.max) == (n, n * (n + 1) // 2, n - 1), f"{line}\n{run.describe()}"
    return ranks


def check_hostnames(run: Run, hostfile: list[tuple[str, int]]) -> None:
    """Assert `mpirun hostname` printed each worker pod's name exactly as often as it has slots."""
    assert run.returncode == 0, run.describe()
    printed = Counter(line.strip() for line in run.stdout.splitlines() if line.strip())
    assert printed == Counter(dict(hostfile)), run.describe()
