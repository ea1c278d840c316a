"""mpigen's own YAML reader and writer (mpigen/yaml/_fast_read.py, mpigen/yaml/_fast_emit.py) against libyaml's.

They exist for start-up (a one-job render need not import PyYAML) and may only ever decline: every stream
the reader takes must give libyaml's events, positions included, and every object the writer takes must
come out byte for byte as PyYAML's dumper writes it. Checked on the golden inputs and outputs, the
examples, hand-picked edge cases, mutations of all of those, and generated strings; and the resolver of
plain scalars, which both readers share, against PyYAML's.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from mpigen.yaml import _fast_emit as emitfast
from mpigen.yaml import _fast_read as yamlfast
from mpigen.yaml.dump import _dumper
from mpigen.yaml.reader import read_stream
from mpigen.yaml.scalars import yaml11_tag

ROOT = Path(__file__).resolve().parents[3]
INPUTS = sorted((ROOT / "golden").glob("*/input.yaml")) + sorted((ROOT / "examples").rglob("*.yaml"))
OUTPUTS = sorted((ROOT / "golden").glob("*/expected.yaml"))
_MARKED = ("ScalarEvent", "MappingStartEvent", "SequenceStartEvent", "DocumentStartEvent")


def _event(event: Any) -> tuple[Any, ...]:
    """What mpigen.yaml.reader reads of an event: its kind, value, implicit flags and start position."""
    name = type(event).__name__
    mark = (event.start_mark.line, event.start_mark.column) if name in _MARKED else None
    if name == "ScalarEvent":
        return (name, event.value, tuple(event.implicit), event.tag, event.anchor, mark)
    if name in ("MappingStartEvent", "SequenceStartEvent"):
        return (name, event.tag, event.anchor, mark)
    return (name, mark)


def libyaml_events(text: str) -> list[tuple[Any, ...]] | None:
    """libyaml's events (StreamStart left out), None where it refuses the stream."""
    try:
        return [_event(event) for event in yaml.parse(text, Loader=yaml.CSafeLoader)][1:]
    except yaml.YAMLError:
        return None


def agrees(text: str) -> bool:
    """The fast reader declines `text`, or gives libyaml's events; True when it took the stream."""
    events = yamlfast.parse(text)
    if events is None:
        return False
    assert [_event(event) for event in events] == libyaml_events(text), text
    return True


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "replace")


@pytest.mark.parametrize("path", INPUTS + OUTPUTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_the_reader_gives_libyamls_events_for_every_shipped_stream(path: Path) -> None:
    agrees(_read(path))


def test_the_reader_takes_every_example_and_nearly_every_golden_input() -> None:
    assert all(agrees(_read(path)) for path in sorted((ROOT / "examples").rglob("*.yaml")))
    assert all(agrees(_read(path)) for path in OUTPUTS)  # what mpigen writes, it reads back without PyYAML
    valid = [
        path
        for path in sorted((ROOT / "golden").glob("*/input.yaml"))
        if (path.parent / "expected.yaml").exists()
    ]
    declined = [path.parent.name for path in valid if not agrees(_read(path))]
    assert declined == ["v2beta1-yaml-merge-keys"]  # anchors and aliases are libyaml's


EDGES = [
    # literal block scalars: chomping, blank lines inside and after, the end of the stream
    "a: |\n  x",
    "a: |\n  x\n",
    "a: |-\n  x\n\n",
    "a: |+\n  x\n\n  \n",
    "a: |+\n  x\n  \n",
    "a: |\n  x\n    \n  y\n",
    "a: |\n\n  x\n",
    "a: |\n  x\n# c\nb: 1\n",
    "- |\n x\n- y\n",
    "a:\n  - |\n    x\n  - y",
    "a: |\n  x\n\n\n",
    "a: |+\n  x\n\n\n",
    "a: |-\n  x\n\n\nb: 1",
    "a: |+\n  x\n\nb: 1\n",
    "a: |  # c\n  x\n",
    "a: |\n  #x\n",
    "a:\n  b:\n    c: |\n      line\n        more\n\n      end\n    d: 1\n",
    "a: |\n  é\n",
    # keys, plain and quoted values, comments
    "a : b\n",
    "a:    b   \n",
    "a: b #c\n",
    "a: b#c\n",
    "a: 'x''y'\n",
    'a: "x\\"y"\n',
    "'a': 1\n",
    "'': 1\n",
    "a: ''\n",
    'a: ""\n',
    "key with spaces: v\n",
    "a: b c d\n",
    "a: 'b' # c\n",
    "a: 1 # x: y\n",
    "a: -1\n",
    "a: --x\n",
    "a: x,y\n",
    "a: é\nb: 'ü'\n",
    "ä: 1\n",
    "a: ~\n",
    "a: null\n",
    'a: "\\t\\n\\\\"\n',
    # flow collections on one line
    "a: [ ]\n",
    "a: [a,b]\n",
    "a: [ a , 'b' ]\n",
    "a: {a: 1}\n",
    "a: { a: 1 , b: 'x' }\n",
    "a: {}\n",
    "a: {'a': 1}\n",
    'a: ["a","b"]',
    "a: ['a','b']",
    "a: [a] # c\n",
    # nesting, empty values, sequences at their key's indentation
    "x:\n- a: 1\n  b: 2\n- c\n",
    "- a\n-\n- b",
    "-\n  a: 1\n",
    "a:\n",
    "a:",
    "a: 1",
    "  a: 1\n  b: 2\n",
    "a:\n- b\n- c\nd: e",
    "- -1\n",
    "a:\n  - b\n  -   c: 1\n      d: 2\n",
    "a:\n   # c\n  b: 1\n",
    "a: b\n   # c\nd: e\n",
    "- a\n  # c\n- b",
    "- a: 1\n  b:\n- c\n",
    "a:\n  -\n  - x\n",
    # documents
    "---\na: 1\n---\nb: 2\n",
    "--- # c\na: 1\n",
    "a: 1\n---\n",
    "---",
    "--- \n",
    "---\n# c\n",
    "# only\n",
    "",
    "\n\na: b",
    "---\n---\n",
    "# c\n---\na: 1\n---\n# x\n",
    "a: b\n\n\n",
]
DECLINED = [
    # what the reader leaves to libyaml: valid or not, libyaml decides what it means
    "a: |\n    x\n  b: 1\n",
    "a:\n  b: 1\n c: 2\n",
    "a: 1\n  b: 2\n",
    "- a: 1\n - b\n",
    "a: [x, y\n  ]",
    'a: "x\ny"',
    "a: 'x\n  y'",
    "a: -\n",
    "a: - b\n",
    "a: |2\n  x\n",
    "a: >\n  x\n",
    "- - a\n",
    "a: &x 1\n",
    "a: *x\n",
    "a: !!str 1\n",
    "a: @x",
    "a: %x",
    "a: `x",
    "a: ?x",
    "a: :x",
    "a: ,x",
    "a: [x:y]",
    "a: {x:y}",
    "a: {x: }",
    "a: {x}",
    "a #x: b\n",
    'a: "b" c\n',
    'a: "b"#c\n',
    "a: [b]c\n",
    "a: b\n...\n",
    "%YAML 1.1\n---\na: 1",
    "a: x\n  y\n",
    "- x\n  y\n",
    "a:\n  x\n",
    "a: x: y",
    "a:\tb\n",
    "a: b\r\n",
    "\ufeffa: b\n",
    "a: [a, b,]",
    "a: {a: 1, b: [x]}\n",
    'a: "\\x41"\n',
    "hello\n",
    "a: 1\nb\n",
    "? a\n: b\n",
    # a key whose `:` is more than 1,024 characters past its start is no simple key to libyaml
    "'" + "a" * 1023 + "': b\n",
    '"' + "a" * 1023 + '": b\n',
    "a" + " " * 1024 + ": b\n",
    "- a" + " " * 1024 + ": b\n",
    "a: {" + "a" * 1025 + ": b}\n",
    "a: {b" + " " * 1024 + ": c}\n",
    "a: {'" + "a" * 1023 + "': b}\n",
    "x: 1\n'" + "a" * 1023 + "': b\n",
]


@pytest.mark.parametrize("text", EDGES)
def test_the_reader_takes_these_and_gives_libyamls_events(text: str) -> None:
    assert agrees(text)


@pytest.mark.parametrize("text", DECLINED)
def test_the_reader_leaves_these_to_libyaml(text: str) -> None:
    assert yamlfast.parse(text) is None


def test_a_long_stream_is_left_to_libyaml() -> None:
    text = "items:\n" + "- name: x\n" * (yamlfast.MAX_CHARACTERS // 10 + 1)
    assert yamlfast.parse(text) is None
    assert read_stream(text) == [{"items": [{"name": "x"}] * (yamlfast.MAX_CHARACTERS // 10 + 1)}]


SNIPPETS = [
    "#",
    ":",
    ": ",
    "- ",
    "-",
    "|",
    "|-",
    "|+",
    '"',
    "'",
    "''",
    "[",
    "]",
    "{",
    "}",
    ",",
    " ",
    "  ",
    "---",
    "...",
    "a",
    "1",
    "x: y",
    "- a: b",
    "\\",
    "\\n",
    '"a"',
    "'b'",
    "[a, b]",
    "{a: 1}",
    "[]",
    "{}",
    "# c",
    "\n",
    "\n\n",
    "\n  ",
    "  \n",
    "é",
    "?",
    "null",
    "~",
    "0x1",
    "1.5",
    "yes",
    "<<",
    "=",
    "\t",
]


def _mutated(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    for _ in range(rng.randint(1, 4)):
        if not lines:
            lines = [""]
        i = rng.randrange(len(lines))
        op = rng.randrange(7)
        if op == 0:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[rng.randrange(len(lines))])
        elif op == 2:
            lines[i] = " " * rng.choice([1, 2, 3, 4]) + lines[i]
        elif op == 3:
            lines[i] = lines[i][rng.choice([1, 2]) :]
        elif op == 4:
            lines[i] = lines[i][: rng.randint(0, len(lines[i]))]
        else:
            j = rng.randint(0, len(lines[i]))
            lines[i] = lines[i][:j] + "".join(rng.choice(SNIPPETS) for _ in range(op - 4)) + lines[i][j:]
    return "\n".join(lines)


def _mutations(seed: int, count: int) -> tuple[int, int]:
    corpus = [_read(path) for path in INPUTS] + EDGES
    rng = random.Random(seed)
    taken = 0
    for _ in range(count):
        text = rng.choice(corpus)
        if rng.random() < 0.5:  # a few lines of it, so that a mutation is not drowned in a long job
            lines = text.split("\n")
            start = rng.randrange(len(lines))
            text = "\n".join(lines[start : start + rng.randint(1, 12)])
        taken += agrees(_mutated(text, rng))
    return taken, count


def test_the_reader_agrees_with_libyaml_on_mutated_streams() -> None:
    taken, count = _mutations(0, 3000)
    assert taken > count // 5  # most mutations break the stream; enough of them must still be read


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(1, 5))
def test_the_reader_agrees_with_libyaml_on_many_more_mutated_streams(seed: int) -> None:
    _mutations(seed, 25_000)


def test_the_writers_yaml_1_1_reading_is_pyyamls_but_timestamps() -> None:
    loader = yaml.SafeLoader("")

    def pyyaml(text: str) -> str:
        tag: str = loader.resolve(yaml.ScalarNode, text, (True, False))
        return "tag:yaml.org,2002:str" if tag.endswith(":timestamp") else tag

    words = [
        "",
        "~",
        "null",
        "Null",
        "NULL",
        "nULL",
        "yes",
        "Yes",
        "YES",
        "yES",
        "y",
        "n",
        "on",
        "oN",
        "Off",
        "<<",
        "=",
        "<",
        ".inf",
        "-.inf",
        "+.Inf",
        ".NaN",
        ".nan",
        "-.nan",
        "1e5",
        "1.e+5",
        "1.0e5",
        "0o7",
        "0b",
        "0b1_0",
        "0x",
        "0x_",
        "0xFF",
        "1:60",
        "1:59",
        "1:5:3.",
        "190:20:30",
        "0",
        "-0",
        "00",
        "08",
        "0.",
        ".",
        "._",
        "+",
        "-",
        "1_000",
        "2001-12-14",
        "1\n",
        "yes\n",
        "null\n",
        "\n",
        "\n\n",
        "~\n",
        "<<\n",
        "=\n",
    ]
    for word in words:
        assert yaml11_tag(word) == pyyaml(word), word
    alphabet = "0123456789+-._:eExXobBaAfFiInNtTlLsuUyYoO~<=\n "
    rng = random.Random(0)
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 7)))
        assert yaml11_tag(text) == pyyaml(text), text


# The writer ----------------------------------------------------------------------------------------


def pyyaml_dump(value: Any) -> str:
    text: str = yaml.dump(
        value, Dumper=_dumper(), default_flow_style=False, sort_keys=False, allow_unicode=True, width=1 << 16
    )
    return text


def writes_as_pyyaml(value: Any) -> bool:
    """The fast writer declines `value`, or writes what PyYAML writes; True when it wrote it."""
    text = emitfast.dump(value)
    if text is None:
        return False
    assert text == pyyaml_dump(value), value
    return True


def test_the_writer_writes_every_golden_object_as_pyyaml_does() -> None:
    objects = [
        doc
        for path in OUTPUTS
        for doc in yaml.load_all(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
        if doc
    ]
    assert len(objects) > 500
    assert all(writes_as_pyyaml(obj) for obj in objects)  # and declines none of them


@pytest.mark.parametrize(
    "value",
    [
        {"a": "x\ny\n"},
        {"a": "x\ny"},
        {"a": "p\n\nq\n"},
        {"a": ["x\n", {"b": "y\nz"}], "c": [["u", "v\nw\n"]]},
        {"a": [[], {}, [[]], [{}]]},
        {"k": "", "l": "2001-01-01", "m": "a: b", "n": "-x", "o": " x", "p": "x ", "q": "é"},
        {
            "r": "1",
            "s": "y",
            "t": True,
            "u": None,
            "v": 3,
            "w": -12,
            "x": "it's",
            "y": "#x",
            "z": "a #b",
            "-": "-",
        },
        [{"a": 1}, {"b": [1, 2]}],
        {"2001-12-14 21:59:43.10 -5": "2001-1-1 1:00:00Z"},
        {"0x1F": "0o17", "1e3": ".inf"},
        {"---": "...", "a:": ":a", "?": "? x", "[a]": "{b}", "*x": "&y", "!t": "%p", "@a": "`b", "|": ">"},
        {
            "cpu": 0.5,
            "b": -0.5,
            "c": 1e20,
            "d": 1e-05,
            "e": 3.0,
            "f": -0.0,
            "g": 2.5e-300,
            "h": [0.1 + 0.2, 1e300],
        },
    ],
)
def test_the_writer_takes_these_and_writes_them_as_pyyaml_does(value: Any) -> None:
    assert writes_as_pyyaml(value)


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"k": "x"}
    for _ in range(depth):
        value = {"k": value}
    return value


@pytest.mark.parametrize(
    "value",
    [
        {"a": float("inf")},
        {"a": float("nan")},
        {"a": "x\ty"},
        {"a": " x\n"},
        {"a": "x\n\n"},
        {"a": "x \ny\n"},
        {"a": "\ufeff"},
        {"a": "😀"},
        {"a": "\x85"},
        {"k" * 200: 1},
        {"a\nb": 1},
        {1: "a"},
        {"a": "x" * 70_000},
        {},
        [],
        {"a": b"x"},
        {"k": "'" * 32767 + " x"},
        ["'" * 32767 + " x"],
        {"k": "a: " + "'" * 33000 + " b"},
        _nested(150),
    ],
)
def test_the_writer_leaves_these_to_pyyaml(value: Any) -> None:
    assert emitfast.dump(value) is None


def test_long_keys_and_quoted_lines_near_libyamls_limits_agree() -> None:
    for length in (990, 1000, 1001, 1022, 1023):
        agrees("'" + "a" * length + "': b\n")
        agrees("a: {" + "a" * length + ": b}\n")
    for length in (29_000, 32_766, 32_767):
        writes_as_pyyaml({"k": "'" * length + " x"})


def _strings(rng: random.Random, size: int) -> str:
    alphabet = [
        *"abcyYnN01289 .:#-?'\"[]{},&*!|>%@`\n~=<+_/\\",
        "é",
        "\n\n",
        ": ",
        " #",
        "echo $X\n",
        "  x\n",
        "\t",
        "\xa0",
        "\ufeff",
        "😀",
        "\x85",
        "\u2028",
        "---",
        "...",
        "null",
        "yes",
        "0x1",
        "1e3",
        "2001-01-01",
        "2001-1-1 1:00:00",
    ]
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, size)))


def _value(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth > 4 or roll < 0.5:
        return rng.choice(
            [
                _strings(rng, 10),
                _strings(rng, 3),
                rng.randint(-5, 10**12),
                True,
                False,
                None,
                {},
                [],
                "x\ny\n",
                rng.uniform(-1e6, 1e6),
                10.0 ** rng.randint(-320, 308),
                float(rng.randint(-9, 9)),
            ]
        )
    if roll < 0.75:
        return {
            _strings(rng, 4) if rng.random() < 0.3 else f"key{rng.randint(0, 9)}": _value(rng, depth + 1)
            for _ in range(rng.randint(1, 4))
        }
    return [_value(rng, depth + 1) for _ in range(rng.randint(1, 4))]


def test_the_writer_agrees_with_pyyaml_on_generated_objects() -> None:
    rng = random.Random(0)
    written = sum(writes_as_pyyaml(value) for value in ({"a": _value(rng, 0)} for _ in range(4000)))
    assert written > 1000
