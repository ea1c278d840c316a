"""Issues: every problem mpigen finds, as data with a field path.

An `Issue` names where (a path of keys and list indices inside one document), what (a message saying
what was expected and what was found) and how bad (error or warning). `CompileError` carries every
issue found in one job, not only the first. Rendering issues as text, JSON or KRM results is done by
the shells (cli, krm); this module only holds the data and the path notation.
"""

from __future__ import annotations

import json
from typing import Literal, NamedTuple

Path = tuple[str | int, ...]
Severity = Literal["error", "warning"]


# Characters that would break a message over lines or rewrite a terminal: C0 and C1 controls, DEL and
# Unicode's line and paragraph separators. Written as JSON would escape them.
_ESCAPES = {code: json.dumps(chr(code))[1:-1] for code in (*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029)}
SHOWN_MAX = 80


def one_line(text: str) -> str:
    """A message as one line: every control character escaped (a value with a newline cannot forge a
    line of mpigen's output)."""
    return text.translate(_ESCAPES)


def shown(value: str, limit: int = SHOWN_MAX) -> str:
    """A string from the input inside a message: quoted, escaped, and shortened past `limit` characters
    (`"aaaa…" (200,000 characters)`)."""
    if len(value) <= limit:
        return json.dumps(value, ensure_ascii=False).translate(_ESCAPES)
    return (
        json.dumps(value[:limit], ensure_ascii=False).translate(_ESCAPES)[:-1]
        + f'…" ({len(value):,} characters)'
    )


def plain_or_shown(value: str, limit: int = 253) -> str:
    """A name as it is when it is a plain one (a job name, a file name), else quoted as `shown` does."""
    if len(value) <= limit and value.isprintable():
        return value
    return shown(value)


def format_path(path: Path) -> str:
    """Render a path the way kubectl explains fields: `spec.containers[0].name`.

    Keys that are not plain identifiers (label keys such as `nvidia.com/gpu`) are bracketed and quoted
    so the path stays unambiguous: `limits["nvidia.com/gpu"]`.
    """
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part and all(c.isalnum() or c in "_-" for c in part):
            out += f".{part}" if out else part
        else:
            out += f"[{shown(part, 60)}]"
    return out


class ComparedByFields:
    """A mutable record compared by the values of the fields `_compared` names, in that order, and shown
    by them in its repr; not hashable. (mpigen's records that are never compared are plain classes with
    __slots__; the immutable ones are NamedTuples.)"""

    __slots__ = ()
    _compared: tuple[str, ...] = ()

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self._compared)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._compared)
        return f"{type(self).__name__}({shown})"


class Issue(NamedTuple):
    """One problem (or warning) at one place in one input document."""

    path: Path
    message: str
    severity: Severity = "error"

    def text(self) -> str:
        where = format_path(self.path)
        return one_line(f"{where}: {self.message}" if where else self.message)

    def under(self, *prefix: str | int) -> Issue:
        """The same issue, seen from a document that holds this one at `prefix`."""
        return Issue(tuple(prefix) + self.path, self.message, self.severity)


MAX_ISSUES_PER_JOB = 100


class CompileError(ComparedByFields, Exception):
    """An input job could not be compiled; `issues` holds every problem found (past MAX_ISSUES_PER_JOB,
    the first ones and a line saying how many more), `warnings` what was found besides. Two are equal
    when their issues, kind, name and warnings are."""

    def __init__(
        self, issues: list[Issue], kind: str = "MPIJob", name: str = "", warnings: list[Issue] | None = None
    ) -> None:
        if len(issues) > MAX_ISSUES_PER_JOB:  # 20,000 broken containers are not 20,000 lines
            rest = len(issues) - MAX_ISSUES_PER_JOB
            more = Issue((), f"and {rest:,} more problems (the first {MAX_ISSUES_PER_JOB} are shown)")
            issues = [*issues[:MAX_ISSUES_PER_JOB], more]
        self.issues = issues
        self.kind = kind
        self.name = name
        self.warnings = [] if warnings is None else warnings
        super().__init__(self.__str__())

    _compared = ("issues", "kind", "name", "warnings")

    def __str__(self) -> str:
        who = f"{self.kind}/{self.name}" if self.name else self.kind
        return "\n".join(f"{who}: {issue.text()}" for issue in self.issues)


class InternalError(Exception):
    """mpigen produced something it should not have: a bug, never the user's fault (exit 3)."""
