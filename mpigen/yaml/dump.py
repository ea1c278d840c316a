"""Emit: the only serialisation code. Objects to a YAML stream or to a JSON `v1` List.

YAML: block style, `---` between documents, a final newline, `|` for multi-line strings, and strings
kubectl (go-yaml v2) or a YAML 1.1 or 1.2 reader would take for something else quoted (`'y'`, `'0123'`,
`'1e3'`, `'12:30'`): the emitter is PyYAML's, itself YAML 1.1, with libyaml when present (about ten
times faster than pure Python). JSON: a `v1` List, as `kubectl get -o json` prints several objects.
"""

from __future__ import annotations

import json
from typing import Any

from mpigen.yaml import _fast_emit as emitfast
from mpigen.yaml._fast_emit import ambiguous

_DUMPER: Any = None
_STR, _INT, _BOOL, _NULL = (f"tag:yaml.org,2002:{name}" for name in ("str", "int", "bool", "null"))
_MAP, _SEQ = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"
_RESOLVED_MAX = 100_000


def _style(value: str) -> str | None:
    return "|" if "\n" in value else ("'" if ambiguous(value) else None)


def _dumper() -> Any:
    global _DUMPER
    if _DUMPER is None:
        # deferred: PyYAML (its import is a third of a start-up) only for what mpigen.yaml._fast_emit cannot
        # write
        import yaml
        from yaml.nodes import MappingNode, ScalarNode, SequenceNode

        base = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
        resolved: dict[tuple[Any, Any], Any] = {}

        def node(dumper: Any, value: Any) -> Any:
            # The node PyYAML's SafeRepresenter (with represent_str below, block style, no aliases) makes
            # of the types builders produce, without its per-value dispatch; anything else goes to it.
            kind = type(value)
            if kind is str:
                return ScalarNode(_STR, value, style=_style(value))
            if kind is dict:
                return MappingNode(
                    _MAP, [(node(dumper, k), node(dumper, v)) for k, v in value.items()], flow_style=False
                )
            if kind is list:
                return SequenceNode(_SEQ, [node(dumper, item) for item in value], flow_style=False)
            if kind is bool:
                return ScalarNode(_BOOL, "true" if value else "false")
            if kind is int:
                return ScalarNode(_INT, str(value))
            if value is None:
                return ScalarNode(_NULL, "null")
            return dumper.represent_data(value)

        class Dumper(base):  # type: ignore[misc, valid-type]
            def ignore_aliases(self, data: Any) -> bool:
                return True  # never &id001 / *id001: every object is written out in full

            def represent(self, data: Any) -> None:
                self.serialize(node(self, data))
                self.represented_objects: dict[Any, Any] = {}
                self.object_keeper: list[Any] = []
                self.alias_key = None

            def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
                # The serializer asks for the implicit tag of every scalar twice; the answer depends on
                # the value alone (SafeDumper has no path resolvers), and the same values recur.
                if kind is not ScalarNode:
                    return super().resolve(kind, value, implicit)
                key = (value, implicit)
                tag = resolved.get(key)
                if tag is None:
                    if len(resolved) > _RESOLVED_MAX:
                        resolved.clear()  # a long-lived process keeps at most this many
                    tag = resolved[key] = super().resolve(kind, value, implicit)
                return tag

        def represent_str(dumper: Any, value: str) -> Any:
            return dumper.represent_scalar(_STR, value, style=_style(value))

        Dumper.add_representer(str, represent_str)
        _DUMPER = Dumper
    return _DUMPER


def to_yaml(objects: list[dict[str, Any]]) -> str:
    """A YAML stream: one document per object, `---` between them; empty for no objects."""
    docs = [emitfast.dump(obj) or _dump(obj) for obj in objects]
    return "---\n".join(docs)


def to_yaml_items(objects: list[dict[str, Any]]) -> str:
    """The objects as the items of a top-level block sequence (`- ` before each, the rest indented by
    two), as a KRM ResourceList holds them: each reads as `to_yaml` writes it. Empty for no objects."""
    if not objects:
        return ""
    return emitfast.dump(objects) or _dump(objects)


def _dump(value: Any) -> str:
    """PyYAML's emitter, for what mpigen.yaml._fast_emit cannot tell."""
    # deferred: PyYAML only for what mpigen.yaml._fast_emit cannot write
    import yaml

    text: str = yaml.dump(
        value, Dumper=_dumper(), default_flow_style=False, sort_keys=False, allow_unicode=True, width=1 << 16
    )
    return text


def to_json(objects: list[dict[str, Any]]) -> str:
    """A `v1` List holding the objects, indented like kubectl's JSON."""
    document = {"apiVersion": "v1", "kind": "List", "items": objects}
    return json.dumps(document, indent=4, ensure_ascii=False) + "\n"


FORMATS = {"yaml": to_yaml, "json": to_json}
