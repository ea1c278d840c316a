"""Repair for a second look: a job refused for problems that hide others, made compilable to find them.

The README promises every problem of an input in one run. Some problems stop a front before the later
checks run: an unknown field (a replica type such as `Chief`, a typo in a pod template) leaves no model
to check, and an invalid job name leaves no names to derive. `repaired` returns the job with those
problems taken out (the unknown fields left out, the name replaced by the nearest valid one) so the
compiler can run every other check on it and list what it finds beside the first problems
(mpigen.compiler.compile_job). Nothing repaired is ever rendered.
"""

from __future__ import annotations

import re
from typing import Any

from mpigen import names, tree
from mpigen.errors import Issue

_NAME = ("metadata", "name")


def _unknown_field(issue: Issue) -> bool:
    return issue.message.startswith("unknown field ") and bool(issue.path)


def _bad_name(issue: Issue) -> bool:
    return issue.path == _NAME and "required field is missing" not in issue.message


def repaired(document: object, issues: list[Issue]) -> tuple[dict[str, Any], str | None] | None:
    """(the document with `issues` taken out, the name put in its place or None), or None when some
    issue is of another kind (the later checks would only repeat or guess) or there is nothing to take out."""
    if not isinstance(document, dict) or not issues:
        return None
    if not all(_unknown_field(issue) or _bad_name(issue) for issue in issues):
        return None
    fixed = tree.copy(document)
    for issue in issues:
        if _unknown_field(issue):
            _remove(fixed, issue.path)
    stand_in = None
    if any(_bad_name(issue) for issue in issues):
        meta = fixed.get("metadata")
        name = meta.get("name") if isinstance(meta, dict) else None
        if not isinstance(meta, dict) or not isinstance(name, str):
            return None
        stand_in = meta["name"] = valid_name(name)
    return fixed, stand_in


def valid_name(name: str) -> str:
    """The nearest name mpigen takes: lower case, '-' for every other character, short enough."""
    name = re.sub(r"[^a-z0-9-]", "-", name.lower())[: names.MAX_JOB_NAME].strip("-")
    return name or "job"


def _remove(document: dict[str, Any], path: tuple[str | int, ...]) -> None:
    node: Any = document
    for key in path[:-1]:
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            return
    if isinstance(node, dict):
        node.pop(path[-1], None)


def renamed(issue: Issue, stand_in: str | None, name: str) -> Issue:
    """An issue found on the repaired job, naming the job's own name where it names the stand-in."""
    if stand_in is None or stand_in == name:
        return issue
    return Issue(issue.path, issue.message.replace(stand_in, name), issue.severity)
