"""mpigen.records.Record and mpigen.tree: the vocabulary's records and JSON-tree copies."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mpigen import tree
from mpigen.plan import Hostnames
from mpigen.records import Record

ROOT = Path(__file__).resolve().parents[3]


class Point(Record):
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()


class Labelled(Point):
    label: str = ""


def test_fields_are_the_annotations_in_order_with_the_class_attributes_as_defaults() -> None:
    assert Point._fields == ("x", "y", "tags")
    assert Labelled._fields == ("x", "y", "tags", "label")  # a subclass's fields follow its base's
    point = Point(1, tags=("a",))
    assert (point.x, point.y, point.tags) == (1, 0, ("a",))
    assert Labelled(2, 3, label="l").label == "l"


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((), {}, "Point: missing x"),
        ((1, 2, (), 4), {}, "Point takes 3 fields, got 4"),
        ((1,), {"x": 2}, "Point: a field twice: 'x'"),
        ((1,), {"z": 2}, "Point: no such field: 'z'"),
    ],
)
def test_a_record_made_wrong_is_a_type_error(
    args: tuple[Any, ...], kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(TypeError) as caught:
        Point(*args, **kwargs)
    assert str(caught.value) == message


def test_a_record_is_a_value_set_once() -> None:
    point = Point(1, 2)
    with pytest.raises(AttributeError, match="Point is a record"):
        point.x = 3  # type: ignore[misc]
    assert point == Point(1, 2) != Point(1, 3)
    assert point != Labelled(1, 2)  # another class: not equal, though its fields match
    assert point.replace(y=5) == Point(1, 5) and point == Point(1, 2)
    with pytest.raises(TypeError, match="no such field: 'z'"):
        point.replace(z=1)
    assert repr(Labelled(1, label="a")) == "Labelled(x=1, y=0, tags=(), label='a')"
    with pytest.raises(TypeError):
        hash(point)  # records hold dicts and lists: no hash, as dicts have none


def test_the_plans_records_keep_their_defaults() -> None:
    assert Hostnames() == Hostnames(
        fqdn=False, cluster_domain=None, slot_syntax="slots=", launcher_first=False
    )


def test_a_tree_copy_shares_no_mapping_or_list() -> None:
    shared = [1, {"a": None}]
    original: dict[str, Any] = {"a": shared, "b": shared, "c": {"d": [None, "x"]}}
    copied = tree.copy(original)
    assert copied == original
    copied["a"][1]["a"] = 2
    copied["c"]["d"].append(1)
    assert original == {"a": shared, "b": shared, "c": {"d": [None, "x"]}} and shared == [1, {"a": None}]
    assert copied["b"] == [1, {"a": None}]  # a list met twice is copied twice


def test_without_nulls_drops_null_keys_and_keeps_null_items() -> None:
    original = {"a": None, "b": [None, {"c": None, "d": 1}], "e": {"f": None}}
    assert tree.without_nulls(original) == {"b": [None, {"d": 1}], "e": {}}
    assert original["a"] is None  # the original is untouched


REFERENCE_CHECK = """
import dataclasses, sys
from mpigen.plan import Hostnames, JobPlan
print(dataclasses.is_dataclass(JobPlan), dataclasses.is_dataclass(Hostnames))
plain = Hostnames()
assert plain.replace(fqdn=True) == Hostnames(fqdn=True) != plain
try:
    plain.fqdn = True
except AttributeError:  # a frozen dataclass's FrozenInstanceError is one
    pass
else:
    sys.exit("assigned to a record")
"""


@pytest.mark.parametrize("switch", ["0", "1"])
def test_a_record_is_plain_code_whatever_the_reference_switch(fresh_python: str, switch: str) -> None:
    """`Record` is mpigen's own small class, not a stand-in for `dataclasses`: MPIGEN_REFERENCE leaves it
    as it is, a value set once."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPIGEN_REFERENCE": switch}
    done = subprocess.run(
        [fresh_python, "-c", REFERENCE_CHECK], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False False"
