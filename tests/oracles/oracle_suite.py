"""What the MPIJob differential tests (test_v2beta1_differential.py, test_v1_differential.py,
test_v1alpha2_differential.py) share beyond one job's comparison (differential.py): the golden cases of
one apiVersion, the rows each shows, the rows of the jobs mpigen refuses and the operator runs, and the
check that the rows shown are exactly the numbered rows of that apiVersion's section of
docs/departures.md.

    SUITE = Suite(API, SECTION, DEPARTURES, REFUSED, GENERATED)
    SUITE.golden_rows(case)      # compare one golden job, the rows it showed (cached)
    SUITE.refusal_row(case)      # None if the operator refuses it too, else its REFUSED row
    SUITE.assert_every_row_seen()
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import operator_oracle
import pytest
from differential import ROOT, Departure, Obj, compare, documented_rows, golden_job, operator_cases, pair

from mpigen.errors import CompileError


@dataclass(frozen=True, eq=False)
class Suite:
    """One apiVersion's differential test: its departures (row -> function, in the order they run), the
    golden error cases the operator runs (case -> row), generated jobs (name -> job) and generated jobs
    mpigen refuses and the operator runs (name -> (job, row)). `not_run`: error cases not sent to the
    oracle (case -> row), for jobs the operator could not even build in the oracle's time."""

    api: str
    section: str
    departures: dict[int, Departure]
    refused: dict[str, int]
    generated: dict[str, Obj] = field(default_factory=dict)
    generated_refused: dict[str, tuple[Obj, int]] = field(default_factory=dict)
    not_run: dict[str, int] = field(default_factory=dict)
    # the answers so far (each golden job is compared, and each error case run, once per session)
    _rows: dict[str, frozenset[int]] = field(default_factory=dict, init=False, repr=False)
    _refusals: dict[str, int | None] = field(default_factory=dict, init=False, repr=False)

    @functools.cached_property
    def golden(self) -> list[str]:
        return operator_cases(self.api)

    @property
    def success(self) -> list[str]:
        return [c for c in self.golden if not (ROOT / "golden" / c / "errors.txt").exists()]

    @property
    def errors(self) -> list[str]:
        return [c for c in self.golden if (ROOT / "golden" / c / "errors.txt").exists()]

    def golden_rows(self, case: str) -> frozenset[int]:
        if case not in self._rows:
            self._rows[case] = frozenset(compare(self.departures, golden_job(case)))
        return self._rows[case]

    def refusal_row(self, case: str) -> int | None:
        """None: the operator refuses the job too; else the REFUSED row (an unlisted one fails)."""
        if case not in self._refusals:
            self._refusals[case] = self._refusal_row(case)
        return self._refusals[case]

    def _refusal_row(self, case: str) -> int | None:
        if case in self.not_run:
            return self.not_run[case]
        try:
            operator_oracle.run(self.api, golden_job(case))
        except operator_oracle.OracleRefused:
            return None
        assert case in self.refused, (
            f"{case}: mpigen refuses it, the operator runs it, and no row of REFUSED says why"
        )
        return self.refused[case]

    def assert_refused(self, case: str) -> None:
        with pytest.raises(CompileError):
            pair(golden_job(case))
        self.refusal_row(case)

    def assert_generated_refused(self, name: str) -> None:
        refused, _ = self.generated_refused[name]
        with pytest.raises(CompileError):
            pair(refused)
        assert operator_oracle.run(self.api, refused)  # the operator creates its objects

    def assert_every_row_seen(self) -> None:
        """The rows the corpus shows are exactly the numbered rows of the section."""
        seen: set[int] = set()
        for case in self.success:
            seen |= self.golden_rows(case)
        for case in self.errors:
            row = self.refusal_row(case)
            if row is not None:
                seen.add(row)
        for generated in self.generated.values():
            seen |= compare(self.departures, generated)
        seen |= {row for _, row in self.generated_refused.values()}
        documented = documented_rows(self.section)
        assert sorted(seen) == sorted(documented), (
            f"rows no job shows any more: {sorted(set(documented) - seen)}; "
            f"rows taken out but not in docs/departures.md: {sorted(seen - set(documented))}"
        )

    def assert_refused_cases_are_error_cases(self) -> None:
        assert sorted(self.refused) == sorted(set(self.refused) & set(self.errors))
