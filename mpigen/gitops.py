"""Committed renders: one file per object (`render --output-dir`) and staleness checks (`render --check`).

File names follow `kustomize build -o DIR`: `[<group>_]<version>_<kind>_<name>.yaml`, lower case, so a
render diffs cleanly in review and a file keeps its name from one render to the next. Objects in a
namespace get it as a prefix (`<namespace>_...`) so that jobs of the same name in two namespaces do not
share a file.

`files_for` and `diff_files` are pure; the file I/O (`replace_directory`, `read_rendered`) is the render
shell's, in mpigen/shells/outdir.py. A directory is only ever replaced whole, and only if it holds nothing but files mpigen writes:
the new render is written beside it and swapped in, so no stale file survives and an error leaves the
old render untouched.
"""

from __future__ import annotations

import difflib
import os
import re
from typing import Any

from mpigen.emit import FORMATS

# What `--output-dir` writes: lower-case parts joined by "_", ending .yaml or .json.
RENDERED_FILE = re.compile(r"[a-z0-9.-]+(_[a-z0-9.-]+){2,4}\.(yaml|json)\Z")


class RenderDirError(Exception):
    """The output directory cannot be replaced or read; the message says why."""


def file_name(obj: dict[str, Any], extension: str) -> str:
    group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
    meta = obj.get("metadata") or {}
    parts = [meta.get("namespace"), group, version, obj.get("kind"), meta.get("name")]
    return "_".join(str(part).lower().replace("/", "-") for part in parts if part) + "." + extension


def files_for(objects: list[dict[str, Any]], output: str) -> dict[str, str]:
    """{file name: contents}, one file per object, in the emitter's format; raises RenderDirError when
    two objects would share a name."""
    files: dict[str, str] = {}
    for obj in objects:
        name = file_name(obj, output)
        if not RENDERED_FILE.match(name):
            raise RenderDirError(f'cannot name a file for {obj.get("kind")} "{(obj.get("metadata") or {}).get("name")}": it needs apiVersion, kind and metadata.name')
        if name in files:
            raise RenderDirError(f"two objects would be written to {name}: the inputs hold the same object twice")
        text = FORMATS[output]([obj])
        files[name] = text if output == "yaml" else _single_json(obj)
    return dict(sorted(files.items()))


def _single_json(obj: dict[str, Any]) -> str:
    import json

    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def diff_files(committed: dict[str, str], rendered: dict[str, str], root: str) -> str:
    """A unified diff from the committed files to the fresh render ("" when they are the same)."""
    out: list[str] = []
    for name in sorted(committed.keys() | rendered.keys()):
        old, new = committed.get(name), rendered.get(name)
        if old == new:
            continue
        path = os.path.join(root, name) if root else name
        out += difflib.unified_diff(
            (old or "").splitlines(keepends=True),
            (new or "").splitlines(keepends=True),
            fromfile=path if old is not None else "/dev/null",
            tofile=path if new is not None else "/dev/null",
        )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in out)
