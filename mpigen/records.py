"""Records: classes of named fields, given once when made and read as attributes. Pure.

mpigen's internal records (the job plan, an input's replicas, a command's parsed call) were NamedTuples.
`typing.NamedTuple` makes each class through `collections.namedtuple`, which compiles the class's
constructor from source: about 0.15 ms a class, and a one-job render makes twenty of them at import,
a tenth of its start-up. A `Record` subclass costs what any class costs to make (about 0.01 ms): its
fields are its annotations, in order, with the class attributes as defaults, and one constructor
shared by every record reads them. For the type checker it is a frozen dataclass
(`typing.dataclass_transform`), so a record is made and read with its fields' types checked, and
never assigned to.

`Record` is plain code, not a stand-in: a render does without `dataclasses` (and the `inspect` it
imports), and the reference switch (mpigen.reference) leaves records as they are.

A record is not a tuple: no indexing, no unpacking, no order. Two records are equal when they are of
the same class with equal fields; `record.replace(field=value)` is a copy with a field changed. The public values (`mpigen.Options`, `mpigen.Issue`) stay NamedTuples.
"""

from __future__ import annotations

from typing import Any, ClassVar, Self, dataclass_transform

__all__ = ["Record"]


@dataclass_transform(frozen_default=True)
class Record:
    """Subclass and annotate the fields (`name: str`, `workers: int = 1`); every instance attribute is
    one of them."""

    _fields: ClassVar[tuple[str, ...]] = ()
    _required: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields = [name for klass in reversed(cls.__mro__) for name in vars(klass).get("__annotations__", {})]
        cls._fields = tuple(name for name in dict.fromkeys(fields) if not name.startswith("_"))
        cls._required = frozenset(name for name in cls._fields if not hasattr(cls, name))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = self._fields
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__} takes {len(fields)} fields, got {len(args)}")
        values = dict(zip(fields, args, strict=False))
        for name, value in kwargs.items():
            if name not in fields or name in values:
                problem = "a field twice" if name in values else "no such field"
                raise TypeError(f"{type(self).__name__}: {problem}: {name!r}")
            values[name] = value
        missing = self._required - values.keys()
        if missing:
            raise TypeError(f"{type(self).__name__}: missing {', '.join(sorted(missing))}")
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def replace(self, **changes: Any) -> Self:
        """A copy with `changes` to its fields (TypeError for a name that is no field)."""
        return type(self)(**{name: getattr(self, name) for name in self._fields} | changes)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is a record: its fields are set when it is made")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self._fields)

    __hash__ = None  # type: ignore[assignment]  # records hold dicts and lists

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({shown})"
