"""Shared pytest configuration: the golden-file update switch."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="Rewrite golden/*/expected.yaml and errors.txt from the current output (the run then fails).",
    )
