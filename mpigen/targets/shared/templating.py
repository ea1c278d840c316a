"""Templating: render the small files that end up inside pods (scripts, hostfile) with jinja2.

Only files that a container reads are templated, never Kubernetes manifests. Every value is computed
in Python before it reaches a template; anything that reaches a shell is a validated DNS-1123 name, a
number, or passed through `shell_quote`. Templates live in the top-level `templates/` folder, shipped
as the resource package `mpigen.templates`, and compiled into Python functions by tools/templategen.py.
"""

from __future__ import annotations

import shlex
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from mpigen.targets.shared._fast_templates import render as compiled

if TYPE_CHECKING:
    import jinja2


def shell_quote(value: object) -> str:
    """Quote a value for a POSIX shell (single quotes; no expansion inside)."""
    return shlex.quote(str(value))


@lru_cache(maxsize=1)
def jinja_environment() -> jinja2.Environment:
    """The templates' jinja2 environment: the source of truth for what a template renders to. A render
    uses the templates compiled from it into Python (mpigen/targets/shared/_fast_templates.py, written by
    tools/templategen.py), so it neither imports jinja2 nor compiles a template."""
    # deferred: the template files (importlib.resources, with pathlib) only for the reference templates
    from importlib import resources

    # deferred: jinja2 only for the reference templates (tools/templategen.py, MPIGEN_REFERENCE); a render
    # uses the compiled ones
    import jinja2

    def load(name: str) -> str:
        return resources.files("mpigen.templates").joinpath(name).read_text(encoding="utf-8")

    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(load),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["q"] = shell_quote
    return env


def render(template: str, **values: Any) -> str:
    """Render `templates/<template>` with exactly these values (a missing one is an error): the template
    compiled into Python, else (MPIGEN_REFERENCE=1) jinja2 itself."""
    return compiled(template, values) or jinja_environment().get_template(template).render(**values)
