"""mpigen.records: `@record` classes behave as the equivalent `@dataclass` classes do (construction,
repr, equality, hashing, frozen refusal), and fields/defaults/replace read and copy them."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import pytest

from mpigen.errors import MAX_ISSUES_PER_JOB, CompileError, Issue
from mpigen.options import Options
from mpigen.records import FrozenRecordError, defaults, field, fields, record, replace


@record(frozen=True)
class Point:
    x: int
    y: int = 0
    label: str | None = None
    unit: ClassVar[str] = "m"

    @property
    def norm(self) -> int:
        return abs(self.x) + abs(self.y)


@dataclasses.dataclass(frozen=True)
class DataPoint:
    x: int
    y: int = 0
    label: str | None = None
    unit: ClassVar[str] = "m"


@record
class Bag:
    name: str
    items: list[int] = field(default_factory=list)
    count: int = 0


@dataclasses.dataclass
class DataBag:
    name: str
    items: list[int] = dataclasses.field(default_factory=list)
    count: int = 0


def test_init_takes_the_fields_in_order_positionally_or_by_keyword_with_their_defaults() -> None:
    assert (Point(1).x, Point(1).y, Point(1).label) == (1, 0, None)
    assert Point(1, 2, "a") == Point(label="a", y=2, x=1)
    assert fields(Point) == ("x", "y", "label") == tuple(f.name for f in dataclasses.fields(DataPoint))
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1, z=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1, 2, "a", 4)  # type: ignore[call-arg]


@pytest.mark.parametrize(("made", "reference"), [
    (Point(1), DataPoint(1)),
    (Point(-3, 4, "it's\n"), DataPoint(-3, 4, "it's\n")),
    (Bag("b", [1, 2], 3), DataBag("b", [1, 2], 3)),
    (Bag("b"), DataBag("b")),
])
def test_repr_is_the_text_dataclasses_writes(made: Any, reference: Any) -> None:
    assert repr(made) == repr(reference).replace("Data", "", 1)


def test_options_repr_is_the_text_of_the_former_dataclass() -> None:
    assert repr(Options()).startswith("Options(gpus_per_node=8, processing_units_per_node=1, processing_resource_type='nvidia.com/gpu', ")
    assert repr(Options(namespace="ml")).endswith(", cluster_domain=None, ssh_secret=None, network_policy=None, target='operator')")


def test_equality_is_same_class_and_same_fields() -> None:
    assert Point(1, 2) == Point(1, 2)
    assert Point(1, 2) != Point(2, 1)
    assert Point(1) != DataPoint(1)
    assert Point(1) != (1, 0, None)
    assert Bag("a", [1]) == Bag("a", [1]) != Bag("a", [2])


def test_a_frozen_record_hashes_its_fields_and_an_other_is_unhashable() -> None:
    assert hash(Point(1, 2)) == hash(Point(1, 2)) == hash((1, 2, None))
    assert len({Point(1), Point(1), Point(2)}) == 2
    assert Options() in {Options()}
    with pytest.raises(TypeError):
        hash(Bag("a"))


def test_a_frozen_record_refuses_assignment_and_deletion() -> None:
    point = Point(1)
    with pytest.raises(FrozenRecordError, match="cannot assign to field 'x'"):
        point.x = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        point.other = 2  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match="cannot delete field 'y'"):
        del point.y
    assert point == Point(1)


def test_a_record_that_is_not_frozen_may_change() -> None:
    bag = Bag("a")
    bag.count += 1
    bag.items.append(1)
    assert bag == Bag("a", [1], 1)


def test_a_default_factory_gives_each_record_its_own_value() -> None:
    first, second = Bag("a"), Bag("b")
    first.items.append(1)
    assert second.items == []
    assert "items" not in Bag.__dict__  # no shared class attribute, as dataclasses


@pytest.mark.parametrize("default", [[], {}, set()])
def test_a_mutable_default_is_refused_when_the_class_is_made(default: Any) -> None:
    with pytest.raises(TypeError, match="mutable default .* for field items is not allowed: use default_factory"):
        record(type("Broken", (), {"__annotations__": {"items": "list[int]"}, "items": default}))


def test_a_field_without_default_after_one_with_is_refused() -> None:
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument 'a'"):
        record(type("Broken", (), {"__annotations__": {"a": "int", "b": "int"}, "a": 1}))


def test_class_variables_properties_and_methods_stay_as_they_are() -> None:
    assert Point.unit == "m" and Point(3, -4).norm == 7
    assert Options(gang_scheduler="volcano").effective_scheduler_name == "volcano"
    assert Point.__match_args__ == ("x", "y", "label")
    match Point(1, 2):
        case Point(x, y):
            assert (x, y) == (1, 2)


def test_replace_makes_a_new_record_with_the_changes() -> None:
    point = Point(1, 2, "a")
    assert replace(point, y=5) == Point(1, 5, "a")
    assert point == Point(1, 2, "a")
    assert Options().replace(namespace="ml", gpus_per_node=4) == Options(namespace="ml", gpus_per_node=4)
    with pytest.raises(TypeError):
        Options().replace(no_such_option=1)


def test_fields_and_defaults_read_a_record_class_or_record() -> None:
    assert fields(Point(1)) == fields(Point)
    assert defaults(Point) == {"y": 0, "label": None}
    assert defaults(Bag) == {"items": [], "count": 0}
    assert defaults(Options) == {name: getattr(Options(), name) for name in fields(Options)}
    with pytest.raises(TypeError):
        fields(DataPoint)


def test_compile_error_keeps_its_attributes_equality_and_truncation() -> None:
    issue = Issue(("spec",), "missing")
    error = CompileError([issue], name="pi")
    assert (error.issues, error.kind, error.name, error.warnings) == ([issue], "MPIJob", "pi", [])
    assert str(error) == "MPIJob/pi: spec: missing" == error.args[0]
    assert error == CompileError([issue], "MPIJob", "pi", []) != CompileError([issue], name="other")
    assert repr(error) == f"CompileError(issues=[{issue!r}], kind='MPIJob', name='pi', warnings=[])"
    with pytest.raises(TypeError):
        hash(error)
    many = CompileError([issue] * (MAX_ISSUES_PER_JOB + 5))
    assert len(many.issues) == MAX_ISSUES_PER_JOB + 1
    assert many.issues[-1] == Issue((), f"and 5 more problems (the first {MAX_ISSUES_PER_JOB} are shown)")
