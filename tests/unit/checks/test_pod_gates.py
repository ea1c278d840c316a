"""mpigen.checks.pod's gated rows: a check named "module.function" with a gate runs, and its module
loads, only for a template the gate lets through. A gate must be true whenever its check could find
something: held here over the differential test's corpus (tests/cluster/podmutations.py: every
family of pod validation, both seeds the closing figures use), every template run through each gated
check with its gate ignored. The volume sources' lazily loaded checks (in-tree drivers, ephemeral and
image volumes) are held to the table they stand in for."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from mpigen.checks import pod as rules
from mpigen.checks.pod import volumes
from mpigen.checks.pod.view import Pod

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "cluster"))
import podmutations  # tests/cluster: the differential test's corpus

GATED = [check for check in rules.CHECKS if check.when is not None]
CASES = 1200  # per seed: 25 of each family, for a run of a few seconds


def test_the_rows_without_a_gate_name_their_check_directly() -> None:
    assert GATED, "no gated row left: drop this test and the gate mechanism with it"
    for check in rules.CHECKS:
        assert check.when is not None or callable(check.run), check.family


def _templates(seed: int) -> list[tuple[str, Pod]]:
    found = []
    for number in range(CASES):
        case = podmutations.case(seed, number)
        for role, replica in case.job["spec"]["mpiReplicaSpecs"].items():
            template = replica["template"]
            spec, meta = template.get("spec"), template.get("metadata")
            read = volumes.as_read(spec, (1, 37)) if isinstance(spec, dict) else {}
            found.append(
                (
                    f"{case.family} #{number} {role}",
                    Pod(read, meta if isinstance(meta, dict) else {}, (), (1, 37)),
                )
            )
    return found


@pytest.mark.parametrize("seed", [1, 2])
def test_a_closed_gate_hides_no_violation(seed: int) -> None:
    opened: Counter[str] = Counter()
    found: Counter[str] = Counter()
    for where, pod in _templates(seed):
        for check in GATED:
            violations = list(check.run(pod))
            assert check.when is not None
            if not check.when(pod):
                assert violations == [], (
                    f"{check.name} found {violations[0]} in {where} behind its closed gate"
                )
            else:
                opened[check.name] += 1
                found[check.name] += bool(violations)
    # the corpus reaches every gated check with something to find, so the test above is not vacuous
    assert {check.name for check in GATED if found[check.name]} == {check.name for check in GATED}, (
        opened,
        found,
    )


def test_the_lazily_loaded_volume_sources_are_the_in_tree_drivers() -> None:
    from mpigen.checks.pod import drivers

    assert set(drivers.CHECKS) == volumes.IN_TREE
    dispatched = volumes.IN_TREE | set(volumes._CHECKS) | set(volumes._VERSIONED)
    assert dispatched == set(volumes.SOURCES)
