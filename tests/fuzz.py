"""A fuzzer for mpigen: malformed inputs, generated from fixed seeds, through every entry point in process.

Each case is a mutation of a golden input or a shipped example (types swapped, YAML tags, huge
numbers, control characters, deep nesting, truncation, byte flips, anchors and merge keys, several
documents, JSON, KRM ResourceList shapes: items not a list, items that are not mappings, odd
functionConfigs, huge lists), run through one entry point: `render` (YAML or JSON), `validate` (text
or JSON), the KRM function (`mpigen krm`) or the kustomize plugin (`mpigen kustomize-plugin run`).
Case `n` of seed `s` is always the same bytes, so a failure is reproduced by its number.

A case fails when mpigen
- exits 3 or with anything but 0 and 1, or lets an exception out (an internal error);
- refuses without a message, or prints a line that is not one of its own (every line of stderr must
  start with the input's name, `mpigen:`, `items[N]`, `functionConfig` or `warning:`: a value with a
  newline printed raw would forge a line);
- writes more than 64 KiB plus 16 times the input's size to stderr (a message that repeats the input);
- takes more than `--timeout` seconds (a hang), or dies (a crash: each worker is a process of its own).

    python tests/fuzz.py --cases 12000 --jobs 2      # the full run (CONTRIBUTING.md)
    python tests/fuzz.py --case 417 --show           # one case: its input and what mpigen said

tests/acceptance/test_fuzz.py runs a quick slice of the same cases in process.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ENTRIES = ("render", "render-json", "validate", "validate-json", "krm", "plugin")
SOURCE = "input.yaml"
TAGS = (
    "!!map",
    "!!seq",
    "!!str",
    "!!int",
    "!!float",
    "!!bool",
    "!!null",
    "!!timestamp",
    "!!binary",
    "!!set",
    "!!omap",
    "!!pairs",
    "!!merge",
    "!!value",
    "!!python/object:os.system",
    "!!python/name:os.system",
    "!custom",
    "!",
    "!<tag:example.com,2000:x>",
)
HOSTILE_STRINGS = (
    "pi\nINJECTED: line",
    "pi\r\nforged",
    "\x1b[31mred",
    "a\x00b",
    "\u2028x",
    "",
    " ",
    "-",
    "~",
    "null",
    "yes",
    "0123",
    "1e3",
    "é",
    "\ufeffbom",
    "a" * 300,
    "x" * 70_000,
    "int",
    "str",
    "bool",
    "none",
    "[0]",
    "a[b]",
    "{}",
    "<<",
    "=",
    "*a",
    "&a",
    "%",
    "@",
    "`",
    "'",
    '"',
    "\\",
    "#",
    "0x1F",
    ".nan",
    "2001-12-14",
)


_SCALE = {"large": True}


def _large(size: int) -> int:
    """A size for the full run; the quick slice (`make_case(..., small=True)`) takes a hundredth."""
    return size if _SCALE["large"] else max(2, size // 100)


def hostile_value(rng: random.Random) -> Any:
    choice = rng.randrange(16)
    if choice == 0:
        return 10 ** rng.choice((19, 20, 40, 4000))  # 4,300 digits and more: huge_number, as text
    if choice == 1:
        return rng.choice((-(2**63) - 1, 2**63, 2**31, -1, 0, 2**63 - 1))
    if choice == 2:
        return rng.choice((0.5, -1.5, 1e300, float("nan"), float("inf")))
    if choice == 3:
        return rng.choice((True, False, None))
    if choice == 4:
        return []
    if choice == 5:
        return {}
    if choice == 6:
        return [rng.choice(HOSTILE_STRINGS) for _ in range(rng.randrange(1, 4))]
    if choice == 7:
        return {rng.choice(HOSTILE_STRINGS): rng.choice(HOSTILE_STRINGS)}
    if choice == 8:
        value: Any = "x"
        for _ in range(rng.randrange(10, 70)):
            value = [value] if rng.random() < 0.5 else {"a": value}
        return value
    if choice == 9:
        return list(range(rng.choice((1000, _large(20_000)))))
    return rng.choice(HOSTILE_STRINGS)


# Mutators: (rng, text) -> text ------------------------------------------------------------------------


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _paths(value, (*prefix, index))


def _set(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    parent = data
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = value
    return data


def _dump(rng: random.Random, data: Any) -> str:
    import yaml

    if rng.random() < 0.25:
        return json.dumps(data, indent=rng.choice((None, 2)))  # nan and inf become NaN, Infinity
    return str(
        yaml.dump(
            data, Dumper=yaml.CSafeDumper, sort_keys=False, allow_unicode=rng.random() < 0.5, width=1 << 20
        )
    )


def _load(text: str) -> Any:
    documents = _load_all(text)
    return documents[0] if len(documents) == 1 else None


def swap_type(rng: random.Random, text: str) -> str:
    data = _load(text)
    if data is None:
        return text
    for _ in range(rng.randrange(1, 4)):
        paths = list(_paths(data))
        data = _set(data, rng.choice(paths), hostile_value(rng))
    return _dump(rng, data)


def rename_key(rng: random.Random, text: str) -> str:
    data = _load(text)
    mappings = [p for p in _paths(data) if isinstance(_get(data, p), dict) and _get(data, p)]
    if not mappings:
        return text
    target = _get(data, rng.choice(mappings))
    old = rng.choice(list(target))
    target[rng.choice(HOSTILE_STRINGS[:40]) if rng.random() < 0.7 else old.upper()] = target.pop(old)
    return _dump(rng, data)


def _get(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        data = data[part]
    return data


def _value_spots(text: str) -> list[int]:
    return [m.end() for m in re.finditer(r"(?m)(?::|^\s*-) ", text)] or [0]


def insert_tag(rng: random.Random, text: str) -> str:
    at = rng.choice(_value_spots(text))
    return text[:at] + rng.choice(TAGS) + " " + text[at:]


def huge_number(rng: random.Random, text: str) -> str:
    numbers = list(re.finditer(r"\b\d+\b", text))
    if not numbers:
        return text
    m = rng.choice(numbers)
    new = rng.choice(
        (
            "9" * 5000,
            "9" * 20,
            "-9223372036854775809",
            ".nan",
            ".inf",
            "-.inf",
            "1.0e999",
            "0x_",
            "0b2",
            "0o7",
            "1_000",
            "1:60:00",
            "0777",
            "+12",
            "1e3",
        )
    )
    return text[: m.start()] + new + text[m.end() :]


def control_chars(rng: random.Random, text: str) -> str:
    for _ in range(rng.randrange(1, 4)):
        at = rng.randrange(len(text) + 1)
        text = (
            text[:at]
            + rng.choice(
                (
                    "\x00",
                    "\x07",
                    "\x1b",
                    "\x7f",
                    "\x85",
                    "\u2028",
                    "\ufeff",
                    "\t",
                    "\r",
                    "\n",
                    "\\n",
                    '"',
                    "'",
                )
            )
            + text[at:]
        )
    return text


def deep_nesting(rng: random.Random, text: str) -> str:
    depth = rng.choice((63, 64, 65, 100, 1000, 30_000, _large(200_000)))
    opener = rng.choice(("[", "{a: ", "- ", "[{a: ", "? "))
    at = rng.choice(_value_spots(text))
    nested = (
        opener * depth
        if opener != "- "
        else "\n" + "".join(" " * (2 * i) + "- \n" for i in range(min(depth, 2000)))
    )
    return text[:at] + nested + "x" + text[at:]


def truncate(rng: random.Random, text: str) -> str:
    return text[: rng.randrange(len(text) + 1)]


def flip_bytes(rng: random.Random, text: str) -> str:
    data = bytearray(text.encode("utf-8", "surrogateescape"))
    for _ in range(rng.randrange(1, 6)):
        if data:
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    return data.decode("utf-8", "surrogateescape")


def lines(rng: random.Random, text: str) -> str:
    rows = text.split("\n")
    for _ in range(rng.randrange(1, 4)):
        i = rng.randrange(len(rows))
        action = rng.randrange(4)
        if action == 0:
            rows.insert(i, rows[rng.randrange(len(rows))])  # a duplicated line: often a duplicate key
        elif action == 1 and len(rows) > 1:
            del rows[i]
        elif action == 2:
            rows[i] = " " * rng.randrange(1, 5) + rows[i]
        else:
            rows[i] = rows[i].lstrip()
    return "\n".join(rows)


def anchors(rng: random.Random, text: str) -> str:
    spots = _value_spots(text)
    a, b = rng.choice(spots), rng.choice(spots)
    first, second = min(a, b), max(a, b)
    extra = rng.choice(("*a", "*nope", "&a *a", "{<<: *a}", "<<: *a\n", "&a [*a]"))
    text = text[:second] + extra + " " + text[second:]
    return text[:first] + "&a " + text[first:]


def merge_keys(rng: random.Random, text: str) -> str:
    data = _load(text)
    if not isinstance(data, dict):
        return text
    body = _dump(random.Random(0), {k: v for k, v in data.items() if k != "metadata"}).replace("\n", "\n  ")
    return f"defaults: &defaults\n  {body}\n" + "\n".join(
        ["<<: *defaults" if rng.random() < 0.8 else "<<: [*defaults, {kind: X}]"]
        + [line for line in text.split("\n") if line.startswith(("metadata", "  ", "kind"))]
    )


# Plain scalars that go-yaml v2 (kubectl) and PyYAML's YAML 1.1 read differently, and their neighbours.
GOYAML_WORDS = (
    "12:30",
    "1:30:00",
    "190:20:30",
    "-1:30",
    "1:5:3.",
    "0o17",
    "0O17",
    "+0o17",
    "-0o17",
    "0o",
    "08",
    "09",
    "0789",
    "y",
    "n",
    "Y",
    "N",
    "yes",
    "No",
    "oN",
    "+.5",
    "-.5",
    ".5",
    "+.5e3",
    "0X1F",
    "0x1F",
    "-0x1F",
    "+0x1F",
    "0x_1F",
    "0B101",
    "0b101",
    "-0b101",
    "0b",
    "0b_",
    "1.e3",
    "1e3",
    "1E3",
    "1e+3",
    "1.0e+3",
    "1_e3",
    "1_000",
    "1__0",
    "1_000.5_0",
    "._5",
    ".5_0",
    "1e400",
    "1.0e+999",
    "1e-400",
    "-0",
    "-0.0",
    "00",
    "0.",
    ".",
    "+",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999",
    "0x8000000000000000",
    "-0x8000000000000000",
    "+0x8000000000000000",
    "09007199254740993",
    "2001-12-14",
    "2001-12-14 21:59:43.10 -5",
    "2001-12-14t21:59:43.10-05:00",
    ".nan",
    ".NaN",
    "-.nan",
    ".inf",
    "+.inf",
    "-.Inf",
    ".iNf",
    "~",
    "null",
    "nULL",
    "<<",
    "=",
    "1e21",
    "1e20",
)
_WORD_ALPHABET = "0189+-._:eExXoObBy~"


def scalar_words(rng: random.Random, count: int) -> list[str]:
    """GOYAML_WORDS, every word of one to three characters over a numeric alphabet, and `count` random
    longer ones: the plain scalars a YAML reader may resolve to something other than a string."""
    import itertools

    words = list(GOYAML_WORDS)
    for length in (1, 2, 3):
        words += ["".join(chars) for chars in itertools.product(_WORD_ALPHABET, repeat=length)]
    alphabet = _WORD_ALPHABET + "234567aAfFiInNtTlLsuUY<="
    words += ["".join(rng.choice(alphabet) for _ in range(rng.randint(4, 9))) for _ in range(count)]
    return words


def goyaml_words(rng: random.Random, text: str) -> str:
    """A value replaced by a word go-yaml v2 and PyYAML read differently."""
    at = rng.choice(_value_spots(text))
    end = text.find("\n", at)
    end = len(text) if end < 0 else end
    return text[:at] + rng.choice(GOYAML_WORDS) + text[end:]


LINE_BREAKS = ("\r", "\r\n", "\x85", "\u2028", "\u2029")


def line_breaks(rng: random.Random, text: str) -> str:
    """The text's line breaks written as CR, CRLF, NEL, U+2028 or U+2029, all or some, sometimes before
    deep nesting."""
    breaks = rng.choice(LINE_BREAKS)
    if rng.random() < 0.5:
        text = text.replace("\n", breaks)
    else:
        parts = text.split("\n")
        text = "".join(part + (breaks if rng.random() < 0.5 else "\n") for part in parts[:-1]) + parts[-1]
    if rng.random() < 0.3:
        text += breaks + "a: " + "[" * rng.choice((65, 1001, 5000))
    return text


def goyaml_stream(rng: random.Random) -> str:
    """A small stream of words in keys, values, block and flow collections, anchors and merge keys, for
    the comparison with go-yaml (tests/unit/yaml/test_goyaml.py)."""

    def word() -> str:
        return rng.choice(GOYAML_WORDS)

    shape = rng.randrange(8)
    if shape == 0:
        return "".join(f"k{i}: {word()}\n" for i in range(rng.randint(1, 4)))
    if shape == 1:
        return "v:\n" + "".join(f"- {word()}\n" for _ in range(rng.randint(1, 4)))
    if shape == 2:
        return "v: [" + ", ".join(word() for _ in range(rng.randint(1, 4))) + "]\n"
    if shape == 3:
        return "v: {" + ", ".join(f"k{i}: {word()}" for i in range(rng.randint(1, 4))) + "}\n"
    if shape == 4:
        return f"{word()}: x\n"
    if shape == 5:  # `<<` as a value and as a key, in either order
        parts = ["a: <<\n", 'b:\n  <<: {a: "1"}\n', "c: [<<]\n", "d: {<<: {x: 1}, y: 2}\n"]
        rng.shuffle(parts)
        return "".join(parts)
    if shape == 6:
        own = rng.choice(("", "a: 0\n  ", "b: 0\n  "))
        return f"base: &base {{a: {word()}, b: 1}}\nc:\n  {own}<<: *base\n  b: {word()}\n"
    return "---\n".join(f"v: {word()}\n" for _ in range(rng.randint(1, 3)))


def documents(rng: random.Random, text: str) -> str:
    separator = rng.choice(("---\n", "\n---\n", "...\n---\n", "--- |\n", "%YAML 1.1\n---\n", "\n"))
    count = rng.choice((2, 3, 20)) if rng.random() < 0.9 else rng.choice((_large(2000), _large(200_000)))
    if count > 100:
        return (separator + rng.choice(("{}\n", "a: 1\n", "", "[]\n"))) * count
    return separator.join([text] * count)


MUTATORS: tuple[Callable[[random.Random, str], str], ...] = (
    swap_type,
    swap_type,
    swap_type,
    rename_key,
    insert_tag,
    insert_tag,
    huge_number,
    control_chars,
    deep_nesting,
    truncate,
    flip_bytes,
    lines,
    anchors,
    merge_keys,
    documents,
    goyaml_words,
    line_breaks,
)
# `config.kubernetes.io/index` values a KRM orchestrator never writes but a ResourceList may hold.
KRM_INDEXES = (
    "²",
    "٣",
    "0",
    "-1",
    "+1",
    " 1",
    "1 ",
    "01",
    "1_0",
    "9" * 4301,
    "9" * 20,
    "",
    "x",
    "1.0",
    "0x1",
)


# ResourceLists ----------------------------------------------------------------------------------------


def resource_list(rng: random.Random, text: str) -> str:
    """A ResourceList around the mutated documents, or a malformed one."""
    docs = [doc for doc in _load_all(text) if doc is not None]
    shape = rng.randrange(10)
    body: dict[str, Any] = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList"}
    if shape == 0:
        body["items"] = rng.choice(
            ({"a": 1}, "items", 5, None, [None], [[1]], ["x"], [1, {"kind": "MPIJob"}])
        )
    elif shape == 1:
        body["items"] = docs
        body["functionConfig"] = rng.choice(
            (
                [],
                "x",
                5,
                {"kind": "MPIJob"},
                *docs[:1],
                {"data": {"a": [1]}},
                # kpt's `-- key=value` ConfigMap: an unknown key, a value that is no string (mpigen.krm.config)
                {"apiVersion": "v1", "kind": "ConfigMap", "data": {"tagret": "x", "wait-timeout": [1]}},
                {"apiVersion": "mpigen.dev/v1", "kind": "Compile", "spec": "x"},
            )
        )
    elif shape == 2:
        body["items"] = [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}}
            for i in range(rng.choice((1000, _large(30_000))))
        ] + docs
    elif shape == 3:
        body["items"] = docs
        body["results"] = rng.choice(("x", [1], [{"message": 5}], {}))
    elif shape == 4:
        body.pop(rng.choice(("apiVersion", "kind")))
        body["items"] = docs
    elif shape == 5 and rng.random() < 0.3:  # comments between every line, many of them
        every = "\n".join(["# a comment"] * rng.choice((1, 20, _large(2000))))
        return "\n".join(
            [
                "apiVersion: config.kubernetes.io/v1",
                "kind: ResourceList",
                "items:",
                *("- " + line if i == 0 else "  " + line for i, line in enumerate(text.split("\n"))),
            ]
        ).replace("\n", "\n" + every + "\n")
    elif shape == 5:
        return "\n".join(
            [
                "apiVersion: config.kubernetes.io/v1",
                "kind: ResourceList",
                "items:",
                *("- " + line if i == 0 else "  " + line for i, line in enumerate(text.split("\n"))),
            ]
        )
    else:
        for doc in docs:
            if isinstance(doc, dict) and rng.random() < 0.5:
                meta = doc.setdefault("metadata", {}) if isinstance(doc.get("metadata", {}), dict) else {}
                annotations = (
                    meta.setdefault("annotations", {})
                    if isinstance(meta.get("annotations", {}), dict)
                    else {}
                )
                key = rng.choice(
                    (
                        "internal.config.kubernetes.io/path",
                        "internal.config.kubernetes.io/index",
                        "config.kubernetes.io/index",
                        "config.kubernetes.io/local-config",
                        "mpigen.dev/gang-scheduler",
                    )
                )
                annotations[key] = (
                    rng.choice(KRM_INDEXES)
                    if key.endswith("index") and rng.random() < 0.7
                    else hostile_value(rng)
                )
        body["items"] = docs
    return _dump(rng, body)


def _load_all(text: str) -> list[Any]:
    """The documents of a text, read by mpigen's bounded reader (PyYAML's composer crashes on deep
    nesting), or none."""
    from mpigen.yaml.reader import YamlProblem, read_stream

    try:
        return read_stream(text)
    except YamlProblem:
        return []


# Cases ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    number: int
    entry: str
    data: bytes


def seeds() -> list[str]:
    paths = sorted((ROOT / "golden").glob("*/input.yaml")) + sorted((ROOT / "examples").glob("v*/*.yaml"))
    return [p.read_text(errors="surrogateescape") for p in paths]


_SEEDS: list[str] = []


def make_case(number: int, seed: int = 0, small: bool = False) -> Case:
    """Case `number` of `seed`, always the same bytes; `small` scales the large inputs down (the quick
    slice: huge lists and streams take most of a run's time and find little the small ones do not)."""
    if not _SEEDS:
        _SEEDS.extend(seeds())
    rng = random.Random(f"{seed}:{number}")
    _SCALE["large"] = not small
    try:
        text = rng.choice(_SEEDS)
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            text = rng.choice(MUTATORS)(rng, text)
        entry = ENTRIES[number % len(ENTRIES)]
        if entry == "krm":
            text = resource_list(rng, text) if rng.random() < 0.8 else text
    finally:
        _SCALE["large"] = True
    return Case(number, entry, text.encode("utf-8", "surrogateescape"))


# Running --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    code: int
    stdout: str
    stderr: str
    seconds: float


def run_case(case: Case, workdir: Path) -> Result:
    from click.testing import CliRunner

    from mpigen.cli import cli

    start = time.perf_counter()
    path = workdir / SOURCE
    path.write_bytes(case.data)
    args = {
        "render": ["render", SOURCE],
        "render-json": ["render", "-o", "json", SOURCE],
        "validate": ["validate", SOURCE],
        "validate-json": ["validate", "-o", "json", SOURCE],
        "krm": ["krm"],
        "plugin": ["kustomize-plugin", "run", SOURCE],
    }[case.entry]
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        result = CliRunner().invoke(
            cli,
            args,
            input=case.data if case.entry == "krm" else None,
            catch_exceptions=True,
            env={"KUSTOMIZE_PLUGIN_CONFIG_ROOT": str(workdir)},
        )
    finally:
        os.chdir(cwd)
    seconds = time.perf_counter() - start
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += f"\nuncaught {type(result.exception).__name__}: {result.exception}"
        return Result(99, result.stdout, stderr, seconds)
    return Result(result.exit_code, result.stdout, stderr, seconds)


_OWN = ("mpigen", "items[", "functionConfig", "warning:", "<stdin>", SOURCE)


def problems(case: Case, result: Result, timeout: float) -> list[str]:
    """What is wrong with mpigen's answer to a case: normalised so that one cause gives one signature."""
    if result.code == _HANG:
        return [f"hang (stopped after {result.seconds:.0f} s)"]
    found = []
    if result.code not in (0, 1) or "internal error" in result.stderr:
        line = next(
            (x for x in result.stderr.splitlines() if "internal error" in x or "uncaught" in x),
            result.stderr[-200:],
        )
        found.append(f"internal error: {_normalised(line)}")
    said = result.stderr + (result.stdout if case.entry == "validate" else "")
    if case.entry == "validate-json" and result.stdout.startswith("{"):
        report = json.loads(result.stdout)
        messages = [
            e.get("msg", "") for r in report.get("resources", []) for e in r.get("validationErrors") or []
        ]
        messages += [r.get("msg", "") for r in report.get("resources", [])]
        said += "".join(f"{SOURCE}: {m}\n" for m in messages if m)
    if result.code == 1 and not said.strip():
        found.append("refused without a message")
    lines = said.splitlines()
    own = (*_OWN, tempfile.gettempdir())
    if case.entry == "krm":  # an item's path annotation names it, and the fuzzer writes odd ones
        own += tuple(text for text in HOSTILE_STRINGS if text.isprintable() and text)
        own += (
            "NaN",
            "Infinity",
            "-Infinity",
        )  # a hostile float, as the JSON dump writes it (a string to YAML)
    stray = [x for x in lines if not x.startswith(own)]
    if stray:
        found.append(f"a line not its own ({case.entry}): {_normalised(stray[0])[:80]}")
    if len(result.stderr) > 65536 + 16 * len(case.data):  # a line per document of `[]` is 13 times it
        found.append(f"stderr of {len(result.stderr):,} characters for {len(case.data):,} of input")
    if result.seconds > timeout:
        found.append(f"slower than {timeout} s")
    return found


def _normalised(line: str) -> str:
    line = re.sub(r'"[^"]*"|\'[^\']*\'', '"…"', line)
    return re.sub(r"\d+", "N", line)[:160]


_HANG = 98  # the code of a case stopped by the alarm


class _Timeout(BaseException):
    """A case past its time: a BaseException, so that mpigen's guard for bugs does not take it for one."""


def run_range(
    numbers: list[int], seed: int, timeout: float, report: Callable[[dict[str, Any]], None]
) -> None:
    """Run cases in this process; one JSON line per case through `report`."""

    def alarm(signum: int, frame: Any) -> None:
        raise _Timeout

    signal.signal(signal.SIGALRM, alarm)
    with tempfile.TemporaryDirectory() as tmp:
        for number in numbers:
            report({"start": number})
            case = make_case(number, seed)
            signal.alarm(int(timeout * 3) + 1)
            try:
                result = run_case(case, Path(tmp))
            except _Timeout:
                result = Result(_HANG, "", "", timeout * 3 + 1)
            finally:
                signal.alarm(0)
            report(
                {
                    "case": number,
                    "entry": case.entry,
                    "code": result.code,
                    "seconds": round(result.seconds, 3),
                    "problems": problems(case, result, timeout),
                }
            )


def _worker(args: argparse.Namespace) -> None:
    def report(line: dict[str, Any]) -> None:
        print(json.dumps(line), flush=True)

    run_range(list(range(args.start, args.stop)), args.seed, args.timeout, report)


def _run_chunk(start: int, stop: int, args: argparse.Namespace) -> list[dict[str, Any]]:
    """Cases start..stop-1 in worker processes; a worker that dies is named as the crash of the case it
    was running, and a new one goes on after it."""
    records: list[dict[str, Any]] = []
    while start < stop:
        command = [
            sys.executable,
            __file__,
            "--worker",
            "--start",
            str(start),
            "--stop",
            str(stop),
            "--seed",
            str(args.seed),
            "--timeout",
            str(args.timeout),
        ]
        proc = subprocess.run(command, stdout=subprocess.PIPE, text=True, cwd=ROOT, check=False)
        last = start
        for line in proc.stdout.splitlines():
            record = json.loads(line)
            if "start" in record:
                last = record["start"]
            else:
                records.append(record)
        if proc.returncode == 0:
            break
        records.append(
            {
                "case": last,
                "entry": "?",
                "code": proc.returncode,
                "seconds": 0.0,
                "problems": [f"crash (worker exit {proc.returncode})"],
            }
        )
        start = last + 1
    return records


def _run_all(args: argparse.Namespace) -> int:
    """Chunks of cases over `--jobs` worker processes (a crash ends only its worker)."""
    from concurrent.futures import ThreadPoolExecutor

    started = time.perf_counter()
    chunks = [(start, min(start + args.chunk, args.cases)) for start in range(0, args.cases, args.chunk)]
    with ThreadPoolExecutor(args.jobs) as pool:
        records = [r for chunk in pool.map(lambda c: _run_chunk(c[0], c[1], args), chunks) for r in chunk]
    elapsed = time.perf_counter() - started
    findings: dict[str, list[int]] = {}
    entries: dict[str, set[str]] = {}
    for record in records:
        for problem in record["problems"]:
            findings.setdefault(problem, []).append(record["case"])
            entries.setdefault(problem, set()).add(record["entry"])
    refused = sum(1 for record in records if record["code"] == 1)
    slowest = max(records, key=lambda record: record["seconds"])
    print(
        f"{len(records)} cases (seed {args.seed}) in {elapsed:.0f} s: {len(records) - refused} accepted, {refused} refused; slowest case {slowest['case']} ({slowest['seconds']:.1f} s)"
    )
    for problem, numbers in sorted(findings.items(), key=lambda item: -len(item[1])):
        print(
            f"{len(numbers):6} x {problem}   in {', '.join(sorted(entries[problem]))}; cases {' '.join(map(str, numbers[:8]))}"
        )
    print(f"{len(findings)} distinct findings")
    return 1 if findings else 0


def _show(args: argparse.Namespace) -> None:
    case = make_case(args.case, args.seed, args.small)
    if args.write:
        Path(args.write).write_bytes(case.data)
    if args.show:
        shown = case.data[:2000].decode("utf-8", "replace")
        print(f"--- case {case.number}: {case.entry}, {len(case.data):,} bytes\n{shown}\n---")
    with tempfile.TemporaryDirectory() as tmp:
        result = run_case(case, Path(tmp))
    print(f"exit {result.code} in {result.seconds:.2f} s\n{result.stderr[:4000]}")
    print("problems:", problems(case, result, args.timeout))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=12_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--chunk", type=int, default=500)
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds a case may take")
    parser.add_argument("--case", type=int, help="run this case alone and say what happened")
    parser.add_argument("--show", action="store_true", help="with --case: print the input too")
    parser.add_argument("--write", help="with --case: write the input to this file")
    parser.add_argument(
        "--small",
        action="store_true",
        help="with --case: a case of the quick slice (tests/acceptance/test_fuzz.py)",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--stop", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    if args.worker:
        _worker(args)
        return 0
    if args.case is not None:
        _show(args)
        return 0
    return _run_all(args)


if __name__ == "__main__":
    sys.exit(main())
