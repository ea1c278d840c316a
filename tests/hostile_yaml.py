"""Hostile YAML of any size: shapes that once took minutes, crashed the interpreter or ate memory, each
made `n` characters long. tests/unit/yaml/test_yaml_reading.py checks each is answered within seconds at 16 MiB;
benchmarks/bench_reading.py times them."""

from __future__ import annotations

from collections.abc import Callable

SHAPES: dict[str, Callable[[int], str]] = {
    "flat flow list": lambda n: "[" + "1," * (n // 2 - 2) + "1]",
    "block list": lambda n: "- a\n" * (n // 4),
    "deep flow": lambda n: "[" * n,
    "deep block": lambda n: "- " * (n // 2),
    "empty documents": lambda n: "---\n" * (n // 4),
    "one long string": lambda n: "a: " + "x" * (n - 4),
    "many keys": lambda n: "".join(f"k{i}: 1\n" for i in range(n // 12)),
}
