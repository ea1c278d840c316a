"""The reference switch: `MPIGEN_REFERENCE=1` makes every fast path take the library call it stands in for.

A few hand-written stand-ins spare a run the import of a slow library (README, Speed, says which and
what each saves): `mpigen.yaml._fast_read` (libyaml's parser), `mpigen.yaml._fast_emit` (PyYAML's
dumper), `mpigen.inputs.model.parse_fast` (pydantic), `mpigen.checks.kube._fast_schema` (jsonschema), the
templates compiled into Python (`mpigen.targets.shared.templating`: jinja2) and
`mpigen.shells.common.plain_call` (click). Each is marked `@stand_in`, returns None for what it cannot
tell for certain, and is called as `fast(x) or library(x)`. One more stands in for the standard
library: `mpigen.records.Record` (`dataclasses`), whose subclasses the switch makes frozen dataclasses. With `MPIGEN_REFERENCE=1` in the environment
every stand-in declines every call, so the whole program runs on the libraries alone: the test suite
runs the golden corpus and the shells' tests that way too (tests/acceptance/test_reference.py), which
proves that both paths give the same bytes.

This module is the one place outside the shells that reads the environment, once, when it is imported:
the switch belongs to the process and holds for its life, as the interpreter's own `-O` does, so every
function stays pure for a given process.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

VARIABLE = "MPIGEN_REFERENCE"
REFERENCE: bool = os.environ.get(VARIABLE) == "1"


def _declined(*args: Any, **kwargs: Any) -> None:
    return None


def stand_in(function: F) -> F:
    """Mark `function` as a stand-in for a library call: it returns None for what it declines, and
    under MPIGEN_REFERENCE=1 it declines everything."""
    return _declined if REFERENCE else function  # type: ignore[return-value]
