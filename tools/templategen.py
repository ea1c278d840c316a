"""Compiled templates: templates/*.j2 as plain Python functions, in mpigen/targets/shared/_fast_templates.py.

Each template is parsed by jinja2 with mpigen's own settings (`mpigen.targets.shared.templating.jinja_environment`:
trim_blocks, lstrip_blocks, keep_trailing_newline, so the whitespace is settled by the parse) and its
tree written out as a function of one mapping of values. The templates use text, `{{ value }}`,
`{{ value | q }}`, `{% for x in xs %}` and `{% if value %}` only (docs: STYLE.md, "at most one loop per template"); anything
else is refused here, so a new construct needs its translation first. A render then imports neither
jinja2 nor compiles a template; tests/unit/shells/test_startup.py checks the file is current and renders like
jinja2.

A developer tool, not part of the installed package; run from the repository's top:

    python tools/templategen.py            rewrite mpigen/targets/shared/_fast_templates.py
    python tools/templategen.py --check    exit 1 if it is stale
"""

from __future__ import annotations

import sys
from pathlib import Path

from jinja2 import nodes

from mpigen.targets.shared.templating import jinja_environment

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "templates"
TARGET = ROOT / "mpigen" / "targets" / "shared" / "_fast_templates.py"
REGENERATE = "python tools/templategen.py"

HEADER = '''"""The templates of templates/*.j2 as Python functions, written by tools/templategen.py: do not edit.

Each function renders its template exactly as jinja2 does with mpigen's settings
(`mpigen.targets.shared.templating.jinja_environment`); `TEMPLATES` maps a template's file name to it. A missing value
raises KeyError, as StrictUndefined raises in jinja2; `| q` is `shlex.quote(str(value))`, as the
environment's filter `mpigen.targets.shared.templating.shell_quote`. A stand-in for jinja2
(mpigen.reference.STAND_INS): `render` declines under the reference switch.
"""

from __future__ import annotations

from collections.abc import Callable
from shlex import quote
from typing import Any

from mpigen.reference import stand_in


'''


RENDER = '''

@stand_in
def render(template: str, values: dict[str, Any]) -> str:
    """`template` rendered with `values` by its compiled function."""
    return TEMPLATES[template](values)
'''


class _Writer:
    def __init__(self, name: str) -> None:
        self.name = name
        self.lines: list[str] = []
        self.locals: set[str] = set()

    def expr(self, node: nodes.Node) -> str:
        if isinstance(node, nodes.Name):
            return node.name if node.name in self.locals else f"values[{node.name!r}]"
        if (
            isinstance(node, nodes.Filter)
            and node.name == "q"
            and not (node.args or node.kwargs or node.dyn_args or node.dyn_kwargs)
        ):
            assert node.node is not None
            return f"quote(str({self.expr(node.node)}))"  # mpigen.targets.shared.templating.shell_quote
        raise SystemExit(
            f"templates/{self.name}: {type(node).__name__} is not translated (tools/templategen.py)"
        )

    def body(self, body: list[nodes.Node], indent: str) -> None:
        for node in body:
            if isinstance(node, nodes.Output):
                for part in node.nodes:
                    if isinstance(part, nodes.TemplateData):
                        self.text(part.data, indent)
                    else:
                        self.lines.append(f"{indent}out.append(str({self.expr(part)}))")
            elif isinstance(node, nodes.For) and self._plain_loop(node):
                assert isinstance(node.target, nodes.Name)
                self.lines.append(f"{indent}for {node.target.name} in {self.expr(node.iter)}:")
                self.locals.add(node.target.name)
                self.body(node.body, indent + "    ")
                self.locals.discard(node.target.name)
            elif isinstance(node, nodes.If):
                self.branch(node, indent, "if")
            else:
                raise SystemExit(
                    f"templates/{self.name}: {type(node).__name__} is not translated (tools/templategen.py)"
                )

    def branch(self, node: nodes.If, indent: str, keyword: str) -> None:
        """`{% if %}`, `{% elif %}` and `{% else %}`: jinja2 tests a value's Python truth, as `if` does."""
        self.lines.append(f"{indent}{keyword} {self.expr(node.test)}:")
        self.block(node.body, indent + "    ")
        for other in node.elif_:
            self.branch(other, indent, "elif")
        if node.else_:
            self.lines.append(f"{indent}else:")
            self.block(node.else_, indent + "    ")

    def block(self, body: list[nodes.Node], indent: str) -> None:
        """The statements of a branch; `pass` when it writes nothing."""
        before = len(self.lines)
        self.body(body, indent)
        if len(self.lines) == before:
            self.lines.append(f"{indent}pass")

    def text(self, data: str, indent: str) -> None:
        """A literal, one source line per line of text, so that a template's diff reads as one here."""
        lines = data.splitlines(keepends=True)
        if len(lines) == 1:
            self.lines.append(f"{indent}out.append({data!r})")
            return
        self.lines.append(f"{indent}out.append(")
        self.lines += [f"{indent}    {line!r}" for line in lines]
        self.lines.append(f"{indent})")

    def _plain_loop(self, node: nodes.For) -> bool:
        target = node.target
        plain = isinstance(target, nodes.Name) and not node.else_ and node.test is None and not node.recursive
        return plain and isinstance(target, nodes.Name) and target.name not in self.locals


def function_name(template: str) -> str:
    return "render_" + template.removesuffix(".j2").replace(".", "_").replace("-", "_")


def translate(template: str, source: str) -> str:
    """One template as the source of a Python function."""
    tree = jinja_environment().parse(source)
    writer = _Writer(template)
    writer.body(tree.body, "    ")
    head = f"def {function_name(template)}(values: dict[str, Any]) -> str:\n    out: list[str] = []\n"
    return head + "\n".join(writer.lines) + ("\n" if writer.lines else "") + '    return "".join(out)\n'


def generate() -> str:
    names = sorted(path.name for path in TEMPLATES.glob("*.j2"))
    functions = [translate(name, (TEMPLATES / name).read_text(encoding="utf-8")) for name in names]
    table = "".join(f"    {name!r}: {function_name(name)},\n" for name in names)
    return (
        HEADER
        + "\n\n".join(functions)
        + "\n\nTEMPLATES: dict[str, Callable[[dict[str, Any]], str]] = {\n"
        + table
        + "}\n"
        + RENDER
    )


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        if not TARGET.is_file() or TARGET.read_text(encoding="utf-8") != generate():
            print(f"stale: {TARGET.relative_to(ROOT)}; run {REGENERATE}", file=sys.stderr)
            return 1
        return 0
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    TARGET.write_text(generate(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
