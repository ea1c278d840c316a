"""The stand-ins and the reference switch that sends every call to the library each stands in for.

A few hand-written stand-ins spare a run the import of a slow library. Each lives in its own `_fast_*`
module beside the code it serves (imported only from its own folder: tests/test_layout.py), marks its
entry `@stand_in`, returns None for what it cannot tell for certain, and is called as
`fast(x) or library(x)`. `STAND_INS` lists them all: the module, the library it stands in for, what it
saves (CPU of a one-job render, `python benchmarks/bench_startup.py --only 4`), and the test that holds
it to the library. A stand-in stays only while it saves at least a tenth of a one-job render's CPU.

`MPIGEN_REFERENCE=1` in the environment makes every stand-in decline every call, so the whole program
runs on the libraries alone: the test suite runs the golden corpus and the shells' tests that way too
(tests/acceptance/test_reference.py), which proves that both paths give the same bytes.
`MPIGEN_REFERENCE=<module>[,<module>...]` (names of `STAND_INS`) declines those alone, which is how the
benchmark measures each one's saving.

This module is the one place outside the shells that reads the environment, once, when it is imported:
the switch belongs to the process and holds for its life, as the interpreter's own `-O` does, so every
function stays pure for a given process.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

VARIABLE = "MPIGEN_REFERENCE"


class StandIn(NamedTuple):
    """One stand-in: its module, the library call it replaces, its measured saving, its agreement test."""

    module: str
    library: str
    saving: str
    agreement: str


# Savings: CPU of a one-job render (v2beta1 example, validation on) with this stand-in declined, less
# with all of them on, over the latter: medians of 15 alternating runs of `python benchmarks/bench_startup.py
# --only 4 --rounds 15` on the shared 2-CPU VM at load 14.7 (all on: 0.051 s CPU; all off: 0.248 s).
STAND_INS: tuple[StandIn, ...] = (
    StandIn(
        "mpigen.yaml._fast_read",
        "PyYAML's libyaml parser (yaml.CSafeLoader events)",
        "0.24 of a render's CPU",
        "tests/unit/yaml/test_yaml_fast.py::test_the_reader_agrees_with_libyaml_on_mutated_streams",
    ),
    StandIn(
        "mpigen.yaml._fast_emit",
        "PyYAML's emitter (yaml.dump with mpigen's dumper)",
        "0.17 of a render's CPU",
        "tests/unit/yaml/test_yaml_fast.py::test_the_writer_agrees_with_pyyaml_on_generated_objects",
    ),
    StandIn(
        "mpigen.inputs._fast_model",
        "pydantic (the input models' strict validation)",
        "1.72 of a render's CPU",
        "tests/unit/inputs/test_input_models.py::test_the_fast_check_agrees_with_pydantic",
    ),
    StandIn(
        "mpigen.checks.kube._fast_schema",
        "jsonschema (Kubernetes' strict schemas)",
        "1.50 of a render's CPU",
        "tests/unit/checks/test_validate.py::test_quick_check_agrees_with_jsonschema",
    ),
    StandIn(
        "mpigen.targets.shared._fast_templates",
        "jinja2 (templates/*.j2)",
        "0.68 of a render's CPU",
        "tests/unit/shells/test_startup.py::test_every_compiled_template_renders_as_jinja2_does",
    ),
    StandIn(
        "mpigen.shells._fast_args",
        "click (the command line of render and validate)",
        "0.33 of a render's CPU",
        "tests/unit/shells/test_startup.py::test_a_call_run_without_click_says_what_click_would",
    ),
)

_SWITCH = os.environ.get(VARIABLE, "")
REFERENCE: bool = _SWITCH == "1"
_DECLINED = frozenset(_SWITCH.split(",")) if not REFERENCE else frozenset()


def _declined(*args: Any, **kwargs: Any) -> None:
    return None


def stand_in(function: F) -> F:
    """Mark `function` as a stand-in for a library call: it returns None for what it declines, and
    under MPIGEN_REFERENCE=1 (or its module named there) it declines everything."""
    if REFERENCE or function.__module__ in _DECLINED:
        return _declined  # type: ignore[return-value]
    return function
