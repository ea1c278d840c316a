"""Outcomes: what one run of mpigen made and found, the one result every shell reports from. Pure.

An `Outcome` holds the objects made and every problem found, each a `Finding` (where: source and
document; which object; the `Issue` itself). Its problems come in three sorts: `errors` (the input is
invalid: exit 1), `warnings` (reported, never fatal) and `invalid_output` (an emitted object fails
Kubernetes' schemas: mpigen's bug, never the user's, exit 3). An unexpected exception is a bug too.

This module owns every way a problem is written out, so that the shells (render, validate, the KRM
function, the kustomize plugin) say the same thing the same way:
- a text line: `job.yaml: MPIJob/pi: spec.slotsPerWorker: must be >= 1, got 0` (`Finding.text`);
- a kubeconform-like JSON error: `{"path": "/spec/slotsPerWorker", "msg": ...}` (`json_errors`);
- a KRM `results[]` entry: severity, resourceRef, field.path, file (`krm_result`).
It also computes the exit code, once (`exit_code`), and words the internal-error lines, once.
"""

from __future__ import annotations

from typing import Any

from mpigen.errors import Issue, Path, format_path, one_line, plain_or_shown
from mpigen.records import Record

EXIT_OK = 0
EXIT_INVALID = 1  # invalid input: every problem reported on stderr, nothing on stdout
EXIT_USAGE = 2  # a usage error (click's own code)
EXIT_INTERNAL = 3  # a bug in mpigen: one line on stderr, never a traceback

PLEASE_REPORT = "please report this"
INVALID_OUTPUT_HEADER = f"mpigen: internal error: the output fails Kubernetes' schemas ({PLEASE_REPORT}):"


def exit_code(invalid: bool, internal: bool) -> int:
    """The one exit code rule: input problems first (a bug shows once they are fixed), then bugs."""
    if invalid:
        return EXIT_INVALID
    return EXIT_INTERNAL if internal else EXIT_OK


def internal_error(exc: BaseException) -> str:
    """The line for an unexpected exception: what it was, never a traceback."""
    return f"mpigen: internal error: {type(exc).__name__}: {exc} ({PLEASE_REPORT})"


def invalid_output_message(kind: str, name: str, issue: Issue) -> str:
    """A KRM result's message for an emitted object that fails Kubernetes' schemas."""
    return f"internal error ({PLEASE_REPORT}): generated {kind}/{name}: {issue.text()}"


class Finding(Record):
    """One problem at one place: the input (source, document), the object, and the issue."""

    source: str  # empty for a problem already worded whole (an input that cannot be read)
    document: int | None  # 1-based position in its stream, shown only for multi-document inputs
    kind: str
    name: str
    issue: Issue

    @classmethod
    def line(cls, text: str) -> Finding:
        """A problem whose text is already complete (it names its own source)."""
        return cls("", None, "", "", Issue((), text))

    def text(self) -> str:
        if not self.source and not self.kind and not self.name:
            return one_line(self.issue.text())  # a line already worded whole
        where = (f"{plain_or_shown(self.source, 4096)}: " if self.source else "") + (
            f"document {self.document}: " if self.document else ""
        )
        kind, name = plain_or_shown(self.kind), plain_or_shown(self.name)
        who = f"{kind}/{name}: " if self.name else (f"{kind}: " if self.kind else "")
        label = "warning: " if self.issue.severity == "warning" else ""
        return f"{where}{who}{label}{self.issue.text()}"


class Placement(Record):
    """One input document's share of the output, and where it came from: the objects a job generates
    (`generated`), or a document passed through as it is. Kept so that two of them that would write
    the same object can both be named (mpigen.pipeline.check_collisions)."""

    source: str
    document: int | None
    kind: str
    name: str
    objects: tuple[dict[str, Any], ...]
    generated: bool
    # What the run target's engine creates from a job's objects (a JobSet's Service, Volcano's plugins'):
    # they collide like the job's own (mpigen.targets.Target.engine_objects).
    implied: tuple[dict[str, Any], ...] = ()

    def where(self) -> str:
        return self.source + (f" (document {self.document})" if self.document else "")


class Outcome:
    """The objects made from some inputs and every problem found in them."""

    __slots__ = ("crash", "errors", "invalid_output", "jobs", "objects", "placements", "warnings")

    def __init__(
        self,
        objects: list[dict[str, Any]] | None = None,
        errors: list[Finding] | None = None,
        warnings: list[Finding] | None = None,
        invalid_output: list[Finding] | None = None,
        jobs: int = 0,
        crash: str = "",
        placements: list[Placement] | None = None,
    ) -> None:
        self.objects: list[dict[str, Any]] = [] if objects is None else objects
        self.errors: list[Finding] = [] if errors is None else errors
        self.warnings: list[Finding] = [] if warnings is None else warnings
        # Emitted objects that fail Kubernetes' schemas: mpigen's bugs, never the user's (exit 3).
        self.invalid_output: list[Finding] = [] if invalid_output is None else invalid_output
        self.jobs = jobs
        self.crash = crash  # the internal-error line of an unexpected exception
        self.placements: list[Placement] = (
            [] if placements is None else placements
        )  # what each document put in `objects`

    @classmethod
    def crashed(cls, exc: BaseException) -> Outcome:
        return cls(crash=internal_error(exc))

    def add(self, other: Outcome) -> None:
        """Take in the outcome of more inputs, after this one's."""
        self.objects += other.objects
        self.errors += other.errors
        self.warnings += other.warnings
        self.invalid_output += other.invalid_output
        self.jobs += other.jobs
        self.crash = self.crash or other.crash
        self.placements += other.placements

    @property
    def exit_code(self) -> int:
        return exit_code(bool(self.errors), bool(self.invalid_output or self.crash))

    def lines(self) -> list[str]:
        """What the shells write on stderr: warnings, then the errors, or else the bugs under a header."""
        if self.crash:
            return [self.crash]
        lines = [finding.text() for finding in self.warnings]
        if self.errors:
            return lines + [finding.text() for finding in self.errors]
        if self.invalid_output:
            lines += [INVALID_OUTPUT_HEADER, *(finding.text() for finding in self.invalid_output)]
        return lines


def json_pointer(path: Path) -> str:
    """RFC 6901: `("spec", "containers", 0)` -> `/spec/containers/0`, as kubeconform prints paths."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)


def json_errors(findings: list[Finding]) -> list[dict[str, str]]:
    """Findings as kubeconform's `validationErrors`."""
    return [{"path": json_pointer(f.issue.path), "msg": one_line(f.issue.message)} for f in findings]


def krm_result(
    message: str,
    severity: str,
    path: Path = (),
    resource_ref: dict[str, str] | None = None,
    file: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One KRM `results[]` entry, shaped as kyaml's framework.Result."""
    entry: dict[str, Any] = {"message": one_line(message), "severity": severity}
    if resource_ref:
        entry["resourceRef"] = resource_ref
    if path:
        entry["field"] = {"path": format_path(path)}
    if file is not None:
        entry["file"] = file
    return entry
