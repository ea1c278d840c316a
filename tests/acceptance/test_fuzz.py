"""A quick slice of the fuzzer (tests/fuzz.py), in process: 1,000 malformed inputs through every entry
point, each answered with exit 0 or 1, one line per problem, and no internal error.

The full run (12,000 cases at full size, each worker a process of its own so that a crash is caught) is
`python tests/fuzz.py --cases 12000`; CONTRIBUTING.md.
"""

from __future__ import annotations

from pathlib import Path

import fuzz

QUICK_CASES = 1000
SEED = 1  # the full run's default seed is 0: the slice adds cases the full run does not have


def test_a_quick_slice_of_malformed_inputs_is_answered_with_messages(tmp_path: Path) -> None:
    findings: dict[str, list[int]] = {}
    for number in range(QUICK_CASES):
        case = fuzz.make_case(number, SEED, small=True)
        result = fuzz.run_case(case, tmp_path)
        for problem in fuzz.problems(case, result, timeout=60.0):
            findings.setdefault(problem, []).append(number)
    report = [
        f"{len(numbers)} x {problem} (python tests/fuzz.py --seed {SEED} --small --case {numbers[0]})"
        for problem, numbers in findings.items()
    ]
    assert not findings, "\n".join(report)
